package broker

import (
	"encoding/hex"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// Topics, IDs, partition counts, configs and records survive a restart on
// the same data dir (real files), and deleted topics stay deleted.
func TestRestartKeepsTopicsAndRecords(t *testing.T) {
	dir := t.TempDir()
	open := func() *Broker {
		b, err := New(Config{DataDir: dir, NodeID: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := open()
	idA := createTopic(t, b, "a", 2, "retention.ms", "-1")
	createTopic(t, b, "gone", 1)
	for i := 0; i < 5; i++ {
		if r := produce(t, b, "a", int32(i%2), makeBatch(t, records.CodecZstd, -1, 0, 0, testRec{value: []byte{byte(i)}})); r.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(r.ErrorCode))
		}
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "a", Count: 3}}
	if c := serve(t, b, cp).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode; c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames = []string{"gone"}
	serve(t, b, dt)
	clusterID := b.ClusterID()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = open()
	defer b.Close()
	if b.ClusterID() != clusterID {
		t.Fatalf("cluster id changed: %s -> %s", clusterID, b.ClusterID())
	}
	if id, ok := b.TopicID("a"); !ok || id != idA {
		t.Fatal("topic a lost or its id changed")
	}
	if n, _ := b.PartitionCount("a"); n != 3 {
		t.Fatalf("partitions %d, want 3", n)
	}
	if b.TopicExists("gone") {
		t.Fatal("deleted topic came back")
	}
	if v, set := b.lookupTopic("a", [16]byte{}).cfg.Load().Value("retention.ms"); !set || v != "-1" {
		t.Fatalf("retention.ms after restart: %q set=%v", v, set)
	}
	for p, want := range []int64{3, 2, 0} {
		f := serve(t, b, fetchReq(11, "a", [16]byte{}, int32(p), 0, 0, 1)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if f.ErrorCode != 0 || f.HighWatermark != want {
			t.Fatalf("partition %d: %v hw %d, want %d", p, kerr.ErrorForCode(f.ErrorCode), f.HighWatermark, want)
		}
	}
}

// With durability "always", every record acknowledged to an acks=all
// producer survives a crash (only fsynced data kept).
func TestCrashKeepsAcknowledgedRecords(t *testing.T) {
	mem := vfs.NewMem()
	b, err := New(Config{DataDir: "/d", FS: mem, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "t", 1)
	for i := 0; i < 20; i++ {
		if r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte{byte(i)}})); r.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(r.ErrorCode))
		}
	}
	crashed := mem.CrashClone()
	b.Close()
	b2, err := New(Config{DataDir: "/d", FS: crashed, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if !b2.TopicExists("t") {
		t.Fatal("topic lost in crash")
	}
	if got := b2.lookupTopic("t", [16]byte{}).partition(0).log.LogEndOffset(); got != 20 {
		t.Fatalf("log end after crash %d, want 20", got)
	}
}

// An interrupted create leaves a topic directory without topic.json; it is
// swept on start instead of resurrecting a half-made topic.
func TestStartSweepsDebris(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d/topics/00112233445566778899aabbccddeeff/0", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mem.MkdirAll("/d/topics/ffeeddccbbaa99887766554433221100.deleted", 0o755); err != nil {
		t.Fatal(err)
	}
	b := newTestBroker(t, func(c *Config) { c.FS = mem; c.DataDir = "/d" })
	// No topics: both leftovers are swept. (The internal offsets topic
	// appears with the first group lookup, as in Kafka.)
	if n := len(b.topics.Load().byName); n != 0 {
		t.Fatalf("%d topics after start on debris", n)
	}
	if names, _ := mem.ReadDir("/d/topics"); len(names) != 0 {
		t.Fatalf("debris left: %v", names)
	}
	if err := b.ensureOffsetsTopic(); err != nil {
		t.Fatal(err)
	}
	id, _ := b.TopicID(offsetsTopic)
	if names, _ := mem.ReadDir("/d/topics"); len(names) != 1 || names[0] != hex.EncodeToString(id[:]) {
		t.Fatalf("topics dir after creating %s: %v", offsetsTopic, names)
	}
}

// The retention ticker enforces retention.ms without any request.
func TestRetentionTicker(t *testing.T) {
	var now atomicTime
	now.set(time.Now())
	b := newTestBroker(t, func(c *Config) {
		c.RetentionCheckInterval = 10 * time.Millisecond
		c.Now = now.get
	})
	createTopic(t, b, "t", 1, "retention.ms", "60000", "segment.bytes", "100")
	for i := 0; i < 5; i++ {
		produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: make([]byte, 100)}))
	}
	l := b.lookupTopic("t", [16]byte{}).partition(0).log
	time.Sleep(50 * time.Millisecond)
	if l.LogStartOffset() != 0 {
		t.Fatal("retention deleted records younger than retention.ms")
	}
	now.set(time.Now().Add(time.Hour))
	deadline := time.Now().Add(5 * time.Second)
	for l.LogStartOffset() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("retention ticker never deleted old segments")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type atomicTime struct{ v atomic.Int64 }

func (a *atomicTime) set(t time.Time) { a.v.Store(t.UnixNano()) }
func (a *atomicTime) get() time.Time  { return time.Unix(0, a.v.Load()) }

// Idempotence state is rebuilt from the log after a restart: a retry of a
// batch written before the restart gets its original offset, a gap is
// still out of order.
func TestIdempotenceAcrossRestart(t *testing.T) {
	mem := vfs.NewMem()
	open := func() *Broker {
		b, err := New(Config{DataDir: "/d", FS: mem, NodeID: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := open()
	createTopic(t, b, "t", 1)
	const pid = 42
	for i := 0; i < 3; i++ {
		produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("plain")}))
		if r := produce(t, b, "t", 0, makeBatch(t, records.CodecLZ4, pid, 0, int32(2*i), testRec{value: []byte("a")}, testRec{value: []byte("b")})); r.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(r.ErrorCode))
		}
	}
	b.Close()
	b = open()
	defer b.Close()
	// The batch with sequences 2-3 went to offsets 4-5.
	if r := produce(t, b, "t", 0, makeBatch(t, records.CodecLZ4, pid, 0, 2, testRec{value: []byte("a")}, testRec{value: []byte("b")})); r.ErrorCode != 0 || r.BaseOffset != 4 {
		t.Fatalf("retry after restart: %v base %d, want base 4", kerr.ErrorForCode(r.ErrorCode), r.BaseOffset)
	}
	if r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 9, testRec{value: []byte("c")})); r.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap after restart: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, pid, 0, 6, testRec{value: []byte("c")})); r.ErrorCode != 0 || r.BaseOffset != 9 {
		t.Fatalf("next after restart: %v base %d", kerr.ErrorForCode(r.ErrorCode), r.BaseOffset)
	}
}
