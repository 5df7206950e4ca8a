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
// Several named listeners, as Kafka's listeners, advertised.listeners and
// listener.security.protocol.map (a docker-compose network and the host
// each reach the broker under their own name; clients are handed the
// address of the listener they came in on):
//
//	minikafka -listeners 'INTERNAL://:9092,EXTERNAL://:29092' \
//	  -advertised-listeners 'INTERNAL://minikafka:9092,EXTERNAL://localhost:29092' \
//	  -listener-security-protocol-map 'INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL' \
//	  -tls-cert cert.pem -tls-key key.pem -sasl-users-file users
//
// SSL and SASL_SSL listeners use -tls-*, SASL ones the -sasl-* users. A
// listener named after a protocol maps to it; one not in
// -advertised-listeners is advertised as the -advertise default says.
// Without -listeners, -listen is the one listener, named after the
// protocol the security flags select (PLAINTEXT, SSL, SASL_PLAINTEXT,
// SASL_SSL), so -advertised-listeners alone can rename its address, as
// with Kafka's default listeners. -listen with -listeners, and -advertise
// with either new flag, are refused as ambiguous; so are security flags no
// listener uses.
//
// ACLs are enforced with -authorizer (Kafka's StandardAuthorizer), with
// -super-users 'User:admin;User:ops', -allow-everyone-if-no-acl-found and
// -ssl-principal-mapping-rules as Kafka's super.users,
// allow.everyone.if.no.acl.found and ssl.principal.mapping.rules; the
// first two are refused without -authorizer, the rules also name TLS
// clients for quotas. minikafka acl create|list|delete
// manages the ACLs.
//
// SIGINT or SIGTERM shut the broker down cleanly: requests already read are
// answered, the logs are flushed and closed. Exit status: 0 after a clean
// shutdown, 2 for a bad flag or environment value, 1 when the broker cannot
// start (port in use, unusable data dir) or fails to close cleanly.
package main
