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
// WithListeners serves several named listeners instead of the one of
// WithListenAddr (Kafka's listeners, advertised.listeners and
// listener.security.protocol.map; ParseListeners reads that syntax): each
// has a bind address, an advertised host:port and a security protocol
// (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) using the one WithTLS config
// and WithSASL user set. A client is always handed the advertised address
// of the listener it came in on, so a docker-compose network and the host
// can each reach the broker under their own name:
//
//	minikafka.WithListeners(
//		minikafka.ListenerSpec{Name: "INTERNAL", Addr: ":9092", Advertised: "minikafka:9092", Security: minikafka.Plaintext},
//		minikafka.ListenerSpec{Name: "EXTERNAL", Addr: ":29092", Advertised: "localhost:29092", Security: minikafka.SASLSSL})
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
// minikafkatest starts a broker per test and hands out ready clients, and
// WithFS puts the broker's files on a filesystem the test supplies (a
// wrapper of OSFS that fails or delays what the test chooses); the
// minikafka command (cmd/minikafka) runs one from the shell.
package minikafka
