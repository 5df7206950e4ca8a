package minikafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// Client's defaults; see Client.
const (
	ClientMetadataMinAge = 50 * time.Millisecond
	ClientRetryBackoff   = 20 * time.Millisecond
)

// clientBackoff is ClientRetryBackoff doubling per try, at most 8 times
// it: a broker that stays down is not hammered, one that comes back is
// found within ~160 ms.
func clientBackoff(tries int) time.Duration {
	return ClientRetryBackoff << min(max(tries-1, 0), 3)
}

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
		waitBound(t),
		// A schema registry at b.SchemaRegistryURL(); it reads or
		// creates _schemas only when a test uses it.
		minikafka.WithSchemaRegistry("127.0.0.1:0"),
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

// DefaultWaitTimeout bounds each Wait method of a broker from New or
// NewCrashable called with a context without a deadline (such as
// context.Background()); the test's own deadline (go test -timeout) ends
// such a wait sooner if it comes first, a second early so the wait's error,
// which says what it last saw, is reported rather than go test's panic.
// minikafka.WithWaitTimeout given to New overrides both.
const DefaultWaitTimeout = 30 * time.Second

// waitBound is the option for DefaultWaitTimeout and t's deadline.
func waitBound(t testing.TB) minikafka.Option {
	var end time.Time
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, has := d.Deadline(); has {
			end = dl.Add(-time.Second)
		}
	}
	return minikafka.WithWaitTimeout(DefaultWaitTimeout, end)
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
//
// Its defaults suit a broker on loopback that a test injects faults into:
// metadata may be refreshed every ClientMetadataMinAge (kgo waits 5 s, so
// each NOT_LEADER_OR_FOLLOWER cost a produce up to 5 s), and a failed
// request or dial is retried after ClientRetryBackoff, doubling up to 8
// times that (kgo starts at 250 ms and grows to 5 s, so a broker that was
// Down for 500 ms cost seconds). Options given to Client override these.
func Client(t testing.TB, b *minikafka.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{
		kgo.SeedBrokers(b.Addrs()...),
		kgo.MetadataMinAge(ClientMetadataMinAge),
		kgo.RetryBackoffFn(clientBackoff),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("minikafkatest: creating client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}
