// Package minikafka embeds a single-node, Kafka-wire-compatible broker in
// a Go program or test.
//
//	b, err := minikafka.Start(ctx,
//		minikafka.WithDataDir("./data"),
//		minikafka.WithListenAddr("127.0.0.1:0"),
//		minikafka.WithTopic("orders", 3))
//	if err != nil {
//		return err
//	}
//	defer b.Close()
//	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...))
//
// Start returns once the data dir is recovered (every partition log
// checked, torn tails truncated) and the listener is bound; clients may
// connect as soon as it returns. With port 0 the broker advertises the port
// it actually bound. Close stops accepting, answers the requests already
// read, then flushes and closes the storage; it is idempotent.
//
// A data dir is locked (flock on its .lock file) while a broker uses it;
// a second Start on it fails with ErrDataDirLocked. The kernel drops the
// lock when the process dies, so a crash leaves nothing to clean up.
//
// Without WithDataDir the broker keeps everything in memory. With a data dir
// the durability policy defaults to "always": a produce with acks=all is
// answered only once its bytes are fsynced.
//
// The pieces: package protocol is the wire server (frames, headers,
// pipelining), package broker implements the Kafka APIs on top of logstore
// (partition logs) and groupstore (committed offsets). For tests, package
// minikafkatest starts a broker per test and hands out ready clients; the
// minikafka command (cmd/minikafka) runs one from the shell.
package minikafka
