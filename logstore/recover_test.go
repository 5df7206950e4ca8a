package logstore

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestTornWriteEveryByte tears the last append at every byte and checks that
// recovery keeps exactly the batches before it and reports the cut.
func TestTornWriteEveryByte(t *testing.T) {
	var prefix [][]byte
	for i := 0; i < 5; i++ {
		prefix = append(prefix, batch(t, 1+i, int64(i), "p"))
	}
	last := batch(t, 7, 100, "last")
	for k := 0; k < len(last); k++ {
		mem := vfs.NewMem()
		inj := &vfs.FailNth{Op: vfs.OpWrite, N: len(prefix) + 1, Tear: k, Sticky: true}
		opts := Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/d", Config: DefaultConfig()}
		l, _, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for _, b := range prefix {
			c := append([]byte(nil), b...)
			if _, err := l.Append(c); err != nil {
				t.Fatal(err)
			}
			want = append(want, c...)
		}
		_, err = l.Append(append([]byte(nil), last...))
		var we *WriteError
		if !errors.As(err, &we) {
			t.Fatalf("k=%d: torn append returned %v", k, err)
		}
		// Sticky: the log refuses further writes.
		if _, err := l.Append(batch(t, 1, 1, "x")); !errors.As(err, &we) {
			t.Fatalf("k=%d: append after failure: %v", k, err)
		}
		l.Close()
		// Reopen on the same (un-crashed) memory: the torn bytes are there.
		l2, rep, err := Open(Options{FS: mem, Dir: "/d", Config: DefaultConfig()})
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if k == 0 {
			if len(rep.Truncated) != 0 {
				t.Fatalf("k=0: reported %v", rep.Truncated)
			}
		} else if len(rep.Truncated) != 1 || rep.Truncated[0].Dropped != int64(k) || rep.Truncated[0].Pos != int64(len(want)) {
			t.Fatalf("k=%d: report %+v", k, rep.Truncated)
		}
		if l2.LogEndOffset() != 15 {
			t.Fatalf("k=%d: leo %d", k, l2.LogEndOffset())
		}
		if got := readAll(t, l2, 0); !bytes.Equal(got, want) {
			t.Fatalf("k=%d: content differs", k)
		}
		// And the log is writable again, continuing at the right offset.
		res, err := l2.Append(append([]byte(nil), last...))
		if err != nil || res.BaseOffset != 15 {
			t.Fatalf("k=%d: append after recovery %+v %v", k, res, err)
		}
		l2.Close()
	}
}

// TestTornWriteOS checks the same on real files for a few tear points.
func TestTornWriteOS(t *testing.T) {
	e := osEnv(t)
	l, _ := e.open(t)
	a, b := batch(t, 3, 1, "a"), batch(t, 4, 2, "b")
	l.Append(append([]byte(nil), a...))
	l.Append(append([]byte(nil), b...))
	// Simulate a crash: no Close, so no index for the active segment.
	l.Sync()
	name := l.path(0, ".log")
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(int64(len(a) + len(b)/2))
	f.Close()
	l2, rep := e.open(t)
	defer l2.Close()
	if len(rep.Truncated) != 1 || rep.Truncated[0].Pos != int64(len(a)) || l2.LogEndOffset() != 3 {
		t.Fatalf("report %+v leo %d", rep, l2.LogEndOffset())
	}
	if st, _ := os.Stat(name); st.Size() != int64(len(a)) {
		t.Fatalf("file not truncated: %d", st.Size())
	}
}

func flipByte(t *testing.T, fsys vfs.FS, name string, pos int64) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	f.ReadAt(b[:], pos)
	b[0] ^= 0x10
	f.WriteAt(b[:], pos)
}

func TestBitFlipSealedSegment(t *testing.T) {
	setup := func(t *testing.T) (*testEnv, string, int64) {
		e := memEnv(t)
		e.opts.Config.SegmentBytes = 1000
		l, _ := e.open(t)
		for i := 0; i < 40; i++ {
			if _, err := l.Append(batch(t, 3, int64(i), "s")); err != nil {
				t.Fatal(err)
			}
		}
		if len(l.segments()) < 3 {
			t.Fatal("want several segments")
		}
		seg := l.segments()[1]
		name := l.path(seg.base, ".log")
		pos := seg.size.Load() / 2
		l.Close()
		return e, name, pos
	}
	check := func(t *testing.T, e *testEnv, name string) {
		_, _, err := Open(e.opts)
		var ce *CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorruptLog) || ce.File != name {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "at byte") {
			t.Fatalf("error does not name file and position: %v", err)
		}
	}
	t.Run("VerifyAll", func(t *testing.T) {
		e, name, pos := setup(t)
		flipByte(t, e.fs, name, pos)
		e.opts.VerifyAll = true
		check(t, e, name)
	})
	// Without index files proving its seal, but before segments whose
	// seals are proven: seals finish in roll order, so it was sealed too,
	// and damage is not a torn write.
	t.Run("IndexMissing", func(t *testing.T) {
		e, name, pos := setup(t)
		flipByte(t, e.fs, name, pos)
		e.fs.Remove(strings.TrimSuffix(name, ".log") + ".index")
		check(t, e, name)
	})
	t.Run("IndexDamaged", func(t *testing.T) {
		e, name, pos := setup(t)
		flipByte(t, e.fs, name, pos)
		flipByte(t, e.fs, strings.TrimSuffix(name, ".log")+".timeindex", 40)
		check(t, e, name)
	})
	t.Run("IndexDamagedNoFlip", func(t *testing.T) {
		// A bad index alone is rebuilt, not an error.
		e, name, _ := setup(t)
		flipByte(t, e.fs, strings.TrimSuffix(name, ".log")+".index", 10)
		l, rep := e.open(t)
		defer l.Close()
		if len(rep.IndexesRebuilt) != 1 || len(rep.Truncated) != 0 {
			t.Fatalf("report %+v", rep)
		}
		if l.LogEndOffset() != 120 {
			t.Fatal(l.LogEndOffset())
		}
	})
}

func TestBitFlipActiveTail(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	var sizes []int
	for i := 0; i < 10; i++ {
		b := batch(t, 2, int64(i), "t")
		sizes = append(sizes, len(b))
		l.Append(b)
	}
	l.Sync()
	// No Close: the active segment has no index and is rescanned.
	total := 0
	for _, s := range sizes[:8] {
		total += s
	}
	flipByte(t, e.fs, l.path(0, ".log"), int64(total+70)) // inside batch 8
	l2, rep := e.open(t)
	defer l2.Close()
	if len(rep.Truncated) != 1 || rep.Truncated[0].Pos != int64(total) || !strings.Contains(rep.Truncated[0].Reason, "crc") {
		t.Fatalf("report %+v", rep.Truncated)
	}
	if l2.LogEndOffset() != 16 {
		t.Fatal(l2.LogEndOffset())
	}
}

func TestRecoverySweepsDebris(t *testing.T) {
	e := memEnv(t)
	l, _ := e.open(t)
	l.Append(batch(t, 2, 1, "a"))
	l.Close()
	for _, n := range []string{"00000000000000000000.index.tmp", "00000000000000000007.log.deleted", "00000000000000000099.index", "logstart.tmp"} {
		f, _ := e.fs.OpenFile(e.dir+"/"+n, os.O_RDWR|os.O_CREATE, 0o644)
		f.Write([]byte("junk"))
		f.Close()
	}
	l2, rep := e.open(t)
	defer l2.Close()
	if len(rep.RemovedFiles) != 4 {
		t.Fatalf("removed %v", rep.RemovedFiles)
	}
	names, _ := e.fs.ReadDir(e.dir)
	if strings.Join(names, ",") != "00000000000000000000.index,00000000000000000000.log,00000000000000000000.timeindex" {
		t.Fatalf("left %v", names)
	}
}

// SmallActiveBytes: Close leaves a small active segment without index
// files and the next open rescans it; after a clean shutdown
// (CleanShutdown) that rescan is not fsynced, after a crash it is.
func TestSmallActiveSegmentRescannedAfterClose(t *testing.T) {
	mem := vfs.NewMem()
	var syncs atomic.Int64
	fsys := vfs.NewFaultFS(mem, vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(path, ".log") {
			syncs.Add(1)
		}
		return n, nil
	}))
	opts := Options{FS: fsys, Dir: "/d/t-0", Config: DefaultConfig(), SmallActiveBytes: 1 << 20, Sync: SyncPolicy{Mode: SyncAlways}}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(batch(t, 1, int64(i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := mem.ReadDir(opts.Dir)
	if strings.Join(names, ",") != "00000000000000000000.log" {
		t.Fatalf("after Close: %v, want the segment alone", names)
	}
	for _, clean := range []bool{true, false} {
		opts.CleanShutdown = clean
		syncs.Store(0)
		l, rep, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rescanned) != 1 || l.LogEndOffset() != 3 {
			t.Fatalf("clean %v: rescanned %v, end %d", clean, rep.Rescanned, l.LogEndOffset())
		}
		if got := syncs.Load(); clean && got != 0 || !clean && got == 0 {
			t.Fatalf("clean %v: %d fsyncs of the segment at open", clean, got)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
