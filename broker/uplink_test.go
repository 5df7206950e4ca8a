package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// upstream is a restartable minikafka standing in for the central
// cluster: Stop and Start keep its port and data dir.
type upstream struct {
	t    testing.TB
	dir  string
	addr string
	b    *minikafka.Broker
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{t: t, dir: t.TempDir(), addr: "127.0.0.1:0"}
	u.Start()
	u.addr = u.b.ListenAddr().String()
	t.Cleanup(u.Stop)
	return u
}

func (u *upstream) Start() {
	u.t.Helper()
	var err error
	for i := 0; ; i++ {
		u.b, err = minikafka.Start(context.Background(), minikafka.WithDataDir(u.dir),
			minikafka.WithListenAddr(u.addr), minikafka.WithDurability("never"))
		if err == nil || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond) // port not released yet
	}
	if err != nil {
		u.t.Fatalf("starting upstream: %v", err)
	}
}

func (u *upstream) Stop() {
	if u.b != nil {
		if err := u.b.Close(); err != nil {
			u.t.Errorf("closing upstream: %v", err)
		}
		u.b = nil
	}
}

// readAll consumes partitions [0, parts) of topic from the start until
// want records arrived (or the timeout), returning them per partition.
func readAll(t testing.TB, addr, topic string, parts int32, want int, timeout time.Duration) map[int32][]*kgo.Record {
	t.Helper()
	offs := map[int32]kgo.Offset{}
	for p := int32(0); p < parts; p++ {
		offs[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[int32][]*kgo.Record{}
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for n < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			n++
		})
	}
	return got
}

// lagZero reports whether b forwards at least parts partitions (a
// partition's forwarder starts with its first use) and every one has
// shipped all.
func lagZero(b *minikafka.Broker, parts int) func() bool {
	return func() bool {
		st := b.ForwardStats()
		if len(st) < parts {
			return false
		}
		for _, s := range st {
			if s.Lag != 0 {
				return false
			}
		}
		return true
	}
}

func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestUplinkForwardsRecords(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("edge-*=site1."),
		minikafka.WithTopic("edge-a", 3), minikafka.WithTopic("plain", 1))
	cl := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()

	const n = 3000
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < n; i++ {
		r := &kgo.Record{Topic: "edge-a", Partition: int32(i % 3), Key: []byte("k" + strconv.Itoa(i)),
			Value: []byte(fmt.Sprintf("v%06d", i)), Timestamp: base.Add(time.Duration(i) * time.Millisecond),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(strconv.Itoa(i))}}}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A topic not matching the pattern stays local.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	check := func(what string, got map[int32][]*kgo.Record, wantTopic string, offsets bool) {
		t.Helper()
		total := 0
		for p := int32(0); p < 3; p++ {
			rs := got[p]
			total += len(rs)
			for j, r := range rs {
				i := j*3 + int(p)
				if string(r.Value) != fmt.Sprintf("v%06d", i) || string(r.Key) != "k"+strconv.Itoa(i) ||
					!r.Timestamp.Equal(base.Add(time.Duration(i)*time.Millisecond)) ||
					len(r.Headers) != 1 || string(r.Headers[0].Value) != strconv.Itoa(i) || r.Topic != wantTopic {
					t.Fatalf("%s: partition %d record %d: got topic %s key %q value %q ts %v headers %v", what, p, j, r.Topic, r.Key, r.Value, r.Timestamp, r.Headers)
				}
				if offsets && r.Offset != int64(j) {
					t.Fatalf("%s: partition %d record %d has offset %d", what, p, j, r.Offset)
				}
			}
		}
		if total != n {
			t.Fatalf("%s: %d records, want %d", what, total, n)
		}
	}
	// Everything arrives upstream, under the prefixed name, once, in order,
	// with keys, headers and timestamps.
	check("upstream", readAll(t, up.addr, "site1.edge-a", 3, n, 20*time.Second), "site1.edge-a", true)
	if rs := readAll(t, up.addr, "site1.edge-a", 3, n+1, 500*time.Millisecond); len(rs[0])+len(rs[1])+len(rs[2]) != n {
		t.Fatalf("duplicates upstream")
	}

	// Once acknowledged, the log start offset reaches the end: local
	// consumers from the start see an empty, moved-on partition.
	waitFor(t, 10*time.Second, "forwarding lag 0", func() bool {
		for _, s := range local.ForwardStats() {
			if s.Lag != 0 {
				return false
			}
		}
		return len(local.ForwardStats()) == 3
	})
	// The log start follows the acknowledgements within a commit interval.
	adm := kadm.NewClient(cl)
	waitFor(t, 10*time.Second, "log start offsets at the end", func() bool {
		starts, err := adm.ListStartOffsets(ctx, "edge-a")
		if err != nil {
			t.Fatal(err)
		}
		ends, err := adm.ListEndOffsets(ctx, "edge-a")
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 3; p++ {
			s, _ := starts.Lookup("edge-a", p)
			e, _ := ends.Lookup("edge-a", p)
			if s.Offset != n/3 || e.Offset != n/3 {
				return false
			}
		}
		return true
	})
	for _, s := range local.ForwardStats() {
		if s.UpstreamTopic != "site1.edge-a" || s.Forwarded != n/3 || s.LastError != "" {
			t.Errorf("stats %+v", s)
		}
	}
	// DescribeConfigs shows the forwarding state as read-only entries.
	rcs, err := adm.DescribeTopicConfigs(ctx, "edge-a")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("edge-a", nil)
	if err != nil || rc.Err != nil {
		t.Fatal(err, rc.Err)
	}
	seen := map[string]string{}
	for _, c := range rc.Configs {
		seen[c.Key] = c.MaybeValue()
	}
	for k, v := range map[string]string{"minikafka.forward.upstream.topic": "site1.edge-a", "minikafka.forward.lag": "0",
		"minikafka.forward.forwarded": strconv.Itoa(n), "minikafka.forward.last.error": ""} {
		if got, ok := seen[k]; !ok || got != v {
			t.Errorf("DescribeConfigs %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	for _, k := range []string{"minikafka.forward.pressure", "minikafka.forward.spool.bytes"} {
		if _, ok := seen[k]; !ok {
			t.Errorf("DescribeConfigs lacks %s", k)
		}
	}
	if rc, err := adm.DescribeTopicConfigs(ctx, "plain"); err != nil || len(rc) != 1 {
		t.Fatal(err)
	} else {
		for _, c := range rc[0].Configs {
			if strings.HasPrefix(c.Key, "minikafka.forward.") {
				t.Errorf("non-forwarded topic shows %s", c.Key)
			}
		}
	}
	if rs := readAll(t, up.addr, "plain", 1, 1, 300*time.Millisecond); len(rs[0]) != 0 {
		t.Errorf("non-forwarded topic reached the upstream")
	}
}

// A produce to a forwarded topic is answered under the durability policy,
// as one to a log: under "always" only once its spool segment is fsynced,
// under "never" without waiting for that fsync. A spool write that fails
// is reported under either.
func TestUplinkProduceHonoursDurability(t *testing.T) {
	for _, policy := range []string{"always", "never"} {
		t.Run(policy, func(t *testing.T) {
			const slow = time.Second
			// Not minikafkatest.NewWithDisk: its cleanup fails the test
			// on the close error this test provokes.
			b, err := minikafka.Start(context.Background(), minikafka.WithStorageFaults(), minikafka.WithDataDir(t.TempDir()),
				minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithDurability(policy), minikafka.WithUpstream("127.0.0.1:1"),
				minikafka.WithForward("dur"), minikafka.WithTopic("dur", 1))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			disk := b.StorageFaults()
			b.EnableRequestLog(50)
			cl := minikafkatest.Client(t, b, kgo.DefaultProduceTopic("dur"), kgo.RecordRetries(1))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			disk.SlowSync(slow)
			if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			var produce *minikafka.RequestLogEntry
			for _, e := range b.RequestLog() {
				if e.Key == 0 {
					produce = &e
				}
			}
			if produce == nil {
				t.Fatalf("no produce in the request log: %+v", b.RequestLog())
			}
			if waited := produce.Latency >= slow; waited != (policy == "always") {
				t.Fatalf("durability %s: produce answered in %v with fsyncs taking %v", policy, produce.Latency, slow)
			}
			disk.SlowSync(0)
			disk.FailSync(true)
			waitFor(t, 20*time.Second, "a produce refused after the spool's write failed", func() bool {
				err := cl.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr()
				return errors.Is(err, kerr.KafkaStorageError)
			})
			disk.FailSync(false)
			cl.Close()
			if err := b.Close(); err != nil {
				t.Logf("close after the failed spool write: %v", err) // the spool reports its error
			}
		})
	}
}
