package logstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

func fill(t *testing.T, l *Log, n int, ts func(i int) int64) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.Append(batch(t, 2, ts(i), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRetentionBytesAndTime(t *testing.T) {
	e := memEnv(t)
	e.opts.Config.SegmentBytes = 1000
	l, _ := e.open(t)
	defer l.Close()
	now := epoch.UnixMilli()
	fill(t, l, 60, func(i int) int64 { return now + int64(i)*1000 })
	nseg := len(l.segments())
	if nseg < 4 {
		t.Fatal(nseg)
	}
	// Time: everything older than batch 30's timestamp goes, but only whole
	// sealed segments, and never the active one.
	c := l.config()
	c.RetentionMs = 0
	l.SetConfig(c)
	n, err := l.EnforceRetention(epoch.Add(30 * time.Second))
	if err != nil || n == 0 {
		t.Fatal(n, err)
	}
	first := l.segments()[0]
	if first.maxTs < now+30*1000 || l.LogStartOffset() != first.base {
		t.Fatalf("kept segment max ts %d, log start %d base %d", first.maxTs, l.LogStartOffset(), first.base)
	}
	// Size: keep under 1500 bytes.
	c.RetentionMs = -1
	c.RetentionBytes = 1500
	l.SetConfig(c)
	if _, err := l.EnforceRetention(epoch); err != nil {
		t.Fatal(err)
	}
	if l.Size() > 1500+1000 || len(l.segments()) > 3 {
		t.Fatalf("size %d in %d segments", l.Size(), len(l.segments()))
	}
	if _, err := l.Read(ReadOptions{Offset: 0, MaxBytes: 100}); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatal(err)
	}
	if got := readAll(t, l, l.LogStartOffset()); len(offsetsOf(t, got)) == 0 {
		t.Fatal("nothing left to read")
	}
	l.waitSeals() // sealed segments get their index files in the background
	names, _ := e.fs.ReadDir(e.dir)
	if len(names) != 3*(len(l.segments())-1)+1 {
		t.Fatalf("files left: %v", names)
	}
}

// TestRetentionWhileReading: a reader holding ranges of a segment keeps its
// bytes readable after retention deletes it; the file goes on Release.
func TestRetentionWhileReading(t *testing.T) {
	for name, mk := range map[string]func(testing.TB) *testEnv{"mem": memEnv, "os": osEnv} {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			e.opts.Config.SegmentBytes = 1000
			l, _ := e.open(t)
			defer l.Close()
			fill(t, l, 40, func(i int) int64 { return int64(i) })
			r, err := l.Read(ReadOptions{Offset: 0, MaxBytes: 500})
			if err != nil || r.Size == 0 {
				t.Fatal(err)
			}
			c := l.config()
			c.RetentionBytes = 0
			l.SetConfig(c)
			if n, err := l.EnforceRetention(epoch); err != nil || n == 0 {
				t.Fatal(n, err)
			}
			if _, err := e.fs.Stat(filepath.Join(e.dir, segName(0, ".log.deleted"))); err != nil {
				t.Fatalf("deleted segment should wait for its reader: %v", err)
			}
			b, err := r.AppendTo(nil)
			if err != nil || len(offsetsOf(t, b)) == 0 || offsetsOf(t, b)[0][0] != 0 {
				t.Fatalf("reader lost its data: %v", err)
			}
			r.Release()
			r.Release()
			// A background seal of a segment rolled by fill may hold the
			// last reference a moment longer (its fsync); the file goes
			// when that is released too.
			l.waitSeals()
			if _, err := e.fs.Stat(filepath.Join(e.dir, segName(0, ".log.deleted"))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("deleted segment not removed after release: %v", err)
			}
		})
	}
}

func TestDeleteRecordsPersisted(t *testing.T) {
	e := memEnv(t)
	e.opts.Config.SegmentBytes = 1000
	l, _ := e.open(t)
	fill(t, l, 40, func(i int) int64 { return int64(i) })
	if _, err := l.DeleteRecords(l.HighWatermark() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatal(err)
	}
	n, err := l.DeleteRecords(33)
	if err != nil || n != 33 || l.LogStartOffset() != 33 {
		t.Fatal(n, err)
	}
	if n, _ := l.DeleteRecords(10); n != 33 {
		t.Fatal("log start moved back", n)
	}
	if l.segments()[0].base > 33 || l.segments()[0].next.Load() <= 33 {
		t.Fatal("wrong segments deleted")
	}
	// Offset 33 is inside batch [32,33]: reading it returns that batch.
	r, err := l.Read(ReadOptions{Offset: 33, MaxBytes: 1, MinOneBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.AppendTo(nil)
	r.Release()
	if offsetsOf(t, b)[0] != [2]int64{32, 33} {
		t.Fatal(offsetsOf(t, b))
	}
	if _, err := l.Read(ReadOptions{Offset: 32}); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatal(err)
	}
	// Survives a crash (not only a clean close) once the rolled segments
	// are sealed (fsynced in the background).
	l.waitSeals()
	l2, _, err := Open(Options{FS: e.fs.(*vfs.MemFS).CrashClone(), Dir: e.dir, Config: e.opts.Config})
	if err != nil || l2.LogStartOffset() != 33 {
		t.Fatal(err, l2.LogStartOffset())
	}
	l2.Close()
	// Deleting everything rolls the active segment away.
	if n, err := l.DeleteRecords(-1); err != nil || n != 80 {
		t.Fatal(n, err)
	}
	if len(l.segments()) != 1 || l.segments()[0].base != 80 || l.Size() != 0 {
		t.Fatalf("segments %d size %d", len(l.segments()), l.Size())
	}
	res, _ := l.Append(batch(t, 1, 1, "x"))
	if res.BaseOffset != 80 || res.LogStartOffset != 80 {
		t.Fatal(res)
	}
	l.Close()
	l3, _ := e.open(t)
	defer l3.Close()
	if l3.LogStartOffset() != 80 || l3.LogEndOffset() != 81 {
		t.Fatal(l3.LogStartOffset(), l3.LogEndOffset())
	}
}

func TestTruncate(t *testing.T) {
	e := memEnv(t)
	e.opts.Config.SegmentBytes = 1000
	l, _ := e.open(t)
	fill(t, l, 40, func(i int) int64 { return int64(i) })
	nseg := len(l.segments())
	// Offset 21 is inside batch [20,21]: the whole batch goes.
	if err := l.Truncate(21); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 20 || l.HighWatermark() != 20 || len(l.segments()) >= nseg {
		t.Fatalf("leo %d hw %d segs %d", l.LogEndOffset(), l.HighWatermark(), len(l.segments()))
	}
	got := readAll(t, l, 0)
	if offs := offsetsOf(t, got); offs[len(offs)-1][1] != 19 {
		t.Fatal(offs[len(offs)-1])
	}
	res, err := l.Append(batch(t, 3, 500, "after"))
	if err != nil || res.BaseOffset != 20 {
		t.Fatal(res, err)
	}
	if off, ts, ok, _ := l.OffsetForTimestamp(400); !ok || off != 20 || ts != 500 {
		t.Fatal(off, ts, ok)
	}
	// A crash right now: the truncated segment is rescanned and agrees.
	l2, _, err := Open(Options{FS: e.fs.(*vfs.MemFS).CrashClone(), Dir: e.dir, Config: e.opts.Config})
	if err != nil {
		t.Fatal(err)
	}
	if l2.LogEndOffset() > 23 || l2.LogEndOffset() < 20 {
		t.Fatal(l2.LogEndOffset())
	}
	l2.Close()
	// Below the first segment: the log restarts empty there.
	if _, err := l.DeleteRecords(l.HighWatermark()); err != nil || l.segments()[0].base <= 4 {
		t.Fatal(err)
	}
	if err := l.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 4 || l.LogEndOffset() != 4 || l.Size() != 0 {
		t.Fatal(l.LogStartOffset(), l.LogEndOffset())
	}
	l.Close()
	l3, _ := e.open(t)
	defer l3.Close()
	if l3.LogStartOffset() != 4 || l3.LogEndOffset() != 4 {
		t.Fatal(l3.LogStartOffset(), l3.LogEndOffset())
	}
}

func TestTimestamps(t *testing.T) {
	e := memEnv(t)
	e.opts.Config.SegmentBytes = 1500
	e.opts.Config.IndexIntervalBytes = 200
	l, _ := e.open(t)
	if off, ts := l.MaxTimestamp(); off != -1 || ts != -1 {
		t.Fatal(off, ts)
	}
	// Batch i holds offsets 2i, 2i+1 with timestamps 1000+10i, 1000+10i+1,
	// except batch 25 which goes back in time.
	fill(t, l, 50, func(i int) int64 {
		if i == 25 {
			return 500
		}
		return 1000 + int64(i)*10
	})
	check := func(l *Log) {
		t.Helper()
		for _, c := range []struct{ q, off, ts int64 }{
			{0, 0, 1000}, {1000, 0, 1000}, {1001, 1, 1001}, {1002, 2, 1010},
			{400, 0, 1000}, {1245, 52, 1260}, {1490, 98, 1490}, {1491, 99, 1491}, {1492, -1, -1},
		} {
			off, ts, ok, err := l.OffsetForTimestamp(c.q)
			if err != nil || ok != (c.off >= 0) || (ok && (off != c.off || ts != c.ts)) {
				t.Fatalf("OffsetForTimestamp(%d) = %d %d %v %v, want %d %d", c.q, off, ts, ok, err, c.off, c.ts)
			}
		}
		if off, ts := l.MaxTimestamp(); off != 99 || ts != 1491 {
			t.Fatalf("MaxTimestamp %d %d", off, ts)
		}
	}
	check(l)
	l.Close()
	l2, rep := e.open(t)
	if len(rep.Rescanned) != 0 {
		t.Fatal(rep.Rescanned)
	}
	check(l2)
	l2.Close()
	// Rebuilt indexes give the same answers.
	names, _ := e.fs.ReadDir(e.dir)
	for _, n := range names {
		if strings.HasSuffix(n, "index") {
			e.fs.Remove(filepath.Join(e.dir, n))
		}
	}
	l3, rep := e.open(t)
	defer l3.Close()
	if len(rep.Rescanned) != len(l3.segments()) {
		t.Fatal(rep.Rescanned)
	}
	check(l3)
}

func TestLogAppendTime(t *testing.T) {
	e := memEnv(t)
	e.opts.Config.LogAppendTime = true
	e.opts.Now = func() time.Time { return epoch }
	l, _ := e.open(t)
	defer l.Close()
	res, err := l.Append(batch(t, 3, 5, "lat"))
	if err != nil || res.AppendTimeMs != epoch.UnixMilli() {
		t.Fatal(res, err)
	}
	b := readAll(t, l, 0)
	h, err := records.Validate(b)
	if err != nil || !h.HasLogAppendTime() || h.MaxTimestamp != epoch.UnixMilli() {
		t.Fatal(h, err)
	}
	if off, ts, ok, _ := l.OffsetForTimestamp(epoch.UnixMilli()); !ok || off != 0 || ts != epoch.UnixMilli() {
		t.Fatal(off, ts, ok)
	}
}

func TestSegmentMsRoll(t *testing.T) {
	e := memEnv(t)
	now := epoch
	e.opts.Now = func() time.Time { return now }
	e.opts.Config.SegmentMs = time.Minute
	l, _ := e.open(t)
	defer l.Close()
	l.Append(batch(t, 1, 1, "a"))
	now = now.Add(30 * time.Second)
	l.Append(batch(t, 1, 1, "b"))
	if len(l.segments()) != 1 {
		t.Fatal("rolled early")
	}
	now = now.Add(31 * time.Second)
	l.Append(batch(t, 1, 1, "c"))
	if len(l.segments()) != 2 || l.segments()[1].base != 2 {
		t.Fatal("did not roll by age")
	}
}

func TestChangedAndReadBounds(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	ch := l.Changed()
	select {
	case <-ch:
		t.Fatal("fired early")
	default:
	}
	l.Append(batch(t, 4, 1, "a"))
	<-ch
	l.Append(batch(t, 4, 1, "b"))
	l.Append(batch(t, 4, 1, "c"))
	// MaxOffset (an LSO) cuts before the batch containing it.
	r, _ := l.Read(ReadOptions{Offset: 0, MaxBytes: 1 << 20, MaxOffset: 8})
	b, _ := r.AppendTo(nil)
	r.Release()
	if offs := offsetsOf(t, b); len(offs) != 2 || r.HighWatermark != 12 {
		t.Fatal(offs)
	}
	r, _ = l.Read(ReadOptions{Offset: 0, MaxBytes: 1 << 20, MaxOffset: 6})
	if b, _ := r.AppendTo(nil); len(offsetsOf(t, b)) != 1 {
		t.Fatal(offsetsOf(t, b))
	}
	r.Release()
	// MaxBytes cuts at a batch boundary.
	one := len(readAll(t, l, 0)) / 3
	r, _ = l.Read(ReadOptions{Offset: 0, MaxBytes: 2*one + one/2})
	if r.Size != int64(2*one) {
		t.Fatal(r.Size, one)
	}
	r.Release()
	ch = l.Changed()
	l.Close()
	<-ch
	if _, err := l.Append(batch(t, 1, 1, "x")); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	<-l.Changed()
}

func TestStickySyncFailure(t *testing.T) {
	mem := vfs.NewMem()
	inj := &vfs.FailNth{Op: vfs.OpSync, N: 2}
	l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/d", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := l.Append(batch(t, 1, 1, "a"))
	if err := l.WaitDurable(context.Background(), r1.LastOffset+1); err != nil {
		t.Fatal(err)
	}
	r2, _ := l.Append(batch(t, 1, 1, "b"))
	err = l.WaitDurable(context.Background(), r2.LastOffset+1)
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, vfs.ErrInjected) {
		t.Fatal(err)
	}
	if l.HighWatermark() != 1 {
		t.Fatal("unsynced data became visible", l.HighWatermark())
	}
	// The next fsync would succeed, but the log must not pretend: sticky.
	if _, err := l.Append(batch(t, 1, 1, "c")); !errors.As(err, &we) {
		t.Fatal(err)
	}
	if err := l.WaitDurable(context.Background(), 2); !errors.As(err, &we) {
		t.Fatal(err)
	}
	l.Close()
	l2, _, err := Open(Options{FS: mem, Dir: "/d", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if _, err := l2.Append(batch(t, 1, 1, "d")); err != nil {
		t.Fatal(err)
	}
}

// countSyncs counts file fsyncs.
type countSyncs struct{ n atomic.Int64 }

func (c *countSyncs) Inject(op vfs.Op, _ string, n int) (int, error) {
	if op == vfs.OpSync {
		c.n.Add(1)
	}
	return n, nil
}

func TestGroupCommit(t *testing.T) {
	cnt := &countSyncs{}
	// A slow fsync makes appenders pile up behind it, as on a real disk.
	slow := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if op == vfs.OpSync {
			time.Sleep(2 * time.Millisecond)
		}
		return cnt.Inject(op, p, n)
	})
	l, _, err := Open(Options{FS: vfs.NewFaultFS(vfs.NewMem(), slow), Dir: "/d", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res, err := l.Append(batch(t, 1, 1, "g"))
				if err == nil {
					err = l.WaitDurable(context.Background(), res.LastOffset+1)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if l.HighWatermark() != writers*each {
		t.Fatal(l.HighWatermark())
	}
	syncs := cnt.n.Load()
	t.Logf("%d acknowledged appends, %d fsyncs", writers*each, syncs)
	if syncs > writers*each/2 {
		t.Fatalf("no group commit: %d fsyncs for %d appends", syncs, writers*each)
	}
}

func TestIntervalPolicy(t *testing.T) {
	mem := vfs.NewMem()
	l, _, err := Open(Options{FS: mem, Dir: "/d", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncInterval, Interval: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Append(batch(t, 3, 1, "a"))
	if l.HighWatermark() != 3 {
		t.Fatal("interval policy hides unsynced data")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l2, _, err := Open(Options{FS: mem.CrashClone(), Dir: "/d", Config: DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		leo := l2.LogEndOffset()
		l2.Close()
		if leo == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("interval fsync never happened")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestParseSyncPolicy(t *testing.T) {
	for s, want := range map[string]SyncPolicy{"always": {Mode: SyncAlways}, "never": {Mode: SyncNever}, "interval=100ms": {Mode: SyncInterval, Interval: 100 * time.Millisecond}} {
		p, err := ParseSyncPolicy(s)
		if err != nil || p != want || p.String() != s {
			t.Errorf("%s: %+v %v", s, p, err)
		}
	}
	for _, s := range []string{"", "sometimes", "interval=", "interval=-1s"} {
		if _, err := ParseSyncPolicy(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestFileCacheBounded opens many partitions sharing a small cache and
// checks the number of open files stays bounded while all are used.
func TestFileCacheBounded(t *testing.T) {
	root := t.TempDir()
	cache := NewFileCache(32)
	const parts = 200
	logs := make([]*Log, parts)
	for i := range logs {
		l, _, err := Open(Options{Dir: filepath.Join(root, fmt.Sprint("t-", i)), Config: DefaultConfig(), Files: cache})
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
		if n := cache.Open(); n > 32 {
			t.Fatalf("%d files open after opening %d logs", n, i+1)
		}
	}
	for round := 0; round < 2; round++ {
		for i, l := range logs {
			if _, err := l.Append(batch(t, 1, 1, fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, l, 0); len(offsetsOf(t, got)) != round+1 {
				t.Fatal("bad read")
			}
		}
	}
	if n := cache.Open(); n > 32 {
		t.Fatalf("%d files open", n)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil && len(fds) > 200 {
		t.Fatalf("%d descriptors open for %d partitions", len(fds), parts)
	}
	for _, l := range logs {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := cache.Open(); n != 0 {
		t.Fatalf("%d files open after close", n)
	}
}

func TestDestroy(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	l.Append(batch(t, 1, 1, "a"))
	if err := l.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fs.Stat(e.dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// TestManyIdlePartitions opens 10 000 partitions with data, closes and
// reopens them, and checks descriptors stay bounded and memory per idle
// partition is modest.
func TestManyIdlePartitions(t *testing.T) {
	n := 10000
	if testing.Short() || raceEnabled {
		n = 2000
	}
	mem := vfs.NewMem()
	cache := NewFileCache(64)
	logs := make([]*Log, n)
	for i := range logs {
		l, _, err := Open(Options{FS: mem, Dir: fmt.Sprintf("/data/t-%d", i), Config: DefaultConfig(), Files: cache})
		if err != nil {
			t.Fatal(err)
		}
		l.Append(batch(t, 1, 1, "x"))
		l.Close()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range logs {
		l, rep, err := Open(Options{FS: mem, Dir: fmt.Sprintf("/data/t-%d", i), Config: DefaultConfig(), Files: cache})
		if err != nil || len(rep.Rescanned) != 0 {
			t.Fatal(err, rep.Rescanned)
		}
		logs[i] = l
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPart := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
	t.Logf("%d idle partitions: %d files open, ~%d bytes of heap each", n, cache.Open(), perPart)
	if cache.Open() > 64 {
		t.Fatalf("%d files open", cache.Open())
	}
	if perPart > 8<<10 {
		t.Fatalf("%d bytes per idle partition", perPart)
	}
	for _, l := range logs {
		if got := readAll(t, l, 0); len(got) == 0 {
			t.Fatal("no data")
		}
	}
	if cache.Open() > 64 {
		t.Fatalf("%d files open after reading all", cache.Open())
	}
	for _, l := range logs {
		l.Close()
	}
}

// TestSyncAlwaysWithoutWaiters: under SyncAlways data appended by callers
// that never wait (acks=1) still becomes durable and visible.
func TestSyncAlwaysWithoutWaiters(t *testing.T) {
	e := memEnv(t)
	e.opts.Sync = SyncPolicy{Mode: SyncAlways}
	l, _ := e.open(t)
	defer l.Close()
	for i := 0; i < 20; i++ {
		ch := l.Changed()
		if _, err := l.Append(batch(t, 2, 1, "a")); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatal("high watermark never advanced")
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.HighWatermark() != 40 {
		if time.Now().After(deadline) {
			t.Fatalf("hw stuck at %d", l.HighWatermark())
		}
		<-l.Changed()
	}
	l2, _, err := Open(Options{FS: e.fs.(*vfs.MemFS).CrashClone(), Dir: e.dir, Config: DefaultConfig()})
	if err != nil || l2.LogEndOffset() != 40 {
		t.Fatal(err, l2.LogEndOffset())
	}
	l2.Close()
}
