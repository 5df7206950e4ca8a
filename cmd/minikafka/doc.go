// Command minikafka runs a single-node Kafka-compatible broker.
//
//	minikafka [flags]
//
// Every flag can also be set with an environment variable: MINIKAFKA_ and
// the flag name in upper case with '-' as '_' (MINIKAFKA_LISTEN,
// MINIKAFKA_DATA, MINIKAFKA_IN_MEMORY, ...); a flag on the command line wins
// over the environment. Defaults: listen :9092, advertise localhost:9092
// (generally: the listen host, or localhost when listening on every
// interface, and the bound port), data ./data, durability always.
//
// SIGINT or SIGTERM shut the broker down cleanly: requests already read are
// answered, the logs are flushed and closed. Exit status: 0 after a clean
// shutdown, 2 for a bad flag or environment value, 1 when the broker cannot
// start (port in use, unusable data dir) or fails to close cleanly.
package main
