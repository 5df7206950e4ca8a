package logstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// armedCrash lets n mutating operations through once armed, fails the next
// (tearing a write at a random byte) and every one after it: the machine
// died at that operation.
type armedCrash struct {
	mu      sync.Mutex
	armed   bool
	n       int
	rng     *rand.Rand
	crashed bool
	ops     int
}

func (c *armedCrash) arm() {
	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()
}

func (c *armedCrash) Inject(op vfs.Op, path string, n int) (int, error) {
	if op == vfs.OpRead || op == vfs.OpOpen {
		return n, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed {
		return n, nil
	}
	if c.crashed {
		return 0, vfs.ErrInjected
	}
	c.ops++
	if c.n > 0 {
		c.n--
		return n, nil
	}
	c.crashed = true
	if op == vfs.OpWrite && n > 0 {
		return c.rng.IntN(n + 1), vfs.ErrInjected
	}
	return 0, vfs.ErrInjected
}

// checkCompacted verifies that got is a legal state of a log that held
// orig: every record is an original one at its offset, and per key the last
// record is the original last one, except that a key whose last record was
// a tombstone may be gone entirely. So nothing but superseded records,
// expired tombstones and transaction markers was lost, and no deleted key
// came back. (Marker records, whose keys start with a zero version, may
// go.)
func checkCompacted(t *testing.T, label string, orig, got []rec) {
	t.Helper()
	byOff := map[int64]rec{}
	for _, r := range orig {
		byOff[r.off] = r
	}
	prev := int64(-1)
	for _, r := range got {
		if o, ok := byOff[r.off]; !ok || o != r {
			t.Fatalf("%s: record %+v is not the original %+v", label, r, o)
		}
		if r.off <= prev {
			t.Fatalf("%s: offsets out of order at %d", label, r.off)
		}
		prev = r.off
	}
	lastOrig, lastGot := latestPerKey(orig), latestPerKey(got)
	for k, o := range lastOrig {
		if strings.HasPrefix(k, "\x00") {
			continue // a marker
		}
		g, ok := lastGot[k]
		switch {
		case !o.tomb && (!ok || g != o):
			t.Fatalf("%s: key %q: latest value %+v lost (have %+v)", label, k, o, g)
		case o.tomb && ok && g != o:
			t.Fatalf("%s: key %q: deleted at %d, but %+v is its last record", label, k, o.off, g)
		}
	}
}

// TestCompactCrashAtEveryOperation crashes a clean at each of its file
// operations in turn (a torn write, or a failed fsync, rename or remove,
// and nothing after it reaching the disk) and reopens the crash image:
// the log must open, hold a legal state (checkCompacted), and a second
// clean must reach the same log as an uninterrupted one.
func TestCompactCrashAtEveryOperation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1500
	cfg.IndexIntervalBytes = 128
	cfg.RetentionMs = -1
	const dir = "/p"
	t0 := epoch
	mem := vfs.NewMem()
	l, _, err := Open(Options{FS: mem, Dir: dir, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	appendSome := func(n int) {
		for j := 0; j < n; j++ {
			a := kv{key: fmt.Sprint("k", i%40), val: fmt.Sprint("value-", i, "-", i*i)}
			b := kv{key: fmt.Sprint("k", (i*3+1)%40), val: fmt.Sprint("w", i), tomb: i%7 == 3}
			mustAppend(t, l, kvBatch(t, batchOpts{ts: t0.UnixMilli() + int64(i)}, a, b))
			i++
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	// Transactions whose data the first clean removes (superseded or
	// aborted; each producer's last data batch comes later), so their
	// markers get a horizon then and go in the clean under test.
	for pid := int64(50); pid < 56; pid++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: t0.UnixMilli(), pid: pid, txn: true}, kv{key: fmt.Sprint("k", pid%40), val: "txn"}))
		mustAppend(t, l, marker(t, pid, pid%2 == 0))
	}
	appendSome(36)
	for pid := int64(50); pid < 56; pid++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: t0.UnixMilli(), pid: pid, seq: 1}, kv{key: fmt.Sprint("p", pid), val: "last"}))
	}
	// Keys deleted now and never written again: their tombstones expire
	// in the clean under test.
	for j := 0; j < 6; j++ {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: t0.UnixMilli() + 100}, kv{key: fmt.Sprint("d", j), val: "x"}))
	}
	for j := 0; j < 6; j += 2 {
		mustAppend(t, l, kvBatch(t, batchOpts{ts: t0.UnixMilli() + 100}, kv{key: fmt.Sprint("d", j), tomb: true}))
	}
	l.Roll()
	// A first clean gives the tombstones their delete horizon.
	o := CompactOptions{Now: t0, DeleteRetention: time.Hour}
	mustCompact(t, l, o)
	appendSome(24)
	orig := logRecords(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	base := mem.CrashClone()
	o.Now = t0.Add(2 * time.Hour) // the first tombstones' horizon passed

	// The uninterrupted outcome.
	ref, _, err := Open(Options{FS: base.CrashClone(), Dir: dir, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	res := mustCompact(t, ref, o)
	want := logRecords(t, ref)
	ref.Close()
	if res.Tombstones == 0 || res.Removed == 0 || res.NewSegments < 2 || res.Markers != 6 {
		t.Fatalf("the clean under test does too little: %+v", res)
	}
	checkCompacted(t, "reference", orig, want)

	points := 0
	for n := 0; ; n++ {
		fsys := base.CrashClone()
		inj := &armedCrash{n: n, rng: rand.New(rand.NewPCG(uint64(n), 9))}
		l, _, err := Open(Options{FS: vfs.NewFaultFS(fsys, inj), Dir: dir, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		inj.arm()
		_, cerr := l.Compact(o)
		l.Close()
		if !inj.crashed {
			if cerr != nil {
				t.Fatalf("compaction failed without a fault: %v", cerr)
			}
			break
		}
		if cerr == nil && inj.ops <= n {
			t.Fatalf("op %d: crash reported after the clean finished", n)
		}
		points++
		label := fmt.Sprintf("crash at op %d", n)
		l2, rep, err := Open(Options{FS: fsys.CrashClone(), Dir: dir, Config: cfg})
		if err != nil {
			t.Fatalf("%s: reopen: %v", label, err)
		}
		checkCompacted(t, label, orig, logRecords(t, l2))
		if !rep.Clean() {
			t.Fatalf("%s: recovery truncated data: %+v", label, rep.Truncated)
		}
		if _, err := l2.Compact(o); err != nil {
			t.Fatalf("%s: clean after recovery: %v", label, err)
		}
		if got := logRecords(t, l2); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: clean after recovery:\n got %v\nwant %v", label, got, want)
		}
		l2.Close()
	}
	if points < 20 {
		t.Fatalf("only %d crash points exercised", points)
	}
	t.Logf("%d crash points", points)
}
