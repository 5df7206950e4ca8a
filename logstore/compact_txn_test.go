package logstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
)

// batchHeaders returns the headers of every stored batch from the log start.
func batchHeaders(t testing.TB, l *Log) []records.BatchHeader {
	t.Helper()
	var hs []records.BatchHeader
	for p := readStored(t, l, l.LogStartOffset()); len(p) > 0; {
		h, err := records.ValidateStored(p)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		p = p[h.Size():]
	}
	return hs
}

// markerState describes the log's control batches as "offset:horizon" (or
// "offset:-" without one), in offset order.
func markerState(t testing.TB, l *Log) string {
	t.Helper()
	var out []string
	for _, h := range batchHeaders(t, l) {
		if !h.IsControl() {
			continue
		}
		hz := "-"
		if h.HasDeleteHorizon() {
			hz = fmt.Sprint(h.FirstTimestamp - epoch.UnixMilli())
		}
		out = append(out, fmt.Sprintf("%d:%s", h.BaseOffset, hz))
	}
	return fmt.Sprint(out)
}

// dataState lists the data records as "offset:key=value".
func dataState(t testing.TB, l *Log) string {
	t.Helper()
	var out []string
	for _, r := range logRecords(t, l) {
		if len(r.key) == 4 && r.key[0] == 0 {
			continue // a control record
		}
		out = append(out, fmt.Sprintf("%d:%s=%s", r.off, r.key, r.val))
	}
	return fmt.Sprint(out)
}

// Transaction markers go as in Kafka: a marker stays while a batch of its
// transaction (even one emptied and kept as its producer's last) is in the
// log; the pass that leaves none gives it a delete horizon
// (delete.retention.ms from then), and the first pass after the horizon
// removes it, telling RemovingMarkers before the swap. Commit and abort
// markers alike; a marker of a transaction without data here goes too.
func TestCompactRemovesMarkers(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	const retention = time.Hour
	ts := epoch.UnixMilli()
	txn := func(pid int64, seq int32, kvs ...kv) []byte {
		return kvBatch(t, batchOpts{ts: ts, pid: pid, seq: seq, txn: true}, kvs...)
	}
	mustAppend(t, l, txn(10, 0, kv{key: "a", val: "t10"}))       // 0: committed, superseded below
	mustAppend(t, l, marker(t, 10, true))                        // 1: M1
	mustAppend(t, l, txn(11, 0, kv{key: "b", val: "aborted"}))   // 2: aborted
	mustAppend(t, l, marker(t, 11, false))                       // 3: M2
	mustAppend(t, l, txn(12, 0, kv{key: "c", val: "aborted12"})) // 4: aborted, producer 12's last data batch
	mustAppend(t, l, marker(t, 12, false))                       // 5: M3
	mustAppend(t, l, marker(t, 13, true))                        // 6: M4, no data in this log
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts}, kv{key: "a", val: "plain"}))
	mustAppend(t, l, txn(10, 1, kv{key: "x", val: "t10b"})) // 8: committed, kept
	mustAppend(t, l, marker(t, 10, true))                   // 9: M5
	mustAppend(t, l, txn(11, 1, kv{key: "y", val: "t11b"})) // 10: committed, kept
	mustAppend(t, l, marker(t, 11, true))                   // 11: M6
	l.Roll()

	var removing []TxnMarker
	var seenByHook string // the markers readers saw when the hook ran
	opts := func(now time.Duration) CompactOptions {
		return CompactOptions{Now: epoch.Add(now), DeleteRetention: retention,
			RemovingMarkers: func(ms []TxnMarker) {
				removing = append(removing, ms...)
				seenByHook = markerState(t, l)
			}}
	}
	// Pass 1: the data of M1, M2 and M4's transactions is gone (or was
	// never here): they get a horizon. M3's transaction keeps its emptied
	// batch (producer 12's last); M5 and M6 have data.
	res := mustCompact(t, l, opts(0))
	h := retention.Milliseconds()
	if got, want := markerState(t, l), fmt.Sprintf("[1:%d 3:%d 5:- 6:%d 9:- 11:-]", h, h, h); got != want {
		t.Fatalf("after pass 1: markers %s, want %s", got, want)
	}
	if res.Markers != 0 || len(removing) != 0 || res.Aborted != 2 {
		t.Fatalf("pass 1: %+v, removing %v", res, removing)
	}
	if hz := l.CleanState(epoch, 0, 0).DeleteHorizon; hz != epoch.UnixMilli()+h {
		t.Fatalf("clean state horizon %d, want the markers' %d", hz, epoch.UnixMilli()+h)
	}
	wantData := "[7:a=plain 8:x=t10b 10:y=t11b]"
	if got := dataState(t, l); got != wantData {
		t.Fatalf("data %s, want %s", got, wantData)
	}
	i := slices.IndexFunc(batchHeaders(t, l), func(h records.BatchHeader) bool { return h.BaseOffset == 4 })
	if i < 0 || batchHeaders(t, l)[i].NumRecords != 0 {
		t.Fatal("producer 12's last data batch is not kept emptied")
	}

	// Pass 2, before the horizon (forced by new dirty data): nothing goes.
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts}, kv{key: "z", val: "1"}))
	l.Roll()
	res = mustCompact(t, l, opts(retention-time.Millisecond))
	if got, want := markerState(t, l), fmt.Sprintf("[1:%d 3:%d 5:- 6:%d 9:- 11:-]", h, h, h); got != want || res.Markers != 0 {
		t.Fatalf("before the horizon: markers %s (%+v), want %s", got, res, want)
	}

	// Pass 3, at the horizon: due by the horizon alone; M1, M2 and M4 go,
	// announced before the swap.
	res = mustCompact(t, l, opts(retention))
	if got := markerState(t, l); got != "[5:- 9:- 11:-]" {
		t.Fatalf("after the horizon: markers %s", got)
	}
	want := []TxnMarker{{10, 1, true}, {11, 3, false}, {13, 6, true}}
	if res.Markers != 3 || !slices.Equal(removing, want) {
		t.Fatalf("pass 3: %+v, removing %v, want %v", res, removing, want)
	}
	if want := fmt.Sprintf("[1:%d 3:%d 5:- 6:%d 9:- 11:-]", h, h, h); seenByHook != want {
		t.Fatalf("RemovingMarkers ran when readers saw markers %s, want it before the swap (%s)", seenByHook, want)
	}
	if got := dataState(t, l); got != "[7:a=plain 8:x=t10b 10:y=t11b 12:z=1]" {
		t.Fatalf("data %s", got)
	}

	// Superseding producer 11's committed data (producer 10 keeps its
	// last batch, so M5 stays) lets M6 go two passes later.
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts}, kv{key: "y", val: "new"}, kv{key: "x", val: "new"}))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: ts, pid: 11, seq: 2}, kv{key: "w", val: "idem"})) // producer 11's last data batch now
	l.Roll()
	removing = nil
	mustCompact(t, l, opts(2*retention))
	if got, want := markerState(t, l), fmt.Sprintf("[5:- 9:- 11:%d]", 3*h); got != want {
		t.Fatalf("after superseding: markers %s, want %s", got, want)
	}
	res = mustCompact(t, l, opts(3*retention))
	if got := markerState(t, l); got != "[5:- 9:-]" || res.Markers != 1 || !slices.Equal(removing, []TxnMarker{{11, 11, true}}) {
		t.Fatalf("markers %s, %+v, removing %v", got, res, removing)
	}

	// A restart reads the cleaned log as it is.
	before := fmt.Sprint(batchHeaders(t, l))
	l.Close()
	e.opts.VerifyAll = true
	l, _ = e.open(t)
	defer l.Close()
	if after := fmt.Sprint(batchHeaders(t, l)); after != before {
		t.Fatalf("after reopen:\n%s\nwant\n%s", after, before)
	}
}

// A marker whose transaction's batches are removed in a pass gets its
// horizon in that pass; records of the marker batch keep their timestamps.
func TestCompactMarkerHorizonKeepsTimestamps(t *testing.T) {
	e := compactEnv(t, 1<<20)
	l, _ := e.open(t)
	defer l.Close()
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 5, pid: 3, txn: true}, kv{key: "a", val: "x"}))
	mustAppend(t, l, marker(t, 3, false))
	mustAppend(t, l, kvBatch(t, batchOpts{ts: 6, pid: 3, seq: 1}, kv{key: "b", val: "y"}))
	l.Roll()
	before := logRecords(t, l)
	mustCompact(t, l, CompactOptions{Now: epoch, DeleteRetention: time.Minute})
	after := logRecords(t, l)
	if len(after) != 2 || after[0] != before[1] || after[1] != before[2] {
		t.Fatalf("after: %v, before: %v", after, before)
	}
	hs := batchHeaders(t, l)
	if !hs[0].IsControl() || !hs[0].HasDeleteHorizon() || hs[0].FirstTimestamp != epoch.Add(time.Minute).UnixMilli() || hs[0].MaxTimestamp != 1 {
		t.Fatalf("marker header %+v", hs[0])
	}
}
