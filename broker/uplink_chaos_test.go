package broker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/minikafkatest"
)

// TestUplinkChaos is the end-to-end test, scaled to run in seconds:
// records are produced locally while the upstream is stopped and restarted
// (same port, same data dir) and the local broker loses power twice. The
// upstream must end with every record, in order per partition; the first
// half, produced without a local crash, must arrive exactly once.
// MINIKAFKA_UPLINK_FULL=1 runs the full size: 1 000 000 records, 5 upstream
// restarts, 2 local crashes.
func TestUplinkChaos(t *testing.T) {
	n, restarts := 50_000, 4
	if os.Getenv("MINIKAFKA_UPLINK_FULL") != "" {
		n, restarts = 1_000_000, 5
	}
	const parts = 4
	const topic = "chaos"
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward(topic),
		minikafka.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		minikafka.WithTopic(topic, parts))
	cl := minikafkatest.Client(t, local.b, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(1<<30), kgo.UnknownTopicRetries(-1), kgo.MaxBufferedRecords(20000),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	ctx := context.Background()

	var produced atomic.Int64
	var failed atomic.Int64
	// produce sends records [from, to) in the background; value i goes to
	// partition i % parts, so each partition's expected order is known.
	produce := func(from, to int) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := from; i < to; i++ {
				r := &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("%09d", i))}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err != nil && failed.Add(1) == 1 {
						t.Logf("local produce failed: %v", err)
					}
				})
				produced.Add(1)
			}
			if err := cl.Flush(ctx); err != nil {
				failed.Add(1)
			}
		}()
		return done
	}
	// at waits until count records were handed to the producer.
	at := func(count int) {
		for produced.Load() < int64(count) {
			time.Sleep(time.Millisecond)
		}
	}
	restartUpstream := func() {
		up.Stop()
		time.Sleep(150 * time.Millisecond) // the spool grows meanwhile
		up.Start()
	}
	drained := func(what string) {
		waitFor(t, 60*time.Second, what, func() bool {
			st := local.b.ForwardStats()
			for _, s := range st {
				if s.Lag != 0 {
					return false
				}
			}
			return len(st) == parts
		})
	}

	// Phase 1: upstream restarts only.
	half := n / 2
	done := produce(0, half)
	r1 := restarts / 2
	for k := 1; k <= r1; k++ {
		at(half * k / (r1 + 1))
		restartUpstream()
	}
	<-done
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d local produces failed", f)
	}
	drained("phase 1 forwarded")
	checkUpstream(t, up.addr, topic, parts, half, true)

	// Phase 2: upstream restarts and two local power losses.
	done = produce(half, n)
	events := []string{"up", "crash", "up", "crash"}
	for k := r1; k < restarts-2; k++ {
		events = append(events, "up")
	}
	for k, e := range events {
		at(half + half*(k+1)/(len(events)+1))
		if e == "up" {
			restartUpstream()
		} else {
			t.Logf("local crash with %+v", local.b.ForwardStats())
			local.Crash()
		}
	}
	<-done
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d local produces failed", f)
	}
	drained("phase 2 forwarded")
	// Exactly once even across the local crashes: each forwarder resumes
	// as the same upstream producer and resends its in-flight batch as it
	// was, which the upstream recognizes.
	checkUpstream(t, up.addr, topic, parts, n, true)

	// Phase 3: local power cuts while the upstream is up and shipping.
	extra := n / 4
	done = produce(n, n+extra)
	for k := 1; k <= 2; k++ {
		at(n + extra*k/3)
		t.Logf("local crash while shipping with %+v", local.b.ForwardStats())
		local.Crash()
	}
	<-done
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d local produces failed", f)
	}
	drained("phase 3 forwarded")
	checkUpstream(t, up.addr, topic, parts, n+extra, true)
}

// checkUpstream reads the upstream topic and checks that it holds every
// value in [0, n) once per partition in order (exact), or, after a local
// crash, in order of first appearance with duplicates allowed.
func checkUpstream(t *testing.T, addr, topic string, parts int32, n int, exact bool) {
	t.Helper()
	got := readToEnd(t, addr, topic, parts)
	total := 0
	for p := int32(0); p < parts; p++ {
		seen := map[int]bool{}
		next := int(p)
		dups := 0
		for _, r := range got[p] {
			v, err := strconv.Atoi(string(r.Value))
			if err != nil {
				t.Fatalf("partition %d: value %q", p, r.Value)
			}
			if seen[v] {
				dups++
				continue
			}
			if v != next {
				for _, r2 := range got[p] {
					if string(r2.Value) == fmt.Sprintf("%09d", next) {
						t.Logf("want %d is at upstream offset %d; got %d at offset %d", next, r2.Offset, v, r.Offset)
						break
					}
				}
				t.Fatalf("partition %d: got %d (its #%d), want %d (its #%d): %d records missing or out of order", p, v, v/int(parts), next, next/int(parts), (v-next)/int(parts))
			}
			seen[v] = true
			next += int(parts)
		}
		if next < n {
			t.Fatalf("partition %d: stops before %d", p, next)
		}
		if exact && dups > 0 {
			t.Fatalf("partition %d: %d duplicates upstream", p, dups)
		}
		if dups > 0 {
			t.Logf("partition %d: %d duplicates (redelivery after a local crash)", p, dups)
		}
		total += len(seen)
	}
	if total != n {
		t.Fatalf("upstream has %d distinct records, want %d", total, n)
	}
}

// readToEnd reads partitions [0, parts) of topic from the start up to
// their current end offsets.
func readToEnd(t testing.TB, addr, topic string, parts int32) map[int32][]*kgo.Record {
	t.Helper()
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(context.Background(), topic)
	adm.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for p := int32(0); p < parts; p++ {
		e, ok := ends.Lookup(topic, p)
		if !ok || e.Err != nil {
			t.Fatalf("end offset of %s-%d: %v", topic, p, e.Err)
		}
		want += int(e.Offset) // the upstream's offsets start at 0
	}
	return readAll(t, addr, topic, parts, want, 60*time.Second)
}

// crashLocal is a local broker on a crash-simulating in-memory filesystem
// whose power can be cut. Unlike minikafkatest.Crashable it stops every
// response before cutting the filesystem: a broker that lost power sends
// nothing more, and an acknowledgement sent after the cut would promise a
// record the survivor does not have.
type crashLocal struct {
	t      *testing.T
	fs     *vfs.MemFS
	opts   []minikafka.Option
	addr   string
	frozen *atomic.Bool
	uplink *cutDialer
	b      *minikafka.Broker
}

// cutDialer dials the upstream until cut, then refuses, and cut closes
// what it dialed: a broker that lost power ships nothing more either.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("power cut")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cutDialer) cutNow() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		c.Close()
	}
}

func newCrashLocal(t *testing.T, opts ...minikafka.Option) *crashLocal {
	c := &crashLocal{t: t, fs: vfs.NewMem(), opts: opts, addr: "127.0.0.1:0"}
	c.start()
	t.Cleanup(func() { c.b.Close() })
	return c
}

func (c *crashLocal) start() {
	c.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", c.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		c.t.Fatal(err)
	}
	c.addr = ln.Addr().String()
	c.frozen = new(atomic.Bool)
	c.uplink = &cutDialer{}
	all := append([]minikafka.Option{minikafka.WithListener(&freezableListener{ln, c.frozen}),
		minikafka.WithUpstreamClientOpts(kgo.Dialer(c.uplink.dial)),
		minikafka.WithFS(c.fs), minikafka.WithDataDir("/data"), minikafka.WithDurability("always")}, c.opts...)
	if c.b, err = minikafka.Start(context.Background(), all...); err != nil {
		c.t.Fatal(err)
	}
}

// Crash cuts the power: no response leaves after this instant, nothing
// more is shipped upstream, the filesystem keeps only what was fsynced,
// and a new broker starts on the survivors on the same port.
func (c *crashLocal) Crash() {
	c.frozen.Store(true)
	c.uplink.cutNow()
	clone := c.fs.CrashClone()
	c.b.Close()
	c.fs = clone
	c.start()
}

type freezableListener struct {
	net.Listener
	frozen *atomic.Bool
}

func (l *freezableListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &freezableConn{conn, l.frozen}, nil
}

type freezableConn struct {
	net.Conn
	frozen *atomic.Bool
}

func (c *freezableConn) Write(b []byte) (int, error) {
	if c.frozen.Load() {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	return c.Conn.Write(b)
}
