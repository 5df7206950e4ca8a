package broker

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// TestCleanerCompactsOverTCP produces many updates of a few keys and some
// tombstones to a compacted topic with tiny segments through kgo, waits for
// the log cleaner, and consumes from the start: exactly the latest value of
// each live key at its original offset, deleted keys gone. A restart on the
// same directory shows the same log.
func TestCleanerCompactsOverTCP(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, NodeID: 1, CleanerBackoff: 20 * time.Millisecond}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			b.Close()
		}
	}()
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	const topic = "compacted"
	mustCreate(t, adm, topic, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("2048"),
		"segment.ms":                kadm.StringPtr("300"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.1"),
		"delete.retention.ms":       kadm.StringPtr("0"),
	})
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	ctx := testCtx(t)
	type val struct {
		off  int64
		val  string
		tomb bool
	}
	latest := map[string]val{}
	produce := func(rs ...*kgo.Record) {
		t.Helper()
		res := cl.ProduceSync(ctx, rs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			latest[string(r.Record.Key)] = val{off: r.Record.Offset, val: string(r.Record.Value), tomb: r.Record.Value == nil}
		}
	}
	for i := 0; i < 1200; i += 20 {
		var rs []*kgo.Record
		for j := i; j < i+20; j++ {
			k := "key" + strconv.Itoa(j%6)
			r := &kgo.Record{Key: []byte(k), Value: []byte(fmt.Sprintf("value-%d-%040d", j, j))}
			if j%6 == 5 && j > 1000 {
				r.Value = nil // key5 ends deleted
			}
			rs = append(rs, r)
		}
		produce(rs...)
	}
	produce(&kgo.Record{Key: []byte("gone"), Value: []byte("x")})
	produce(&kgo.Record{Key: []byte("gone"), Value: nil})
	// Past segment.ms, one more record rolls everything above into sealed,
	// cleanable segments.
	time.Sleep(400 * time.Millisecond)
	produce(&kgo.Record{Key: []byte("end"), Value: []byte("1")})
	var want []string
	for k, v := range latest {
		if !v.tomb {
			want = append(want, fmt.Sprintf("%d:%s=%s", v.off, k, v.val))
		}
	}
	hw := latest["end"].off + 1

	check := func(addr string) (got []string, ok bool) {
		cons := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
		defer cons.Close()
		for done := false; !done; {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consume timed out; have %v", got)
			}
			fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				s := fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, r.Value)
				if r.Value == nil {
					s = fmt.Sprintf("%d:%s tombstone", r.Offset, r.Key)
				}
				got = append(got, s)
				done = done || r.Offset == hw-1
			})
		}
		// Records arrive in offset order, so equal sorted lists with no
		// duplicates mean one record per live key, the latest.
		return got, fmt.Sprint(sorted(got)) == fmt.Sprint(sorted(want))
	}
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for {
		var ok bool
		if got, ok = check(addr); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the log holds\n%v\nwant\n%v", got, sorted(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Offsets stay, the log start too; time lookups work across the gaps.
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := ends.Lookup(topic, 0); e.Offset != hw {
		t.Fatalf("end offset %d, want %d", e.Offset, hw)
	}
	if s, _ := starts.Lookup(topic, 0); s.Offset != 0 {
		t.Fatalf("start offset %d, want 0", s.Offset)
	}
	byTime, err := adm.ListOffsetsAfterMilli(ctx, 0, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := byTime.Lookup(topic, 0); o.Err != nil || o.Offset != firstOffset(got) {
		t.Fatalf("offset for time 0: %+v, want the first kept record %d", o, firstOffset(got))
	}

	cl.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	b2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	addr2 := listen(t, b2)
	if again, _ := check(addr2); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("after restart:\n%v\nbefore:\n%v", again, got)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func firstOffset(recs []string) int64 {
	var off int64
	fmt.Sscanf(recs[0], "%d:", &off)
	return off
}

// The cleaner's choice: a compacted partition is cleaned when its dirty
// ratio reaches min.cleanable.dirty.ratio or its oldest dirty record passes
// max.compaction.lag.ms; delete-only topics never are.
func TestCleanerDueRules(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.CleanerBackoff = time.Hour })
	createTopic(t, b, "ratio", 1, "cleanup.policy", "compact", "segment.bytes", "100", "min.cleanable.dirty.ratio", "0.9")
	createTopic(t, b, "lag", 1, "cleanup.policy", "compact", "segment.bytes", "100", "min.cleanable.dirty.ratio", "0.9", "max.compaction.lag.ms", "1")
	createTopic(t, b, "plain", 1, "segment.bytes", "100")
	put := func(topic string, n int) {
		for i := 0; i < n; i++ {
			rec := testRec{key: []byte("k"), value: []byte(fmt.Sprint("value-", i))}
			if r := produce(t, b, topic, 0, makeBatch(t, records.CodecNone, -1, 0, 0, rec)); r.ErrorCode != 0 {
				t.Fatalf("produce to %s: %v", topic, kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
	logOf := func(topic string) *logstore.Log { return b.lookupTopic(topic, [16]byte{}).partition(0).log }
	count := func(topic string) int {
		l := logOf(topic)
		rr, err := l.Read(logstore.ReadOptions{Offset: l.LogStartOffset(), MaxBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		data, err := rr.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for len(data) > 0 {
			h, err := records.ValidateStored(data)
			if err != nil {
				t.Fatal(err)
			}
			n += int(h.NumRecords)
			data = data[h.Size():]
		}
		return n
	}
	round := func() (cleaned []string) {
		done := map[any]bool{}
		for c := b.newCleaner(); c.CleanOne(done, b.closing); {
		}
		for p := range done {
			cleaned = append(cleaned, p.(*partition).topic.name)
		}
		return sorted(cleaned)
	}
	put("ratio", 10)
	put("lag", 10)
	put("plain", 10)
	// Everything is dirty at first (ratio 1).
	if got := round(); fmt.Sprint(got) != "[lag ratio]" {
		t.Fatalf("first round cleaned %v", got)
	}
	if n := count("ratio"); n != 2 { // the latest sealed one and the active segment's
		t.Fatalf("%d records left in ratio", n)
	}
	if n := count("plain"); n != 10 {
		t.Fatalf("a delete-policy topic lost records: %d left", n)
	}
	// A little new data: below the ratio; past the lag for "lag".
	put("ratio", 2)
	put("lag", 2)
	time.Sleep(5 * time.Millisecond)
	if got := round(); fmt.Sprint(got) != "[lag]" {
		t.Fatalf("second round cleaned %v", got)
	}
	if got := round(); len(got) != 0 {
		t.Fatalf("third round cleaned %v with nothing due", got)
	}
}
