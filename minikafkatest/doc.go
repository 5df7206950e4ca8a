// Package minikafkatest gives each test its own minikafka broker.
//
//	func TestOrders(t *testing.T) {
//		b := minikafkatest.New(t, minikafka.WithTopic("orders", 3))
//		cl := minikafkatest.Client(t, b)
//		...
//	}
//
// New starts a broker on 127.0.0.1 with a free port and a data dir under
// t.TempDir(), with the group initial rebalance delay at 0 (so consumer
// groups form at once), no lower bound on session timeouts (Kafka's is
// 6 s; tests use short ones to see dead members expire) and durability "never" (fsync costs time and the
// temp dir does not outlive the test anyway); options given to New override
// these defaults. A Confluent-compatible schema registry runs beside it at
// b.SchemaRegistryURL() (its _schemas topic is created only when a test
// registers a schema). The broker is closed in t.Cleanup, and a Close error fails
// the test; so does a temp data dir that does not reopen after Close.
// Clients from Client are closed before their broker, and are quick
// through faults: metadata refreshed at most every ClientMetadataMinAge,
// failed requests retried after ClientRetryBackoff (see Client). The
// broker's Wait methods, called with a context that has no deadline, give
// up after DefaultWaitTimeout or just before the test's deadline, with an
// error saying what they last saw.
//
// NewCrashable keeps the broker's data in an in-memory filesystem that
// models power loss; its Crash method cuts the data back to what was
// fsynced and restarts the broker on the same port, for tests of what
// acknowledged writes survive.
//
// NewWithDisk puts the data dir behind a Disk whose switches fail every
// fsync, fill the disk or slow fsyncs, for tests of KAFKA_STORAGE_ERROR.
// Request faults (errors, delays, drops, holds, callbacks) and broker
// down/up are methods of the *minikafka.Broker New returns: AddFault,
// PausePartition, CoordinatorUnavailable, Throttle, SetRTT, Down, Up.
package minikafkatest
