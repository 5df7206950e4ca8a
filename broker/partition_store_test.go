package broker

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// The idempotence check belongs to the partition, whichever store the batch
// lands in: over TCP, a forwarded partition answers retries (with the first
// batch's offsets and append time), gaps, evicted retries and fenced epochs
// exactly as a local one, and so it does after a restart, when the state
// is rebuilt from the spool's tail instead of the log's. The upstream is
// unreachable, so nothing is shipped and the spool's log start stays put:
// whole answers compare, LogStartOffset included.
func TestForwardedIdempotenceMatchesLocal(t *testing.T) {
	upstream, _ := deadAddr(t)
	mem := vfs.NewMem()
	open := func() (*Broker, *rawConn) {
		t.Helper()
		b, err := New(Config{DataDir: "/d", FS: mem, NodeID: 1,
			Uplink: &uplink.Config{Brokers: []string{upstream}, Forward: []uplink.ForwardRule{{Pattern: "f-*"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return b, dialRaw(t, listen(t, b))
	}
	b, rc := open()
	topics := []string{"local", "f-1"}
	for _, name := range topics {
		createTopic(t, b, name, 1, "message.timestamp.type", "LogAppendTime")
	}
	if _, ok := b.storeOf(b.lookupTopic("f-1", [16]byte{}).partition(0)).(*forwarder); !ok {
		t.Fatal("f-1 is not forwarded")
	}
	if _, ok := b.storeOf(b.lookupTopic("local", [16]byte{}).partition(0)).(*logStore); !ok {
		t.Fatal("local is forwarded")
	}

	const pid = 1000
	type step struct {
		name  string
		pid   int64
		epoch int16
		seq   int32
		n     int
		code  *kerr.Error // nil: success
		base  int64
		dupOf string // a retry: answered with that step's offsets and append time
	}
	before := []step{
		{name: "first", pid: pid, seq: 0, n: 3, base: 0},
		{name: "second", pid: pid, seq: 3, n: 2, base: 3},
		{name: "retry first", pid: pid, seq: 0, n: 3, base: 0, dupOf: "first"},
		{name: "retry second", pid: pid, seq: 3, n: 2, base: 3, dupOf: "second"},
		{name: "gap", pid: pid, seq: 7, n: 1, code: kerr.OutOfOrderSequenceNumber},
		{name: "overlap", pid: pid, seq: 1, n: 1, code: kerr.OutOfOrderSequenceNumber},
		{name: "next", pid: pid, seq: 5, n: 1, base: 5},
		{name: "fill 6", pid: pid, seq: 6, n: 1, base: 6},
		{name: "fill 7", pid: pid, seq: 7, n: 1, base: 7},
		{name: "fill 8", pid: pid, seq: 8, n: 1, base: 8},
		{name: "fill 9", pid: pid, seq: 9, n: 1, base: 9},
		{name: "fill 10", pid: pid, seq: 10, n: 1, base: 10},
		// Only the last five batches are remembered.
		{name: "evicted retry", pid: pid, seq: 0, n: 3, code: kerr.OutOfOrderSequenceNumber},
		{name: "new epoch seq 4", pid: pid, epoch: 1, seq: 4, n: 1, code: kerr.OutOfOrderSequenceNumber},
		{name: "new epoch", pid: pid, epoch: 1, seq: 0, n: 1, base: 11},
		{name: "old epoch", pid: pid, epoch: 0, seq: 11, n: 1, code: kerr.InvalidProducerEpoch},
		{name: "other producer", pid: pid + 1, seq: 42, n: 1, base: 12},
	}
	after := []step{
		{name: "retry after restart", pid: pid, epoch: 1, seq: 0, n: 1, base: 11, dupOf: "new epoch"},
		{name: "other retry after restart", pid: pid + 1, seq: 42, n: 1, base: 12, dupOf: "other producer"},
		{name: "old epoch after restart", pid: pid, epoch: 0, seq: 1, n: 1, code: kerr.InvalidProducerEpoch},
		{name: "gap after restart", pid: pid, epoch: 1, seq: 2, n: 1, code: kerr.OutOfOrderSequenceNumber},
		{name: "next after restart", pid: pid, epoch: 1, seq: 1, n: 1, base: 13},
	}

	got := map[string]map[string]kmsg.ProduceResponseTopicPartition{}
	run := func(rc *rawConn, topic string, steps []step) {
		t.Helper()
		if got[topic] == nil {
			got[topic] = map[string]kmsg.ProduceResponseTopicPartition{}
		}
		for _, s := range steps {
			recs := make([]testRec, s.n)
			for i := range recs {
				recs[i] = testRec{value: []byte(s.name)}
			}
			r := tcpProduce(t, rc, 11, topic, makeBatch(t, records.CodecNone, s.pid, s.epoch, s.seq, recs...))
			got[topic][s.name] = r
			switch {
			case s.code != nil:
				if r.ErrorCode != s.code.Code {
					t.Fatalf("%s: %s: %v, want %v", topic, s.name, kerr.ErrorForCode(r.ErrorCode), s.code)
				}
			case r.ErrorCode != 0 || r.BaseOffset != s.base:
				t.Fatalf("%s: %s: %v base %d, want base %d", topic, s.name, kerr.ErrorForCode(r.ErrorCode), r.BaseOffset, s.base)
			case s.dupOf != "" && r.LogAppendTime != got[topic][s.dupOf].LogAppendTime:
				t.Fatalf("%s: %s: append time %d, want the original's %d", topic, s.name, r.LogAppendTime, got[topic][s.dupOf].LogAppendTime)
			case r.LogAppendTime <= 0:
				t.Fatalf("%s: %s: append time %d", topic, s.name, r.LogAppendTime)
			}
		}
	}
	same := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			l, f := got["local"][s.name], got["f-1"][s.name]
			if l.ErrorCode != f.ErrorCode || l.BaseOffset != f.BaseOffset || l.LogStartOffset != f.LogStartOffset {
				t.Errorf("%s: local %v base %d start %d, forwarded %v base %d start %d", s.name,
					kerr.ErrorForCode(l.ErrorCode), l.BaseOffset, l.LogStartOffset, kerr.ErrorForCode(f.ErrorCode), f.BaseOffset, f.LogStartOffset)
			}
		}
	}
	ends := func(b *Broker, want int64) {
		t.Helper()
		for _, name := range topics {
			// Duplicates were not stored again.
			if end := b.storeOf(b.lookupTopic(name, [16]byte{}).partition(0)).logEnd(); end != want {
				t.Errorf("%s: log end %d, want %d", name, end, want)
			}
		}
	}

	for _, name := range topics {
		run(rc, name, before)
	}
	same(before)
	ends(b, 13)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, rc = open()
	defer b.Close()
	for _, name := range topics {
		run(rc, name, after)
	}
	same(after)
	ends(b, 14)
}

// ListOffsets (latest, read_committed) and OffsetForLeaderEpoch answer
// from the partition's store: for a forwarded partition the spool, not the
// log it no longer writes.
func TestForwardedOffsetsFromStore(t *testing.T) {
	upstream, _ := deadAddr(t)
	b := newTestBroker(t, func(c *Config) {
		c.Uplink = &uplink.Config{Brokers: []string{upstream}, Forward: []uplink.ForwardRule{{Pattern: "f-*"}}}
	})
	createTopic(t, b, "f-1", 1)
	for i := 0; i < 3; i++ {
		if r := produce(t, b, "f-1", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}, testRec{value: []byte("w")})); r.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(r.ErrorCode))
		}
	}
	adm := kadm.NewClient(newClient(t, listen(t, b)))
	ctx := context.Background()
	listed, err := adm.ListCommittedOffsets(ctx, "f-1") // latest, read_committed
	if o, ok := listed.Lookup("f-1", 0); err != nil || !ok || o.Err != nil || o.Offset != 6 {
		t.Errorf("list offsets latest read_committed: %v %+v, want offset 6", err, o)
	}
	ends, err := adm.OffsetForLeaderEpoch(ctx, kadm.OffsetForLeaderEpochRequest{"f-1": {0: 0}})
	if e := ends["f-1"][0]; err != nil || e.Err != nil || e.EndOffset != 6 {
		t.Errorf("offset for leader epoch: %v %+v, want end 6", err, e)
	}
}

// BenchmarkPartitionPath measures the broker's side of Produce and Fetch
// for one partition of a local and of a forwarded topic: handler, checks
// and store, without network or client, so that a change to the path
// between handler and storage (the partition store) shows in ns/op and
// allocs/op, which the client benchmarks (bench_test.go) drown. cpu-ns/op
// is the process's CPU time (processCPU), steadier than ns/op on a shared
// machine. The forwarded topic's upstream is unreachable: nothing ships.
func BenchmarkPartitionPath(b *testing.B) {
	br := newTestBroker(b, func(c *Config) {
		c.Uplink = &uplink.Config{Brokers: []string{"127.0.0.1:1"}, Forward: []uplink.ForwardRule{{Pattern: "f-*"}}}
	})
	value := make([]byte, 100)
	for _, topic := range []string{"local", "f-1"} {
		createTopic(b, br, topic, 1)
		b.Run(topic+"/produce", func(b *testing.B) {
			req := produceReq(11, 1, topic, [16]byte{}, 0, makeBatch(b, records.CodecNone, -1, 0, 0, testRec{value: value}))
			b.ReportAllocs()
			cpu0 := processCPU()
			for range b.N {
				serveReply(br, req)
			}
			reportCPUPerOp(b, cpu0)
		})
		b.Run(topic+"/produce-idempotent", func(b *testing.B) {
			batch := makeBatch(b, records.CodecNone, 7, 0, 0, testRec{value: value})
			req := produceReq(11, 1, topic, [16]byte{}, 0, batch)
			b.ReportAllocs()
			cpu0 := processCPU()
			for i := range b.N {
				binary.BigEndian.PutUint32(batch[53:], uint32(i)) // base sequence, under the CRC
				binary.BigEndian.PutUint32(batch[17:], records.Checksum(batch))
				serveReply(br, req)
			}
			reportCPUPerOp(b, cpu0)
		})
		b.Run(topic+"/fetch", func(b *testing.B) {
			req := fetchReq(12, topic, [16]byte{}, 0, 0, 0, 0)
			req.Topics[0].Partitions[0].PartitionMaxBytes = 4 << 10 // materialized, as most small fetches
			b.ReportAllocs()
			cpu0 := processCPU()
			for range b.N {
				serveReply(br, req)
			}
			reportCPUPerOp(b, cpu0)
		})
	}
}

func reportCPUPerOp(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
