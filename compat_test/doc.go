// Package compat (tests in package compat_test) proves minikafka's promise — "point your existing Kafka
// client at it" — with the real clients people use: franz-go (kgo + kadm),
// sarama, kafka-go and confluent-kafka-go as Go modules, and kcat,
// confluent-kafka-python, kafka-python and kafkajs as subprocesses driven from
// the Go tests (the scripts in this directory read a JSON request on stdin and
// print a JSON answer). Apache Kafka's Java client runs from the Maven
// module in java/ (java_test.go), its scenarios written in Java.
//
// Every test starts its own broker (random port, temp dir) and runs each client
// through the same scenarios; each scenario checks every record it produced:
// count, order per partition, key, value, headers, timestamp, and that the
// offset the producer was told is where a consumer finds it. Records produced
// by a client are also read back with kgo, so a client that mis-reads what it
// wrote cannot hide a broker bug (or the other way round).
//
// A client that is not installed fails its test with the install command
// (bash compat_test/install.sh); it is never skipped, except the Java
// client's test on a machine without a JDK or Maven. Scenarios the broker
// does not pass yet sit behind the build tag compatpending and are listed in
// FINDINGS.md.
//
// go test ./compat_test -update-matrix rewrites MATRIX.md and the README's
// compatibility table from the run. kgo_suite.sh runs franz-go's own kgo
// integration tests against a minikafka binary.
package compat
