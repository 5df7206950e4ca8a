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
