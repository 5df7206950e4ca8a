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
// groups form at once) and durability "never" (fsync costs time and the
// temp dir does not outlive the test anyway); options given to New override
// these defaults. The broker is closed in t.Cleanup, and a Close error fails
// the test. Clients from Client are closed before their broker.
//
// NewCrashable keeps the broker's data in an in-memory filesystem that
// models power loss; its Crash method cuts the data back to what was
// fsynced and restarts the broker on the same port, for tests of what
// acknowledged writes survive.
package minikafkatest

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// New starts a broker for t; see the package doc for its defaults.
func New(t testing.TB, opts ...minikafka.Option) *minikafka.Broker {
	t.Helper()
	all := append([]minikafka.Option{
		minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithDataDir(t.TempDir()),
		minikafka.WithGroupInitialRebalanceDelay(0),
		minikafka.WithDurability("never"),
	}, opts...)
	b, err := minikafka.Start(context.Background(), all...)
	if err != nil {
		t.Fatalf("minikafkatest: starting broker: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("minikafkatest: closing broker: %v", err)
		}
	})
	return b
}

// Client returns a kgo client seeded with b's address, closed in
// t.Cleanup (before b, since cleanups run last-registered first).
func Client(t testing.TB, b *minikafka.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addrs()...)}, opts...)...)
	if err != nil {
		t.Fatalf("minikafkatest: creating client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}
