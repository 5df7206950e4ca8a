package logstore

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// diskFull is a disk that can fill up: while full, every write tears half
// way (as a write does that hits ENOSPC mid-way) and fails with ENOSPC,
// and files cannot be created; removing files and truncating still work.
type diskFull struct{ full atomic.Bool }

func (d *diskFull) Inject(op vfs.Op, path string, n int) (int, error) {
	if !d.full.Load() {
		return n, nil
	}
	switch op {
	case vfs.OpWrite:
		return n / 2, syscall.ENOSPC
	case vfs.OpOpen:
		if strings.HasSuffix(path, ".tmp") || strings.HasSuffix(path, ".log") {
			return 0, syscall.ENOSPC
		}
	}
	return n, nil
}

// A log that hits a full disk refuses the append (a transient
// WriteError, nothing acknowledged), and takes appends again as soon as
// there is space, without a reopen; the torn tail never shows, and a
// reopen finds exactly the acknowledged batches.
func TestDiskFullRecoversWithoutReopen(t *testing.T) {
	for name, mode := range map[string]SyncMode{"always": SyncAlways, "never": SyncNever} {
		t.Run(name, func(t *testing.T) {
			disk := &diskFull{}
			mem := vfs.NewMem()
			// Every attempt comes after the full-disk wait, so each
			// one reaches the disk (TestDiskFullBackoff tests the wait).
			clock := epoch
			opts := Options{FS: vfs.NewFaultFS(mem, disk), Dir: "/p", Config: DefaultConfig(), Sync: SyncPolicy{Mode: mode},
				Now: func() time.Time { return clock }}
			opts.Config.SegmentBytes = int64(20 * len(batch(t, 5, epoch.UnixMilli(), "before")))
			l, _, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			var acked []int64
			appendOne := func(tag string) error {
				n := 5
				if tag == "after" {
					n = 1 // shorter than the torn write: a tail left behind would show
				}
				clock = clock.Add(lastNoSpaceWait)
				res, err := l.Append(batch(t, n, epoch.UnixMilli(), tag))
				if err != nil {
					return err
				}
				if err := l.Sync(); err != nil {
					t.Fatalf("sync after a good append: %v", err)
				}
				acked = append(acked, res.BaseOffset)
				return nil
			}
			mustFail := func(what string) {
				err := appendOne("while-full")
				var we *WriteError
				if !errors.As(err, &we) || !we.Transient || !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("append on a full disk (%s): %v, want a transient WriteError wrapping ENOSPC", what, err)
				}
			}
			mustAppend := func(tag string) {
				if err := appendOne(tag); err != nil {
					t.Fatalf("append %s after space came back: %v", tag, err)
				}
			}
			for i := 0; i < 10; i++ {
				mustAppend("before")
			}
			// Writes that tear half way, then shorter batches once
			// there is space: a torn tail left behind would follow them.
			disk.full.Store(true)
			for i := 0; i < 3; i++ {
				mustFail("torn write")
			}
			disk.full.Store(false)
			mustAppend("after")
			mustAppend("after")
			for i := 0; i < 9; i++ {
				mustAppend("before")
			}
			// The next batch needs a new segment; while full the roll
			// fails and changes nothing.
			disk.full.Store(true)
			mustFail("roll")
			disk.full.Store(false)
			mustAppend("before")
			if n := len(l.segments()); n != 2 {
				t.Fatalf("%d segments after the roll, want 2", n)
			}
			check := func(l *Log, when string) {
				got := offsetsOf(t, readAll(t, l, 0))
				if len(got) != len(acked) {
					t.Fatalf("%s: %d batches, want the %d acknowledged", when, len(got), len(acked))
				}
				for i, g := range got {
					if g[0] != acked[i] || i > 0 && g[0] != got[i-1][1]+1 {
						t.Fatalf("%s: batch %d at %v, acknowledged at %d", when, i, g, acked[i])
					}
				}
			}
			check(l, "running")
			// A torn write as the last thing before Close: the reopen
			// must find no tail to cut (the failed write was undone).
			disk.full.Store(true)
			mustFail("torn write before close")
			disk.full.Store(false)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2, rep, err := Open(Options{FS: mem, Dir: "/p", Config: opts.Config})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if len(rep.Truncated) != 0 {
				t.Fatalf("reopen truncated %v: a torn write was left behind", rep.Truncated)
			}
			check(l2, "reopened")
		})
	}
}

// DeleteRecords frees space on a full disk: the segments below the new
// start go first, then the start offset is written.
func TestDiskFullDeleteRecordsFreesSpace(t *testing.T) {
	disk := &diskFull{}
	mem := vfs.NewMem()
	opts := Options{FS: vfs.NewFaultFS(mem, disk), Dir: "/p", Config: DefaultConfig()}
	opts.Config.SegmentBytes = 2048
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 40; i++ {
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "x")); err != nil {
			t.Fatal(err)
		}
	}
	segsBefore := len(l.segments())
	disk.full.Store(true)
	start, err := l.DeleteRecords(100)
	if err != nil || start != 100 {
		t.Fatalf("DeleteRecords on a full disk: %d, %v", start, err)
	}
	if n := len(l.segments()); n >= segsBefore {
		t.Fatalf("%d segments before, %d after: nothing freed", segsBefore, n)
	}
	if got := offsetsOf(t, readAll(t, l, 100)); got[0][0] != 100 {
		t.Fatalf("first batch from 100 is %v", got[0])
	}
}

// On a full disk the log waits before it tries the disk again: appends
// within the wait fail at once without writing, the wait doubles up to
// lastNoSpaceWait, space the log frees itself (DeleteRecords) ends it, and
// the first good write after resets it.
func TestDiskFullBackoff(t *testing.T) {
	disk := &diskFull{}
	var writes atomic.Int64
	count := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpWrite && strings.HasSuffix(path, ".log") {
			writes.Add(1)
		}
		return disk.Inject(op, path, n)
	})
	clock := epoch
	opts := Options{FS: vfs.NewFaultFS(vfs.NewMem(), count), Dir: "/p", Config: DefaultConfig(), Now: func() time.Time { return clock }}
	opts.Config.SegmentBytes = 2048
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendOne := func() error {
		_, err := l.Append(batch(t, 5, epoch.UnixMilli(), "x"))
		return err
	}
	// tries appends once and reports whether it reached the disk; it
	// must fail as a full disk does either way.
	tries := func(what string) bool {
		t.Helper()
		before := writes.Load()
		err := appendOne()
		var we *WriteError
		if !errors.As(err, &we) || !we.Transient || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s: %v, want a transient WriteError wrapping ENOSPC", what, err)
		}
		return writes.Load() > before
	}
	for i := 0; i < 30; i++ {
		if err := appendOne(); err != nil {
			t.Fatal(err)
		}
	}
	disk.full.Store(true)
	if !tries("first append on a full disk") {
		t.Fatal("the first append on a full disk did not try the disk")
	}
	wait := firstNoSpaceWait
	for i := 0; i < 8; i++ {
		for j := 0; j < 5; j++ {
			if tries("append within the wait") {
				t.Fatalf("round %d: an append within the %v wait wrote to the disk", i, wait)
			}
		}
		clock = clock.Add(wait - time.Millisecond)
		if tries("append just before the wait ends") {
			t.Fatalf("round %d: an append before the %v wait ended wrote to the disk", i, wait)
		}
		clock = clock.Add(time.Millisecond)
		if !tries("append after the wait") {
			t.Fatalf("round %d: the append after the %v wait did not try the disk", i, wait)
		}
		wait = min(2*wait, lastNoSpaceWait)
	}
	if wait != lastNoSpaceWait {
		t.Fatalf("the wait grew to %v only", wait)
	}
	// Freeing space through the log ends the wait: the next append
	// tries at once (and, with space back, succeeds).
	if tries("append within the wait") {
		t.Fatal("an append within the wait wrote to the disk")
	}
	if _, err := l.DeleteRecords(100); err != nil {
		t.Fatal(err)
	}
	disk.full.Store(false)
	if err := appendOne(); err != nil {
		t.Fatalf("append right after DeleteRecords freed space: %v", err)
	}
	// The wait starts over from the first one.
	disk.full.Store(true)
	if !tries("first append of a new episode") {
		t.Fatal("the first append of a new full-disk episode did not try the disk")
	}
	clock = clock.Add(firstNoSpaceWait)
	if !tries("append after the first wait of a new episode") {
		t.Fatal("the wait did not start over after a good write")
	}
}

// Any other write failure (EIO) stays sticky: the log refuses writes
// until reopened even once the fault is gone.
func TestWriteEIOStaysSticky(t *testing.T) {
	var eio atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if eio.Load() && op == vfs.OpWrite {
			return n / 2, syscall.EIO
		}
		return n, nil
	})
	l, _, err := Open(Options{FS: vfs.NewFaultFS(vfs.NewMem(), inj), Dir: "/p", Config: DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eio.Store(true)
	_, err = l.Append(batch(t, 1, epoch.UnixMilli(), "x"))
	var we *WriteError
	if !errors.As(err, &we) || we.Transient {
		t.Fatalf("EIO: %v, want a sticky WriteError", err)
	}
	eio.Store(false)
	if _, err := l.Append(batch(t, 1, epoch.UnixMilli(), "y")); !errors.As(err, &we) {
		t.Fatalf("append after EIO: %v, want the sticky error", err)
	}
}

// A log start that DeleteRecords could not save on a full disk is saved
// by Close once there is space: the reopened log starts there.
func TestDiskFullLogStartSavedOnClose(t *testing.T) {
	disk := &diskFull{}
	mem := vfs.NewMem()
	opts := Options{FS: vfs.NewFaultFS(mem, disk), Dir: "/p", Config: DefaultConfig()}
	opts.Config.SegmentBytes = 2048
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "x")); err != nil {
			t.Fatal(err)
		}
	}
	disk.full.Store(true)
	if _, err := l.DeleteRecords(103); err != nil {
		t.Fatal(err)
	}
	disk.full.Store(false)
	if err := l.Close(); err != nil {
		t.Fatalf("close once there is space: %v", err)
	}
	l2, _, err := Open(Options{FS: mem, Dir: "/p", Config: opts.Config})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if got := l2.LogStartOffset(); got != 103 {
		t.Fatalf("reopened log starts at %d, want the 103 DeleteRecords set", got)
	}
}
