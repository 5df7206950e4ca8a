package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, opts ...minikafka.Option) *minikafka.Broker {
	t.Helper()
	b, err := minikafka.Start(context.Background(), opts...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func client(t *testing.T, b *minikafka.Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The default broker is in memory on 127.0.0.1 with a free port, and
// Metadata advertises the port actually bound.
func TestStartDefaultsAdvertiseBoundPort(t *testing.T) {
	b := start(t)
	if b.DataDir() != "" {
		t.Fatalf("DataDir %q for the default (in-memory) broker", b.DataDir())
	}
	la := b.ListenAddr().(*net.TCPAddr)
	if la.Port == 0 || !la.IP.IsLoopback() {
		t.Fatalf("listening on %v", la)
	}
	if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(la.Port)); b.Addr() != want || len(b.Addrs()) != 1 || b.Addrs()[0] != want {
		t.Fatalf("Addr %q Addrs %q, want %q", b.Addr(), b.Addrs(), want)
	}
	adm := kadm.NewClient(client(t, b))
	md, err := adm.BrokerMetadata(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Port != int32(la.Port) || md.Brokers[0].Host != "127.0.0.1" {
		t.Fatalf("metadata brokers %+v", md.Brokers)
	}
}

func TestAdvertisedAddr(t *testing.T) {
	b := start(t, minikafka.WithAdvertisedAddr("broker.example:0"), minikafka.WithNodeID(7))
	port := b.ListenAddr().(*net.TCPAddr).Port
	if want := fmt.Sprintf("broker.example:%d", port); b.Addr() != want {
		t.Fatalf("Addr %q, want %q", b.Addr(), want)
	}
	// Bootstrap through the real address; Metadata must name the
	// advertised one.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.ListenAddr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Host != "broker.example" || md.Brokers[0].Port != int32(port) || md.Brokers[0].NodeID != 7 {
		t.Fatalf("metadata brokers %+v", md.Brokers)
	}

	b2 := start(t, minikafka.WithListenAddr("0.0.0.0:0"))
	if host, _, _ := net.SplitHostPort(b2.Addr()); host != "localhost" {
		t.Fatalf("listening on all interfaces advertises %q, want localhost", b2.Addr())
	}
}

func TestInvalidOptions(t *testing.T) {
	for name, opt := range map[string]minikafka.Option{
		"listen":     minikafka.WithListenAddr("no-port"),
		"advertised": minikafka.WithAdvertisedAddr("host:notaport"),
		"node id":    minikafka.WithNodeID(-1),
		"partitions": minikafka.WithDefaultPartitions(0),
		"durability": minikafka.WithDurability("sometimes"),
		"delay":      minikafka.WithGroupInitialRebalanceDelay(-time.Second),
		"topic":      minikafka.WithTopic("", 1),
		"topic 0":    minikafka.WithTopic("t", 0),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := minikafka.Start(context.Background(), opt)
			if err == nil {
				b.Close()
				t.Fatal("Start accepted an invalid option")
			}
		})
	}
	_, err := minikafka.Start(context.Background(), minikafka.WithTopic("a", 1), minikafka.WithTopic("a", 2))
	if err == nil {
		t.Fatal("duplicate WithTopic accepted")
	}
}

func TestStartBusyPort(t *testing.T) {
	b := start(t)
	_, err := minikafka.Start(context.Background(), minikafka.WithListenAddr(b.ListenAddr().String()))
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Start on a busy port: %v, want EADDRINUSE", err)
	}
}

func TestStartCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, err := minikafka.Start(ctx)
	if !errors.Is(err, context.Canceled) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("Start with a cancelled context: %v", err)
	}
}

func TestCloseIdempotent(t *testing.T) {
	b, err := minikafka.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	addr := b.ListenAddr().String()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting after Close")
	}
}

func produce(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	ctx := ctxT(t)
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("value-%d", i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

func consume(t *testing.T, b *minikafka.Broker, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := client(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := ctxT(t)
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		got = append(got, fs.Records()...)
	}
	return got
}

func TestWithTopicAndRestart(t *testing.T) {
	dir := t.TempDir()
	b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir),
		minikafka.WithTopic("orders", 3), minikafka.WithAutoCreateTopics(false))
	if err != nil {
		t.Fatal(err)
	}
	if b.DataDir() != dir {
		t.Fatalf("DataDir %q, want %q", b.DataDir(), dir)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if td, ok := topics["orders"]; !ok || len(td.Partitions) != 3 {
		t.Fatalf("topics after Start: %+v", topics)
	}
	produce(t, cl, "orders", 20)
	cl.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// Same dir, same WithTopic: the topic exists already, which is fine.
	b = start(t, minikafka.WithDataDir(dir), minikafka.WithTopic("orders", 3))
	got := consume(t, b, "orders", 20)
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r.Key)] = true
	}
	if len(got) != 20 || len(seen) != 20 {
		t.Fatalf("after restart: %d records, %d distinct keys", len(got), len(seen))
	}
}

// Close flushes: with durability never, data acknowledged before Close
// survives a simulated power loss right after it.
func TestCloseFlushes(t *testing.T) {
	mem := vfs.NewMem()
	b, err := minikafka.Start(context.Background(), minikafka.WithFS(mem), minikafka.WithDataDir("/data"),
		minikafka.WithDurability("never"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	cl := client(t, b)
	produce(t, cl, "t", 10)
	cl.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = start(t, minikafka.WithFS(mem.CrashClone()), minikafka.WithDataDir("/data"))
	if got := consume(t, b, "t", 10); len(got) != 10 {
		t.Fatalf("%d records after crash clone", len(got))
	}
}

func TestInMemoryAutoCreate(t *testing.T) {
	b := start(t, minikafka.WithInMemory(), minikafka.WithDefaultPartitions(4))
	cl := client(t, b, kgo.AllowAutoTopicCreation()) // kgo does not ask for it by default
	produce(t, cl, "auto", 5)
	topics, err := kadm.NewClient(cl).ListTopics(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if td, ok := topics["auto"]; !ok || len(td.Partitions) != 4 {
		t.Fatalf("auto-created topic: %+v", topics)
	}
}

// A consumer long-polling an empty topic does not hold Close for its max
// wait: the server's drain signal ends the poll.
func TestCloseWithLongPollingConsumer(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithTopic("idle", 1))
	if err != nil {
		t.Fatal(err)
	}
	cl := client(t, b, kgo.ConsumeTopics("idle"), kgo.FetchMaxWait(30*time.Second))
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cl.PollFetches(ctx)
	}()
	time.Sleep(300 * time.Millisecond) // let the fetch reach the broker
	start := time.Now()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// The poll's max wait is 30 s; 10 s leaves room for a loaded -race run.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Close took %v with a consumer long-polling", d)
	}
	cl.Close()
	<-polled
}

func TestListenIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
	b := start(t, minikafka.WithListenAddr("[::1]:0"))
	port := b.ListenAddr().(*net.TCPAddr).Port
	if want := fmt.Sprintf("[::1]:%d", port); b.Addr() != want {
		t.Fatalf("Addr %q, want %q", b.Addr(), want)
	}
	md, err := kadm.NewClient(client(t, b)).BrokerMetadata(ctxT(t))
	if err != nil || len(md.Brokers) != 1 || md.Brokers[0].Host != "::1" {
		t.Fatalf("metadata %+v, %v", md.Brokers, err)
	}
}

func TestWithListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := start(t, minikafka.WithListener(ln))
	if b.ListenAddr().String() != ln.Addr().String() || b.Addr() != ln.Addr().String() {
		t.Fatalf("ListenAddr %v Addr %v, listener %v", b.ListenAddr(), b.Addr(), ln.Addr())
	}
	if _, err := kadm.NewClient(client(t, b)).BrokerMetadata(ctxT(t)); err != nil {
		t.Fatal(err)
	}

	// Start owns the listener even when it fails.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := minikafka.Start(context.Background(), minikafka.WithListener(ln2), minikafka.WithNodeID(-1)); err == nil {
		t.Fatal("invalid node id accepted")
	}
	if c, err := net.DialTimeout("tcp", ln2.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("listener still open after a failed Start")
	}
}

// Two brokers never share a data dir; the lock goes with Close.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir)); !errors.Is(err, minikafka.ErrDataDirLocked) {
		t.Fatalf("second Start on the same dir: %v, want ErrDataDirLocked", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	start(t, minikafka.WithDataDir(dir))
}

// A Start that fails at any step closes what it had opened: its port is
// free and the data dir unlocked, so a retry in the same process with the
// same port and data dir starts.
func TestFailedStartReleasesAll(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string) (undo func())
		// opts are for the failing Start only; side is a free port that
		// must be free again after it (the HTTP sides' listeners).
		opts func(addr, side string) []minikafka.Option
		want string
	}{
		{name: "second listener busy", want: "listener B", opts: func(addr, _ string) []minikafka.Option {
			return []minikafka.Option{minikafka.WithListeners(
				minikafka.ListenerSpec{Name: "A", Addr: addr, Security: "PLAINTEXT"},
				minikafka.ListenerSpec{Name: "B", Addr: busy.Addr().String(), Security: "PLAINTEXT"})}
		}},
		{name: "data dir locked", want: "data dir locked", setup: func(t *testing.T, dir string) func() {
			holder, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { holder.Close() }) // if the test stops before undo
			return func() { holder.Close() }
		}},
		{name: "storage does not open", want: "opening data dir", setup: func(t *testing.T, dir string) func() {
			// A file where the topics directory goes.
			name := filepath.Join(dir, "topics")
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(name) }
		}},
		{name: "metrics address busy", want: "metrics", opts: func(_, side string) []minikafka.Option {
			return []minikafka.Option{minikafka.WithHTTPAddr(side), minikafka.WithMetricsAddr(busy.Addr().String())}
		}},
		// The registry's step comes after the console's HTTP listener and
		// the registry's own Kafka pipe are open.
		{name: "schema registry address busy", want: "schema registry", opts: func(_, side string) []minikafka.Option {
			return []minikafka.Option{minikafka.WithHTTPAddr(side), minikafka.WithSchemaRegistry(busy.Addr().String())}
		}},
		// The control API's is the last step: the console and the
		// registry, with their pipes, are running when it fails.
		{name: "admin address busy", want: "admin", opts: func(_, side string) []minikafka.Option {
			return []minikafka.Option{minikafka.WithHTTPAddr(side), minikafka.WithSchemaRegistry("127.0.0.1:0"),
				minikafka.WithAdminAddr(busy.Addr().String())}
		}},
		{name: "topic refused", want: "creating topics", opts: func(string, string) []minikafka.Option {
			return []minikafka.Option{minikafka.WithTopic("no/slash", 1)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			free, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := free.Addr().String()
			free.Close()
			free, err = net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			side := free.Addr().String()
			free.Close()
			undo := func() {}
			if c.setup != nil {
				undo = c.setup(t, dir)
			}
			opts := []minikafka.Option{minikafka.WithDataDir(dir), minikafka.WithListenAddr(addr)}
			if c.opts != nil {
				opts = append(opts, c.opts(addr, side)...)
			}
			b, err := minikafka.Start(context.Background(), opts...)
			if err == nil {
				b.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start: %v, want an error containing %q", err, c.want)
			}
			if ln, err := net.Listen("tcp", side); err != nil {
				t.Fatalf("the HTTP port %s still taken after the failed Start: %v", side, err)
			} else {
				ln.Close()
			}
			undo()
			b, err = minikafka.Start(context.Background(), minikafka.WithDataDir(dir), minikafka.WithListenAddr(addr))
			if err != nil {
				t.Fatalf("retry after the failed Start: %v", err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// slowSyncFS delays every fsync, so an acks=all produce is still waiting
// for durability when Close begins.
type slowSyncFS struct {
	*vfs.MemFS
	slow *slowSync
}

type slowSync struct {
	on      atomic.Bool
	started chan struct{} // gets a value when a slow sync begins
}

type slowSyncFile struct {
	vfs.File
	slow *slowSync
}

func (f slowSyncFile) Sync() error {
	if f.slow.on.Load() {
		select {
		case f.slow.started <- struct{}{}:
		default:
		}
		time.Sleep(200 * time.Millisecond)
	}
	return f.File.Sync()
}

func (s slowSyncFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := s.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f, s.slow}, nil
}

// Close answers an acks=all produce that is waiting for its fsync, and
// the record is durable afterwards.
func TestCloseFinishesInFlightProduce(t *testing.T) {
	mem := vfs.NewMem()
	slow := &slowSync{started: make(chan struct{}, 1)}
	b, err := minikafka.Start(context.Background(), minikafka.WithFS(slowSyncFS{mem, slow}), minikafka.WithDataDir("/data"),
		minikafka.WithDurability("always"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	cl := client(t, b, kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	// Warm up: metadata and a first produce, so the next one goes straight out.
	if err := cl.ProduceSync(ctxT(t), kgo.StringRecord("first")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	slow.on.Store(true)
	acked := make(chan error, 1)
	go func() { acked <- cl.ProduceSync(ctxT(t), kgo.StringRecord("in-flight")).FirstErr() }()
	<-slow.started // the produce is now waiting on its fsync
	slow.on.Store(false)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-acked; err != nil {
		t.Fatalf("in-flight produce during Close: %v", err)
	}
	cl.Close()
	b = start(t, minikafka.WithFS(mem.CrashClone()), minikafka.WithDataDir("/data"))
	if got := consume(t, b, "t", 2); len(got) != 2 || string(got[1].Value) != "in-flight" {
		t.Fatalf("after restart: %d records", len(got))
	}
}
