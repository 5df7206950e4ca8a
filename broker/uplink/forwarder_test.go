package uplink

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// fakePart is a forwarded partition without a broker: no transactions
// (unless stable is set), and a producer state that is just bytes.
type fakePart struct {
	topic string
	id    [16]byte
	index int32
	parts int32

	// stable, when >= 0, is the last stable offset (an open transaction
	// from there on); -1: none, the high watermark.
	stable atomic.Int64

	mu        sync.Mutex
	store     *Forwarder
	loaded    []byte // what UseSpool was handed
	producers []byte
	gen       uint64
}

func newFakePart(topic string, index int32) *fakePart {
	p := &fakePart{topic: topic, id: [16]byte{1, 2, 3}, index: index, parts: 1}
	p.stable.Store(-1)
	return p
}

func (p *fakePart) Topic() string          { return p.topic }
func (p *fakePart) TopicID() [16]byte      { return p.id }
func (p *fakePart) Index() int32           { return p.index }
func (p *fakePart) TopicPartitions() int32 { return p.parts }
func (p *fakePart) LogEnd() int64          { return 0 }

func (p *fakePart) LastStable(hw int64) int64 {
	if s := p.stable.Load(); s >= 0 {
		return min(s, hw)
	}
	return hw
}

func (p *fakePart) AbortedHolds(int64, int64) bool { return false }
func (p *fakePart) HoldsOpen(int64) bool           { return false }

func (p *fakePart) UseSpool(f *Forwarder, producers []byte) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store, p.loaded = f, producers
	return p.gen, nil
}

func (p *fakePart) Producers(gen uint64, known bool) ([]byte, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if known && gen == p.gen {
		return nil, gen
	}
	return p.producers, p.gen
}

func testEnv(t *testing.T, dir string) Env {
	return Env{FS: vfs.OS{}, DataDir: dir, Sync: logstore.SyncAlways, ClusterID: "test-cluster", MaxBatchBytes: 64 << 20}
}

func newTestUplink(t *testing.T, up *kfake.Cluster, env Env) *Uplink {
	t.Helper()
	u, err := New(Config{Brokers: up.ListenAddrs(), Forward: []ForwardRule{{Pattern: "t-*", Prefix: "up."}}}, env)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// upstreamValues reads the upstream topic from the start until it has
// gone quiet after want records.
func upstreamValues(t *testing.T, up *kfake.Cluster, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(up.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)); n++ })
		if n == 0 && len(got) >= want {
			break
		}
	}
	return got
}

// The uplink ships a partition it was handed through Partition alone, no
// broker in between: small batches merged, a large one as it is, in
// order; acknowledged records leave the spool, the producer state the
// partition encodes is saved beside it and handed back at the next open,
// and the next run resumes as the same upstream producer without shipping
// anything twice.
func TestForwarderShipsThroughPartition(t *testing.T) {
	up, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	dir := t.TempDir()
	env := testEnv(t, dir)

	u := newTestUplink(t, up, env)
	if r := u.Rule("other"); r != nil {
		t.Fatalf("rule for an unmatched topic: %+v", r)
	}
	if f, err := u.Open(newFakePart("other", 0)); f != nil || err != nil {
		t.Fatalf("open of an unmatched topic: %v, %v", f, err)
	}
	p := newFakePart("t-1", 0)
	p.producers, p.gen = []byte(`{"producer":"state"}`), 7
	f, err := u.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if p.store != f || p.loaded != nil {
		t.Fatalf("UseSpool: store %p (want %p), producers %q", p.store, f, p.loaded)
	}
	if again, _ := u.Open(newFakePart("t-1", 0)); again != f {
		t.Fatal("a second Open made a second forwarder")
	}
	var want []string
	appendValue := func(v string, size int) {
		t.Helper()
		value := append([]byte(v), bytes.Repeat([]byte{'.'}, max(0, size-len(v)))...)
		res, err := f.Append(testBatch(t, records.CodecNone, records.Record{Value: value}), 1, -1)
		if err != nil {
			t.Fatal(err)
		}
		if res.BaseOffset != int64(len(want)) {
			t.Fatalf("append %s at %d, want %d", v, res.BaseOffset, len(want))
		}
		want = append(want, string(value))
	}
	for i := 0; i < 30; i++ {
		appendValue("small-"+strconv.Itoa(i), 10)
	}
	appendValue("large", 20<<10)
	if got := f.Stat(); got.State != stateStarting || got.Lag != int64(len(want)) || got.UpstreamTopic != "up.t-1" {
		t.Fatalf("before Start: %+v", got)
	}

	u.Start()
	waitFor(t, "the spool to drain", func() bool { return f.LogStart() == f.LogEnd() })
	st := u.Stats()
	if len(st) != 1 || st[0].Lag != 0 || st[0].Forwarded != int64(len(want)) || st[0].ProducerID < 0 || st[0].Errors != 0 {
		t.Fatalf("stats %+v", st)
	}
	if got := upstreamValues(t, up, "up.t-1", len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("upstream holds %d records %.200v, want %d", len(got), got, len(want))
	}
	pid := st[0].ProducerID
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	spoolDir := filepath.Join(dir, "spool", fmt.Sprintf("%x", p.id), "0")
	if saved, err := os.ReadFile(producersPath(spoolDir)); err != nil || string(saved) != string(p.producers) {
		t.Fatalf("producer state file %q, %v", saved, err)
	}
	if _, err := os.Stat(producerJournalPath(spoolDir)); err != nil {
		t.Fatalf("producer journal: %v", err)
	}

	// The next run: the saved state is handed back, the spool starts after
	// what was acknowledged, and the same producer ships on.
	u = newTestUplink(t, up, env)
	defer u.Close()
	p = newFakePart("t-1", 0)
	if f, err = u.Open(p); err != nil {
		t.Fatal(err)
	}
	if string(p.loaded) != `{"producer":"state"}` || f.LogStart() != int64(len(want)) {
		t.Fatalf("reopened: producers %q, log start %d", p.loaded, f.LogStart())
	}
	appendValue("after-restart", 10)
	u.Start()
	waitFor(t, "the spool to drain again", func() bool { return f.LogStart() == f.LogEnd() })
	if got := upstreamValues(t, up, "up.t-1", len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the restart upstream holds %d records, want %d", len(got), len(want))
	}
	if s := f.Stat(); s.ProducerID != pid || s.ProducerResets != 0 {
		t.Fatalf("after the restart producer %d (resets %d), want %d", s.ProducerID, s.ProducerResets, pid)
	}
}

// The partition's last stable offset bounds what is shipped: records from
// it on wait, as they wait for an open transaction to end.
func TestForwarderShipsBelowLastStable(t *testing.T) {
	up, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	u := newTestUplink(t, up, testEnv(t, t.TempDir()))
	defer u.Close()
	p := newFakePart("t-2", 0)
	p.stable.Store(3)
	f, err := u.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := f.Append(testBatch(t, records.CodecNone, records.Record{Value: []byte{byte('a' + i)}}), 1, -1); err != nil {
			t.Fatal(err)
		}
	}
	u.Start()
	waitFor(t, "the stable records", func() bool { return f.Stat().UpstreamAcked == 3 })
	time.Sleep(2 * openTxnRecheck) // long enough for a wrong forwarder to ship on
	if s := f.Stat(); s.UpstreamAcked != 3 || s.Lag != 2 {
		t.Fatalf("shipped past the last stable offset: %+v", s)
	}
	p.stable.Store(-1)
	waitFor(t, "the rest", func() bool { return f.Stat().Lag == 0 })
	if got := upstreamValues(t, up, "up.t-2", 5); fmt.Sprint(got) != "[a b c d e]" {
		t.Fatalf("upstream holds %v", got)
	}
}

// The group offset sync reads local offsets through Env.Groups and
// commits their translations upstream, with no broker behind them.
type fakeGroups struct{ commits []groupstore.Commit }

func (g fakeGroups) StoredGroups() []string { return []string{"g"} }
func (g fakeGroups) GroupOffsets(string) []groupstore.Commit {
	return g.commits
}

func TestGroupOffsetSyncThroughGroups(t *testing.T) {
	up, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	// kfake answers GROUP_ID_NOT_FOUND where Kafka lists no offsets for a
	// group it does not know: the group gets an offset upstream first.
	cl, err := kgo.NewClient(kgo.SeedBrokers(up.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "t-3"); err != nil {
		t.Fatal(err)
	}
	start := kadm.Offsets{}
	start.Add(kadm.Offset{Topic: "t-3", Partition: 0, At: 0, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", start); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t, t.TempDir())
	env.Groups = fakeGroups{commits: []groupstore.Commit{{Topic: "t-3", Partition: 0, Offset: groupstore.Offset{Offset: 2}}}}
	u, err := New(Config{Brokers: up.ListenAddrs(), Forward: []ForwardRule{{Pattern: "t-*"}},
		SyncGroupOffsets: true, SyncGroupOffsetsInterval: 50 * time.Millisecond}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	f, err := u.Open(newFakePart("t-3", 0))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := f.Append(testBatch(t, records.CodecNone, records.Record{Value: []byte("v")}), 1, -1); err != nil {
			t.Fatal(err)
		}
	}
	u.Start()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := u.GroupOffsets()
		if len(rows) == 1 && rows[0].Committed == 2 && rows[0].Err == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group offset rows %+v", rows)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := u.GroupOffsets()[0]; r.Group != "g" || r.UpstreamTopic != "t-3" || r.LocalOffset != 2 || r.UpstreamOffset != 2 || r.Lag != 0 {
		t.Fatalf("row %+v", r)
	}
}
