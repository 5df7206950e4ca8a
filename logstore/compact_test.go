package logstore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
)

// kv is one keyed record for kvBatch; tomb makes a null value.
type kv struct {
	key, val string
	tomb     bool
}

type batchOpts struct {
	ts    int64
	pid   int64
	seq   int32
	codec records.Codec
	txn   bool
}

func kvBatch(t testing.TB, o batchOpts, kvs ...kv) []byte {
	t.Helper()
	recs := make([]records.Record, len(kvs))
	for i, x := range kvs {
		recs[i] = records.Record{TimestampDelta: int64(i), Key: []byte(x.key)}
		if x.key == "" {
			recs[i].Key = nil
		}
		if !x.tomb {
			recs[i].Value = []byte(x.val)
		}
	}
	pid, epoch, seq := int64(-1), int16(-1), int32(-1)
	if o.pid > 0 {
		pid, epoch, seq = o.pid, 0, o.seq
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: o.ts, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: o.txn}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if o.codec != records.CodecNone {
		// Compressed through the cleaner's pooled encoders: a fresh lz4
		// or zstd encoder per batch is slow under -race.
		h, _ := records.ParseHeader(b)
		h.Attributes |= int16(o.codec)
		if b, err = records.AppendRewritten(nil, h, h.NumRecords, b[records.BatchHeaderLen:], nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// rec is a decoded record of the log.
type rec struct {
	off  int64
	key  string
	val  string
	tomb bool
	ts   int64
}

// logRecords decodes every visible record.
func logRecords(t testing.TB, l *Log) []rec {
	t.Helper()
	return decodeRecords(t, readStored(t, l, l.LogStartOffset()))
}

// readStored is readAll for a compacted log, whose batches may hold fewer
// records than their offset span.
func readStored(t testing.TB, l *Log, off int64) []byte {
	t.Helper()
	var out []byte
	for {
		r, err := l.Read(ReadOptions{Offset: off, MaxBytes: 1 << 20, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.AppendTo(nil)
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			return out
		}
		out = append(out, b...)
		for p := b; len(p) > 0; {
			h, err := records.ValidateStored(p)
			if err != nil {
				t.Fatalf("read returned a bad batch: %v", err)
			}
			off = h.LastOffset() + 1
			p = p[h.Size():]
		}
	}
}

func decodeRecords(t testing.TB, data []byte) []rec {
	t.Helper()
	var out []rec
	for p := data; len(p) > 0; {
		h, err := records.ValidateStored(p)
		if err != nil {
			t.Fatalf("bad stored batch: %v", err)
		}
		b := p[:h.Size()]
		_, err = records.ForEachStored(b, 1<<30, nil, func(r *records.Record, _ []byte) error {
			x := rec{off: h.BaseOffset + int64(r.OffsetDelta), key: string(r.Key), val: string(r.Value), tomb: r.Value == nil, ts: h.FirstTimestamp + r.TimestampDelta}
			if h.HasLogAppendTime() {
				x.ts = h.MaxTimestamp
			}
			out = append(out, x)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		p = p[h.Size():]
	}
	return out
}

// latestPerKey is what a compacted log must keep: the last record of each
// key (tombstones included).
func firstBase(t testing.TB, b []byte) int64 {
	h, err := records.ValidateStored(b)
	if err != nil {
		t.Fatal(err)
	}
	return h.BaseOffset
}

func latestPerKey(rs []rec) map[string]rec {
	m := map[string]rec{}
	for _, r := range rs {
		m[r.key] = r
	}
	return m
}

func compactEnv(t testing.TB, segBytes int64) *testEnv {
	e := memEnv(t)
	e.opts.Config.SegmentBytes = segBytes
	e.opts.Config.IndexIntervalBytes = 256
	e.opts.Config.RetentionMs = -1
	return e
}

func mustAppend(t testing.TB, l *Log, b []byte) AppendResult {
	t.Helper()
	r, err := l.Append(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustCompact(t testing.TB, l *Log, o CompactOptions) CompactResult {
	t.Helper()
	r, err := l.Compact(o)
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	return r
}

func TestCompactKeepsLatestPerKey(t *testing.T) {
	e := compactEnv(t, 2000)
	l, _ := e.open(t)
	for i := 0; i < 300; i++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: epoch.UnixMilli() + int64(i)},
			kv{key: fmt.Sprint("k", i%7), val: fmt.Sprint("v", i)},
			kv{key: fmt.Sprint("k", (i+3)%11), val: fmt.Sprint("w", i)},
			kv{key: fmt.Sprint("k", (i+5)%13), val: fmt.Sprint("x", i)}))
	}
	before := logRecords(t, l)
	want := latestPerKey(before)
	segsBefore := len(l.segments())
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	res := mustCompact(t, l, CompactOptions{Now: epoch.Add(time.Hour)})
	if res.Removed != int64(len(before)-len(want)) || res.FirstDirty != l.LogEndOffset() {
		t.Fatalf("result %+v: want %d removed, first dirty %d", res, len(before)-len(want), l.LogEndOffset())
	}
	var extra []rec // records appended after the clean
	check := func(l *Log) {
		got := logRecords(t, l)
		if len(got) != len(want)+len(extra) {
			t.Fatalf("%d records after compaction, want %d: %v", len(got), len(want)+len(extra), got)
		}
		for _, r := range got[:len(want)] {
			if w := want[r.key]; w != r {
				t.Fatalf("record %+v, want %+v (offset and timestamp preserved)", r, w)
			}
		}
		if fmt.Sprint(got[len(want):]) != fmt.Sprint(extra) {
			t.Fatalf("records after the cleaned ones: %v, want %v", got[len(want):], extra)
		}
	}
	check(l)
	if n := len(l.segments()); n >= segsBefore || n > 3 {
		t.Fatalf("%d segments after compaction (were %d): cleaned segments not merged", n, segsBefore)
	}
	if l.LogEndOffset() != 900 || l.LogStartOffset() != 0 {
		t.Fatalf("log end %d start %d", l.LogEndOffset(), l.LogStartOffset())
	}
	// A second pass finds nothing to do.
	if res := mustCompact(t, l, CompactOptions{Now: epoch.Add(time.Hour)}); res.Removed != 0 || res.Replaced != 0 {
		t.Fatalf("second pass changed the log: %+v", res)
	}
	// Appends continue at the log end, and a reopen (verifying every batch
	// and using the new index files) sees the same log.
	mustAppend(t, l, kvBatch(t, batchOpts{ts: epoch.UnixMilli() + 1000}, kv{key: "k0", val: "new"}))
	extra = append(extra, rec{off: 900, key: "k0", val: "new", ts: epoch.UnixMilli() + 1000})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, rep := e.open(t)
	if len(rep.Rescanned) != 0 {
		t.Fatalf("clean reopen rescanned %v", rep.Rescanned)
	}
	check(l)
	l.Close()
	e.opts.VerifyAll = true
	l, _ = e.open(t)
	check(l)
	l.Close()
}

func TestCompactTombstones(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	defer l.Close()
	ts := epoch.UnixMilli()
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts}, kv{key: "a", val: "1"}, kv{key: "b", val: "1"}, kv{key: "c", val: "1"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts + 10}, kv{key: "a", val: "2"}, kv{key: "b", tomb: true}, kv{key: "c", val: "2"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts + 20}, kv{key: "", val: "keyless"}))
	l.Roll()
	o := CompactOptions{Now: epoch.Add(time.Minute), DeleteRetention: time.Hour}
	mustCompact(t, l, o)
	got := logRecords(t, l)
	want := []rec{{3, "a", "2", false, ts + 10}, {4, "b", "", true, ts + 11}, {5, "c", "2", false, ts + 12}, {6, "", "keyless", false, ts + 20}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after first clean:\n got %v\nwant %v", got, want)
	}
	horizon := o.Now.Add(time.Hour).UnixMilli()
	if st := l.CleanState(o.Now, 0, 0); st.DeleteHorizon != horizon {
		t.Fatalf("delete horizon %d, want %d", st.DeleteHorizon, horizon)
	}
	// Before the horizon the tombstone stays, also across a reopen.
	l.Close()
	l, _ = e.open(t)
	o.Now = epoch.Add(time.Minute + 59*time.Minute)
	mustCompact(t, l, o)
	if got := logRecords(t, l); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tombstone removed before its horizon: %v", got)
	}
	if st := l.CleanState(o.Now, 0, 0); st.DeleteHorizon != horizon {
		t.Fatalf("delete horizon after reopen %d, want %d", st.DeleteHorizon, horizon)
	}
	o.Now = time.UnixMilli(horizon)
	res := mustCompact(t, l, o)
	got = logRecords(t, l)
	want = []rec{want[0], want[2], want[3]}
	if fmt.Sprint(got) != fmt.Sprint(want) || res.Tombstones != 1 {
		t.Fatalf("after the horizon (%+v):\n got %v\nwant %v", res, got, want)
	}
	if st := l.CleanState(o.Now, 0, 0); st.DeleteHorizon != math.MaxInt64 {
		t.Fatalf("delete horizon %d with no tombstone left", st.DeleteHorizon)
	}
}

// A tombstone in the dirty section that is not yet covered by the map
// (uncleanable: min.compaction.lag) must not let older values go away.
func TestCompactRespectsBounds(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	defer l.Close()
	now := epoch.Add(time.Hour)
	mustAppend(t, l, kvBatch(t, batchOpts{ts: epoch.UnixMilli()}, kv{key: "a", val: "old"}, kv{key: "b", val: "old"}))
	l.Roll()
	mustAppend(t, l, kvBatch(t, batchOpts{ts: now.UnixMilli() - 1000}, kv{key: "a", val: "new"}, kv{key: "b", tomb: true}))
	l.Roll()
	mustAppend(t, l, kvBatch(t, batchOpts{ts: now.UnixMilli()}, kv{key: "b", val: "active"}))
	// The second segment is younger than the lag: only the first is
	// cleanable and nothing in it is superseded by what the map covers.
	res := mustCompact(t, l, CompactOptions{Now: now, MinCompactionLag: time.Minute})
	if res.Removed != 0 || res.FirstDirty != 2 {
		t.Fatalf("lag not honoured: %+v", res)
	}
	// MaxOffset (the last stable offset) bounds the map the same way.
	res = mustCompact(t, l, CompactOptions{Now: now, MaxOffset: 3})
	if res.Removed != 0 || res.FirstDirty != 2 {
		t.Fatalf("max offset not honoured: %+v", res)
	}
	res = mustCompact(t, l, CompactOptions{Now: now})
	if res.Removed != 2 || res.FirstDirty != 4 {
		t.Fatalf("full clean: %+v", res)
	}
	got := logRecords(t, l)
	if len(got) != 3 || got[0].val != "new" || !got[1].tomb || got[2].val != "active" {
		t.Fatalf("active segment or latest values lost: %v", got)
	}
}

func TestCompactCompressed(t *testing.T) {
	for _, codec := range []records.Codec{records.CodecGzip, records.CodecSnappy, records.CodecLZ4, records.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			e := compactEnv(t, 1024)
			l, _ := e.open(t)
			defer l.Close()
			for i := 0; i < 24; i++ {
				var kvs []kv
				for j := 0; j < 5; j++ {
					kvs = append(kvs, kv{key: fmt.Sprint("key", (i*5+j)%17), val: strings.Repeat(fmt.Sprint(i), 20)})
				}
				mustAppend(t, l, kvBatch(t, batchOpts{ts: epoch.UnixMilli() + int64(i), codec: codec}, kvs...))
			}
			want := latestPerKey(logRecords(t, l))
			l.Roll()
			mustCompact(t, l, CompactOptions{Now: epoch})
			data := readStored(t, l, 0)
			if err := records.Split(data, func(int, records.BatchHeader, []byte) error { return nil }); err == nil {
				t.Fatal("no batch lost records: nothing was rewritten")
			}
			for p := data; len(p) > 0; {
				h, err := records.ValidateStored(p)
				if err != nil {
					t.Fatal(err)
				}
				if h.NumRecords > 0 && h.Compression() != codec {
					t.Fatalf("batch at %d rewritten as %v", h.BaseOffset, h.Compression())
				}
				p = p[h.Size():]
			}
			got := decodeRecords(t, data)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for _, r := range got {
				if want[r.key] != r {
					t.Fatalf("record %+v, want %+v", r, want[r.key])
				}
			}
		})
	}
}

func TestCompactKeepsProducerState(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	ts := epoch.UnixMilli()
	// Producer 7's batches are all superseded by producer 8's.
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts, pid: 7, seq: 0}, kv{key: "a", val: "1"}, kv{key: "b", val: "1"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts + 1, pid: 7, seq: 2}, kv{key: "a", val: "2"}, kv{key: "b", val: "2"}, kv{key: "a", val: "3"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts + 2, pid: 8, seq: 0}, kv{key: "a", val: "x"}, kv{key: "b", val: "x"}))
	l.Roll()
	mustCompact(t, l, CompactOptions{Now: epoch.Add(time.Minute)})
	l.Close()
	e.opts.VerifyAll = true
	l, _ = e.open(t)
	defer l.Close()
	var hs []records.BatchHeader
	for p := readStored(t, l, 0); len(p) > 0; {
		h, err := records.ValidateStored(p)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		p = p[h.Size():]
	}
	if len(hs) != 2 {
		t.Fatalf("%d batches, want producer 7's last (emptied) and producer 8's", len(hs))
	}
	if h := hs[0]; h.ProducerID != 7 || h.BaseSequence != 2 || h.BaseOffset != 2 || h.LastOffset() != 4 || h.NumRecords != 0 {
		t.Fatalf("producer 7's last batch: %+v", h)
	}
	if h := hs[1]; h.ProducerID != 8 || h.NumRecords != 2 || h.BaseOffset != 5 {
		t.Fatalf("producer 8's batch: %+v", h)
	}
	// Once the producer has expired the empty batch goes too, at the
	// next clean.
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts + 3}, kv{key: "c", val: "1"}))
	l.Roll()
	mustCompact(t, l, CompactOptions{Now: epoch.Add(48 * time.Hour), ProducerExpiry: 24 * time.Hour})
	if got := logRecords(t, l); len(got) != 3 || firstBase(t, readStored(t, l, 0)) != 5 {
		t.Fatalf("after expiry: %v", got)
	}
}

// Transactional batches are kept as they are; keyless records survive.
func TestCompactKeepsTransactionalAndKeyless(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	defer l.Close()
	txn := kvBatch(t, batchOpts{ts: 1, pid: 3, seq: 0, txn: true}, kv{key: "a", val: "t"})
	mustAppend(t, l, txn)
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 2}, kv{key: "", val: "nokey"}, kv{key: "a", val: "1"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 3}, kv{key: "a", val: "2"}))
	l.Roll()
	mustCompact(t, l, CompactOptions{Now: epoch})
	got := logRecords(t, l)
	if len(got) != 3 || got[0].val != "t" || got[1].val != "nokey" || got[2].val != "2" {
		t.Fatalf("got %v", got)
	}
	if first := readStored(t, l, 0)[:len(txn)]; !bytes.Equal(first, txn) {
		t.Fatal("transactional batch was rewritten")
	}
}

// Reads across the holes compaction leaves: a fetch at a removed offset
// gets the next batch; timestamp lookups skip removed records.
func TestCompactGaps(t *testing.T) {
	e := compactEnv(t, 600)
	l, _ := e.open(t)
	defer l.Close()
	for i := 0; i < 40; i++ {
		key := fmt.Sprint("k", i%4)
		if i%5 == 0 {
			key = fmt.Sprint("keep", i)
		}
		mustAppend(t, l, kvBatch(t, batchOpts{ts: epoch.UnixMilli() + int64(i)*10}, kv{key: key, val: fmt.Sprint(i)}))
	}
	l.Roll()
	mustCompact(t, l, CompactOptions{Now: epoch})
	got := logRecords(t, l)
	kept := map[int64]bool{}
	for _, r := range got {
		kept[r.off] = true
	}
	for off := int64(0); off < 40; off++ {
		r, err := l.Read(ReadOptions{Offset: off, MaxBytes: 1, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.AppendTo(nil)
		r.Release()
		rs := decodeRecords(t, b)
		next := off
		for !kept[next] && next < 40 {
			next++
		}
		if next == 40 {
			if len(rs) != 0 {
				t.Fatalf("read at %d past the last kept record returned %v", off, rs)
			}
			continue
		}
		if len(rs) == 0 || rs[0].off != next {
			t.Fatalf("read at %d returned %v, want offset %d", off, rs, next)
		}
		wantOff, wantTs := next, epoch.UnixMilli()+next*10
		o, ts, ok, err := l.OffsetForTimestamp(epoch.UnixMilli() + off*10)
		if err != nil || !ok || o != wantOff || ts != wantTs {
			t.Fatalf("offset for time of %d: %d %d %v %v, want %d %d", off, o, ts, ok, err, wantOff, wantTs)
		}
	}
	if o, ts := l.MaxTimestamp(); o != got[len(got)-1].off || ts != got[len(got)-1].ts {
		t.Fatalf("max timestamp %d@%d, want the last kept record", ts, o)
	}
}

// Readers that pinned segments before a clean keep reading the old bytes;
// the old files go when they let go.
func TestCompactReadersKeepOldSegments(t *testing.T) {
	e := compactEnv(t, 800)
	l, _ := e.open(t)
	defer l.Close()
	for i := 0; i < 50; i++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: int64(i)}, kv{key: fmt.Sprint(i % 3), val: fmt.Sprint(i)}))
	}
	l.Roll()
	before := readStored(t, l, 0)
	r, err := l.Read(ReadOptions{Offset: 0, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mustCompact(t, l, CompactOptions{Now: epoch})
	old, err := r.AppendTo(nil)
	if err != nil || !bytes.Equal(old, before[:len(old)]) || len(old) == 0 {
		t.Fatalf("pinned read after compaction: %v (%d bytes)", err, len(old))
	}
	names, _ := e.fs.ReadDir(e.dir)
	if !strings.Contains(strings.Join(names, " "), ".deleted") {
		t.Fatalf("old segments already gone while pinned: %v", names)
	}
	r.Release()
	names, _ = e.fs.ReadDir(e.dir)
	for _, n := range names {
		if strings.HasSuffix(n, ".deleted") || strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("debris after release: %v", names)
		}
	}
	if got := logRecords(t, l); len(got) != 3 {
		t.Fatalf("%d records after compaction", len(got))
	}
}

// A small offset map cleans the prefix it can hold; repeated passes finish.
func TestCompactMapFull(t *testing.T) {
	e := compactEnv(t, 64<<10)
	l, _ := e.open(t)
	defer l.Close()
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < 10000; i += 100 {
			var kvs []kv
			for j := i; j < i+100; j++ {
				kvs = append(kvs, kv{key: fmt.Sprint("key", j), val: fmt.Sprint(pass)})
			}
			mustAppend(t, l, kvBatch(t, batchOpts{ts: 1}, kvs...))
		}
	}
	l.Roll()
	passes := 0
	for {
		res := mustCompact(t, l, CompactOptions{Now: epoch, MapBytes: 1})
		passes++
		if res.FirstDirty > l.LogEndOffset() || passes > 20 {
			t.Fatalf("no progress: %+v", res)
		}
		if !res.MapFull {
			break
		}
		if res.FirstDirty%100 != 0 || res.FirstDirty == 0 {
			t.Fatalf("map stopped mid-batch or at the start: %+v", res)
		}
	}
	if passes < 3 {
		t.Fatalf("a map of %d entries covered 20000 records in %d passes", newOffsetMap(1).capacity(), passes)
	}
	got := logRecords(t, l)
	if len(got) != 10000 {
		t.Fatalf("%d records, want 10000", len(got))
	}
	for _, r := range got {
		if r.val != "1" {
			t.Fatalf("stale value kept: %+v", r)
		}
	}
}

// Repeated append/clean cycles keep the segment count bounded.
func TestCompactSegmentCountBounded(t *testing.T) {
	e := compactEnv(t, 4096)
	l, _ := e.open(t)
	defer l.Close()
	for round := 0; round < 30; round++ {
		for i := 0; i < 20; i++ {
			mustAppend(t, l, kvBatch(t, batchOpts{ts: int64(round)}, kv{key: fmt.Sprint("k", i), val: strings.Repeat("v", 100)}))
		}
		l.Roll()
		mustCompact(t, l, CompactOptions{Now: epoch})
	}
	if n := len(l.segments()); n > 4 {
		t.Fatalf("%d segments after 30 clean cycles", n)
	}
	if got := logRecords(t, l); len(got) != 20 {
		t.Fatalf("%d records", len(got))
	}
}

func TestOffsetMap(t *testing.T) {
	m := newOffsetMap(1 << 20)
	for i := 0; i < 30000; i++ {
		if !m.fits(1) {
			t.Fatalf("full after %d of capacity %d", i, m.capacity())
		}
		m.put([]byte(fmt.Sprint(i%20000)), int64(i))
	}
	for i := 0; i < 20000; i++ {
		want := int64(i)
		if i < 10000 {
			want += 20000
		}
		if got, ok := m.get([]byte(fmt.Sprint(i))); !ok || got != want {
			t.Fatalf("key %d: %d %v, want %d", i, got, ok, want)
		}
	}
	if _, ok := m.get([]byte("absent")); ok {
		t.Fatal("absent key found")
	}
	m.put([]byte("0"), 5) // lower offsets never replace higher ones
	if got, _ := m.get([]byte("0")); got != 20000 {
		t.Fatalf("offset went down to %d", got)
	}
	if len(m.h1)*mapEntryBytes > 1<<20 {
		t.Fatalf("table of %d slots exceeds the budget", len(m.h1))
	}
}

// Stop aborts a clean: the log is unchanged and no file is left behind.
func TestCompactStop(t *testing.T) {
	e := compactEnv(t, 1000)
	l, _ := e.open(t)
	defer l.Close()
	for i := 0; i < 100; i++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: int64(i)}, kv{key: fmt.Sprint(i % 5), val: fmt.Sprint(i)}))
	}
	l.Roll()
	before := readStored(t, l, 0)
	stop := make(chan struct{})
	close(stop)
	if _, err := l.Compact(CompactOptions{Now: epoch, Stop: stop}); err != ErrCompactAborted {
		t.Fatalf("Compact with Stop closed: %v", err)
	}
	if !bytes.Equal(readStored(t, l, 0), before) {
		t.Fatal("an aborted clean changed the log")
	}
	names, _ := e.fs.ReadDir(e.dir)
	for _, n := range names {
		if strings.Contains(n, cleanedSuffix) || strings.Contains(n, swapSuffix) || n == cleanPointFile {
			t.Fatalf("aborted clean left %s", n)
		}
	}
}

// Compaction concurrent with appends, rolls, readers and DeleteRecords:
// readers always see valid batches in offset order, and at the end the
// log (reopened) is a legal compaction of what was appended.
func TestCompactConcurrent(t *testing.T) {
	e := compactEnv(t, 1500)
	l, _ := e.open(t)
	var all []rec
	var swaps, aborted atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 3)
	go func() { // reader
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			off := l.LogStartOffset()
			for {
				r, err := l.Read(ReadOptions{Offset: off, MaxBytes: 4096, MinOneBatch: true})
				if err != nil {
					if errors.Is(err, ErrOffsetOutOfRange) {
						break // DeleteRecords moved the start
					}
					done <- err
					return
				}
				b, err := r.AppendTo(nil)
				r.Release()
				if err != nil {
					done <- err
					return
				}
				if len(b) == 0 {
					break
				}
				for p := b; len(p) > 0; {
					h, err := records.ValidateStored(p)
					if err != nil {
						done <- err
						return
					}
					if h.LastOffset() < off {
						done <- fmt.Errorf("batch [%d,%d] read for offset %d", h.BaseOffset, h.LastOffset(), off)
						return
					}
					off = h.LastOffset() + 1
					p = p[h.Size():]
				}
			}
		}
	}()
	go func() { // cleaner
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			res, err := l.Compact(CompactOptions{Now: epoch, DeleteRetention: time.Millisecond})
			if err != nil && !errors.Is(err, ErrCompactAborted) {
				done <- err
				return
			}
			if err != nil {
				aborted.Add(1)
			} else if res.Replaced > 0 {
				swaps.Add(1)
			}
		}
	}()
	go func() { // writer (the test goroutine checks the model)
		for i := 0; i < 1500; i++ {
			k := kv{key: fmt.Sprint("k", i%37), val: fmt.Sprint("v", i), tomb: i%11 == 0}
			r, err := l.Append(kvBatch(t, batchOpts{ts: epoch.UnixMilli() + int64(i)}, k))
			if err != nil {
				done <- err
				return
			}
			x := rec{off: r.BaseOffset, key: k.key, val: k.val, tomb: k.tomb, ts: epoch.UnixMilli() + int64(i)}
			if k.tomb {
				x.val = ""
			}
			all = append(all, x)
			if i%200 == 199 {
				if _, err := l.DeleteRecords(r.BaseOffset - 500); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	if err := <-done; err != nil { // the writer or a failure
		t.Fatal(err)
	}
	close(stop)
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d passes swapped segments, %d aborted", swaps.Load(), aborted.Load())
	l.Roll()
	mustCompact(t, l, CompactOptions{Now: epoch})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, _ = e.open(t)
	defer l.Close()
	ls := l.LogStartOffset()
	var orig []rec
	for _, r := range all {
		if r.off >= ls {
			orig = append(orig, r)
		}
	}
	got := logRecords(t, l)
	checkCompacted(t, "concurrent", orig, got)
	if len(got) > 37 {
		t.Fatalf("%d records left for 37 keys after a final clean", len(got))
	}
}

// A clean can leave a segment empty (all its records superseded): it keeps
// covering its offsets, and a clean reopen trusts its index files.
func TestCompactEmptiedSegment(t *testing.T) {
	e := compactEnv(t, 300)
	l, _ := e.open(t)
	for i := 0; i < 6; i++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: int64(i)}, kv{key: "a", val: strings.Repeat("x", 100)}))
		l.Roll()
	}
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 9}, kv{key: "b", val: "y"}))
	l.Roll()
	// A one-byte segment limit: no merging, so the superseded segments
	// are rewritten empty.
	cfg := e.opts.Config
	cfg.SegmentBytes = 1
	l.SetConfig(cfg)
	mustCompact(t, l, CompactOptions{Now: epoch})
	empty := 0
	for _, s := range l.segments() {
		if s.size.Load() == 0 && s != l.active {
			empty++
		}
	}
	if empty == 0 {
		t.Fatal("no emptied segment: the test does not test it")
	}
	want := logRecords(t, l)
	if len(want) != 2 || want[0].off != 5 || want[1].off != 6 {
		t.Fatalf("records %v", want)
	}
	l.Close()
	l, rep := e.open(t)
	defer l.Close()
	if len(rep.Rescanned) != 0 || l.LogStartOffset() != 0 || l.LogEndOffset() != 7 {
		t.Fatalf("reopen: rescanned %v, start %d, end %d", rep.Rescanned, l.LogStartOffset(), l.LogEndOffset())
	}
	if got := logRecords(t, l); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reopen %v, want %v", got, want)
	}
	r, err := l.Read(ReadOptions{Offset: 2, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if b, _ := r.AppendTo(nil); len(b) == 0 || firstBase(t, b) != 5 {
		t.Fatal("read in an emptied segment does not continue with the next batch")
	}
}

// marker builds a transaction marker batch.
func marker(t testing.TB, pid int64, commit bool) []byte {
	t.Helper()
	key := []byte{0, 0, 0, 0}
	if commit {
		key[3] = 1
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{Transactional: true, Control: true, FirstTimestamp: 1, ProducerID: pid, ProducerEpoch: 0, BaseSequence: -1},
		[]records.Record{{Key: key, Value: []byte{0, 0, 0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Aborted transactions' records are removed; committed ones are compacted
// like any other and may supersede older values; markers stay; a
// transaction whose marker is not in the cleanable segments is kept as is.
func TestCompactTransactions(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	defer l.Close()
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 1}, kv{key: "a", val: "plain"}, kv{key: "b", val: "plain"}))                      // 0-1
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 2, pid: 3, txn: true}, kv{key: "a", val: "aborted"}))                             // 2
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 3, pid: 4, txn: true}, kv{key: "b", val: "committed"}))                           // 3
	mustAppend(t, l, marker(t, 3, false))                                                                                       // 4
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 4, pid: 4, seq: 1, txn: true}, kv{key: "c", val: "c1"}, kv{key: "c", val: "c2"})) // 5-6
	mustAppend(t, l, marker(t, 4, true))                                                                                        // 7
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 5, pid: 5, txn: true}, kv{key: "a", val: "undecided"}))                           // 8
	l.Roll()
	mustAppend(t, l, marker(t, 5, true)) // 9, in the active segment: not cleanable
	res := mustCompact(t, l, CompactOptions{Now: epoch})
	if res.Aborted != 1 {
		t.Fatalf("result %+v: want 1 aborted record removed", res)
	}
	var got []string
	for _, r := range logRecords(t, l) {
		if strings.HasPrefix(r.key, "\x00") {
			got = append(got, fmt.Sprintf("%d:marker", r.off)) // control record keys are binary
			continue
		}
		got = append(got, fmt.Sprintf("%d:%s=%s", r.off, r.key, r.val))
	}
	want := "[0:a=plain 3:b=committed 4:marker 6:c=c2 7:marker 8:a=undecided 9:marker]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
