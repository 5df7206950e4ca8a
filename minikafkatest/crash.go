package minikafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
)

// crashDataDir is the data dir inside a Crashable's in-memory filesystem.
const crashDataDir = "/data"

// Crashable is a broker whose storage is an in-memory filesystem that
// models power loss: Crash keeps only what was fsynced.
type Crashable struct {
	*minikafka.Broker
	t    testing.TB
	fs   *vfs.MemFS
	opts []minikafka.Option
}

// NewCrashable starts a broker like New, but with its data in a
// crash-simulating in-memory filesystem and durability "always" unless an
// option says otherwise.
func NewCrashable(t testing.TB, opts ...minikafka.Option) *Crashable {
	t.Helper()
	c := &Crashable{t: t, fs: vfs.NewMem(), opts: opts}
	c.Broker = c.start("127.0.0.1:0")
	return c
}

func (c *Crashable) start(listen string) *minikafka.Broker {
	c.t.Helper()
	all := append([]minikafka.Option{
		minikafka.WithListenAddr(listen),
		minikafka.WithFS(c.fs),
		minikafka.WithDataDir(crashDataDir),
		minikafka.WithGroupInitialRebalanceDelay(0),
		minikafka.WithGroupMinSessionTimeout(time.Millisecond),
		minikafka.WithDurability("always"),
		waitBound(c.t),
	}, c.opts...)
	b, err := minikafka.Start(context.Background(), all...)
	if err != nil {
		c.t.Fatalf("minikafkatest: starting broker: %v", err)
	}
	c.t.Cleanup(func() {
		// A crashed broker's Close fails (its fsyncs fail after the power
		// cut); only the broker still serving must close cleanly.
		if err := b.Close(); err != nil && b == c.Broker {
			c.t.Errorf("minikafkatest: closing broker: %v", err)
		}
	})
	return b
}

// Crash simulates a power loss: the filesystem is cut back to what was
// fsynced at this instant, the old broker is stopped (what it writes after
// the cut is lost, and its fsyncs fail from the cut on, so it cannot
// acknowledge anything the survivors lack), and a new broker starts on the
// survivors, on the same port, so clients reconnect to it as they would to
// a rebooted machine.
func (c *Crashable) Crash() {
	c.t.Helper()
	clone := c.fs.PowerCut()
	old := c.Broker
	old.Close()
	c.fs = clone
	c.Broker = c.start(old.ListenAddr().String())
}
