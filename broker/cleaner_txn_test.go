package broker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// logMarkers returns the control batches of l: offset -> producer ID.
func logMarkers(t *testing.T, l *logstore.Log) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	rr, err := l.Read(logstore.ReadOptions{Offset: l.LogStartOffset(), MaxBytes: 1 << 30, MaxOffset: l.LogEndOffset(), MinOneBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if err := producers.EachBatchHeader(rr, func(h *records.BatchHeader) bool {
		if h.IsControl() {
			out[h.BaseOffset] = h.ProducerID
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCleanerRemovesTxnMarkers writes a compacted topic with two of kgo's
// transactional producers, one commit or abort marker per transaction, as
// a Kafka Streams changelog under exactly-once gets. The cleaner removes the
// markers whose transactions left no batch (delete.retention.ms is short),
// and with them their aborted-index entries: a read_committed consumer
// gets exactly committed records, the latest of each key included (an
// entry whose marker is gone would hide the producer's later
// transactions), and the last stable offset equals the high watermark.
// The same holds after a restart, whose transaction log still lists the
// removed aborts.
func TestCleanerRemovesTxnMarkers(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, NodeID: 1, CleanerBackoff: 20 * time.Millisecond}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close() }()
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	const topic = "changelog"
	mustCreate(t, adm, topic, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("1024"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
		"delete.retention.ms":       kadm.StringPtr("100"),
	})
	// Two producers whose transactions interleave, as two Streams
	// tasks' would on a shared changelog partition.
	cls := []*kgo.Client{
		txnClient(t, addr, "changelog-writer-a", kgo.ProducerLinger(0)),
		txnClient(t, addr, "changelog-writer-b", kgo.ProducerLinger(0)),
	}
	ctx := testCtx(t)
	const txns = 60 // 30 per producer
	type kv struct {
		off int64
		val string
	}
	latest := map[string]kv{}       // key -> latest committed record
	committed := map[int64]string{} // offset -> "key=value" of committed records
	var lastCommitted int64         // offset of the last committed record
	for i := 0; i < txns/2; i++ {
		var written [2][]*kgo.Record
		commit := [2]bool{i%3 != 1, i%4 != 2}
		if i >= txns/2-3 {
			commit = [2]bool{true, true} // the last transactions all commit
		}
		for _, cl := range cls {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < 3; j++ {
			for c, cl := range cls {
				v := fmt.Sprintf("%c%d.%d-%s", 'a'+c, i, j, strings.Repeat("x", 40))
				if !commit[c] {
					v = "aborted-" + v
				}
				r := &kgo.Record{Topic: topic, Partition: 0, Key: fmt.Appendf(nil, "key%d", (i*6+j*2+c)%5), Value: []byte(v)}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
				written[c] = append(written[c], r)
			}
		}
		for c, cl := range cls {
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit[c])); err != nil {
				t.Fatal(err)
			}
			if !commit[c] {
				continue
			}
			for _, r := range written[c] {
				k := string(r.Key)
				if cur, ok := latest[k]; !ok || r.Offset > cur.off {
					latest[k] = kv{r.Offset, string(r.Value)}
				}
				committed[r.Offset] = k + "=" + string(r.Value)
				lastCommitted = max(lastCommitted, r.Offset)
			}
		}
	}
	for _, cl := range cls {
		cl.Close()
	}
	p := b.lookupTopic(topic, [16]byte{}).partition(0)
	// Three records and a marker per transaction (the cleaner may be
	// at work already, so the markers are not counted here).
	if hw := p.log.HighWatermark(); hw != 4*txns {
		t.Fatalf("high watermark %d, want %d", hw, 4*txns)
	}
	// Most transactions are superseded or aborted; their markers go once
	// cleaned and past the horizon.
	deadline := time.Now().Add(20 * time.Second)
	for len(logMarkers(t, p.log)) > txns/4 {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s %d of %d markers are left", len(logMarkers(t, p.log)), txns)
		}
		time.Sleep(20 * time.Millisecond)
	}

	check := func(b *Broker, addr, label string) {
		t.Helper()
		p := b.lookupTopic(topic, [16]byte{}).partition(0)
		markers := logMarkers(t, p.log)
		hw := p.log.HighWatermark()
		// Every aborted transaction a fetch can be told of still has its
		// marker in the log.
		entries := b.txns.abortedIn(p, 0, hw)
		for _, a := range entries {
			if pid, ok := markers[a.Last]; !ok || pid != a.PID {
				t.Fatalf("%s: aborted index entry %+v has no marker in the log (markers %v)", label, a, markers)
			}
		}
		if lso := b.storeOf(p).lastStable(); lso != hw {
			t.Fatalf("%s: last stable offset %d, high watermark %d", label, lso, hw)
		}
		adm := newAdmin(t, addr)
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := ends.Lookup(topic, 0)
		s, _ := stable.Lookup(topic, 0)
		if e.Offset != hw || s.Offset != hw {
			t.Fatalf("%s: ListOffsets: end %d, stable %d, want both %d", label, e.Offset, s.Offset, hw)
		}

		cons := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
		defer cons.Close()
		seen := map[string]string{}
		for done := false; !done; {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%s: consume timed out; have %v", label, seen)
			}
			fs.EachError(func(tp string, p int32, err error) { t.Fatalf("%s: fetch %s[%d]: %v", label, tp, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				if want := committed[r.Offset]; want != string(r.Key)+"="+string(r.Value) {
					t.Fatalf("%s: read_committed got %d:%s=%s, the log had %q there", label, r.Offset, r.Key, r.Value, want)
				}
				seen[string(r.Key)] = string(r.Value)
				done = done || r.Offset == lastCommitted
			})
		}
		want := map[string]string{}
		for k, r := range latest {
			want[k] = r.val
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Fatalf("%s: latest values read\n%v\nwant\n%v", label, seen, want)
		}
		t.Logf("%s: %d markers left of %d, %d aborted index entries", label, len(markers), txns, len(entries))
	}
	check(b, addr, "cleaned")
	before := len(logMarkers(t, p.log))

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	p = b.lookupTopic(topic, [16]byte{}).partition(0)
	if n := len(logMarkers(t, p.log)); n > before {
		t.Fatalf("after restart %d markers, before %d", n, before)
	}
	check(b, listen(t, b), "after restart")
}
