package minikafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// New starts a broker for t; see the package doc for its defaults.
func New(t testing.TB, opts ...minikafka.Option) *minikafka.Broker {
	t.Helper()
	dir := t.TempDir()
	all := append([]minikafka.Option{
		minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithDataDir(dir),
		minikafka.WithGroupInitialRebalanceDelay(0),
		// Tests shorten session timeouts to see dead members expire
		// quickly; Kafka's 6 s floor would refuse them.
		minikafka.WithGroupMinSessionTimeout(time.Millisecond),
		minikafka.WithDurability("never"),
	}, opts...)
	b, err := minikafka.Start(context.Background(), all...)
	if err != nil {
		t.Fatalf("minikafkatest: starting broker: %v", err)
	}
	// Two cleanups, which run in reverse order: Close, then the check
	// that the data dir reopens.
	closed := false
	t.Cleanup(func() {
		if closed && b.DataDir() == dir {
			verifyReopen(t, dir)
		}
	})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("minikafkatest: closing broker: %v", err)
			return
		}
		closed = true
	})
	return b
}

// verifyReopen checks that what Close left behind opens again: storage
// recovery fails loudly on corruption, so this catches a Close that leaves
// the data dir in a state the next start would reject.
func verifyReopen(t testing.TB, dir string) {
	b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir),
		minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithDurability("never"))
	if err != nil {
		t.Errorf("minikafkatest: the data dir does not reopen after Close: %v", err)
		return
	}
	if err := b.Close(); err != nil {
		t.Errorf("minikafkatest: closing the reopened broker: %v", err)
	}
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
