package logstore

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// After a crash (no Close), an open reads only the active segment's tail
// past its last recovery checkpoint, not the whole segment, and what it
// recovers is the same log: every batch, offsets continuing, timestamp
// lookups answered in the checkpointed part and the rescanned tail.
func TestRecoveryCheckpointBoundsRescan(t *testing.T) {
	const checkpoint = 64 << 10
	mem := vfs.NewMem()
	var logRead atomic.Int64
	count := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpRead && strings.HasSuffix(path, ".log") {
			logRead.Add(int64(n))
		}
		return n, nil
	})
	opts := Options{FS: vfs.NewFaultFS(mem, count), Dir: "/p", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways},
		RecoveryCheckpointBytes: checkpoint}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var written []byte
	for i := 0; len(written) < 20*checkpoint+checkpoint/3; i++ {
		b := batch(t, 10, epoch.UnixMilli()+int64(i)*1000, "v")
		res, err := l.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(t.Context(), res.LastOffset+1); err != nil {
			t.Fatal(err)
		}
		written = append(written, b...)
	}
	size := int64(len(written))
	leo := l.LogEndOffset()
	if n := len(l.segments()); n != 1 {
		t.Fatalf("%d segments: the test needs all of it in the active one", n)
	}
	// Checkpoints run in the background; the last one may still be
	// running (a crash then would rescan from the one before).
	l.waitCheckpoint()
	// A power cut, not a Close: the next open finds what was fsynced.
	logRead.Store(0)
	l2, rep := reopenAfterPowerCut(t, l, mem, opts, func(fsys vfs.FS) vfs.FS { return vfs.NewFaultFS(fsys, count) })
	if len(rep.Checkpointed) != 1 || len(rep.Truncated) != 0 {
		t.Fatalf("report %+v: want the active segment rescanned from its checkpoint, nothing cut", rep)
	}
	if r := logRead.Load(); r > 2*checkpoint {
		t.Fatalf("open read %d bytes of a %d-byte segment, want at most %d (the tail after the checkpoint)", r, size, 2*checkpoint)
	}
	if l2.LogEndOffset() != leo {
		t.Fatalf("log end %d after the crash, want %d", l2.LogEndOffset(), leo)
	}
	// Append set the base offsets in the bytes it was given.
	got := readAll(t, l2, 0)
	if !bytes.Equal(got, written) {
		t.Fatalf("recovered %d bytes, wrote %d", len(got), len(written))
	}
	// Timestamp lookups in the checkpointed part and in the tail.
	for _, i := range []int64{3, leo/10 - 1} {
		want := i * 10
		off, _, ok, err := l2.OffsetForTimestamp(epoch.UnixMilli() + i*1000)
		if err != nil || !ok || off != want {
			t.Fatalf("offset for the timestamp of batch %d: %d %v %v, want %d", i, off, ok, err, want)
		}
	}
	if _, ts := l2.MaxTimestamp(); ts != epoch.UnixMilli()+(leo/10-1)*1000+9 {
		t.Fatalf("max timestamp %d", ts)
	}
	// Appends continue where the log ended.
	res, err := l2.Append(batch(t, 1, epoch.UnixMilli(), "after"))
	if err != nil || res.BaseOffset != leo {
		t.Fatalf("append after recovery: %+v %v, want offset %d", res, err, leo)
	}
}

// A recovery checkpoint never hides a torn tail: data past it is rescanned
// and a torn batch there is cut, the checkpointed part kept.
func TestRecoveryCheckpointTornTail(t *testing.T) {
	mem := vfs.NewMem()
	opts := Options{FS: mem, Dir: "/p", Config: DefaultConfig(), RecoveryCheckpointBytes: 4 << 10}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "v")); err != nil {
			t.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.waitCheckpoint() // checkpoints run in the background
	// Half a batch at the end, as a write cut by a crash leaves it.
	f, err := mem.OpenFile("/p/00000000000000000000.log", 2 /* O_RDWR */, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	half := batch(t, 5, epoch.UnixMilli(), "torn")
	if _, err := f.WriteAt(half[:len(half)/2], st.Size()); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
	l2, rep := reopenAfterPowerCut(t, l, mem, opts, nil)
	if len(rep.Checkpointed) != 1 || len(rep.Truncated) != 1 || rep.Truncated[0].Dropped != int64(len(half)/2) {
		t.Fatalf("report %+v: want a rescan from the checkpoint that cuts the torn half batch", rep)
	}
	if l2.LogEndOffset() != leo {
		t.Fatalf("log end %d, want %d", l2.LogEndOffset(), leo)
	}
	if got := offsetsOf(t, readAll(t, l2, 0)); len(got) != 200 {
		t.Fatalf("%d batches after recovery, want 200", len(got))
	}
}

// A recovery checkpoint that cannot be written costs only a longer rescan:
// the append that triggered it succeeds and a crash recovers everything.
// One whose fsync fails makes the log refuse writes (as any failed fsync)
// without failing the append whose data was already written, and
// WaitDurable reports the failure instead of acknowledging it.
func TestRecoveryCheckpointFailures(t *testing.T) {
	t.Run("index write", func(t *testing.T) {
		mem := vfs.NewMem()
		inj := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
			if op == vfs.OpWrite && strings.Contains(path, ".index") {
				return 0, syscall.ENOSPC
			}
			return n, nil
		})
		opts := Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}, RecoveryCheckpointBytes: 4 << 10}
		l, _, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			res, err := l.Append(batch(t, 5, epoch.UnixMilli(), "v"))
			if err != nil {
				t.Fatalf("append %d with checkpoints failing: %v", i, err)
			}
			if err := l.WaitDurable(t.Context(), res.LastOffset+1); err != nil {
				t.Fatal(err)
			}
		}
		leo := l.LogEndOffset()
		l2, rep := reopenAfterPowerCut(t, l, mem, opts, nil)
		if len(rep.Checkpointed) != 0 || l2.LogEndOffset() != leo {
			t.Fatalf("report %+v, log end %d: want a full rescan finding all %d", rep, l2.LogEndOffset(), leo)
		}
	})
	t.Run("segment fsync", func(t *testing.T) {
		var failing atomic.Bool
		inj := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
			if failing.Load() && op == vfs.OpSync && strings.HasSuffix(path, ".log") {
				return 0, syscall.EIO
			}
			return n, nil
		})
		opts := Options{FS: vfs.NewFaultFS(vfs.NewMem(), inj), Dir: "/p", Config: DefaultConfig(), Sync: SyncPolicy{Mode: SyncAlways}, RecoveryCheckpointBytes: 4 << 10}
		l, _, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		b := batch(t, 5, epoch.UnixMilli(), "v")
		for l.active.size.Load()+int64(len(b)) < 4<<10 {
			if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "v")); err != nil {
				t.Fatal(err)
			}
		}
		failing.Store(true)
		res, err := l.Append(b) // crosses the checkpoint: its fsync fails
		if err != nil {
			t.Fatalf("the append that triggered the failed checkpoint: %v", err)
		}
		if err := l.WaitDurable(t.Context(), res.LastOffset+1); err == nil {
			t.Fatal("WaitDurable acknowledged data whose fsync failed")
		}
		var we *WriteError
		if _, err := l.Append(batch(t, 1, epoch.UnixMilli(), "after")); !errors.As(err, &we) || we.Transient {
			t.Fatalf("append after the failed fsync: %v, want a sticky WriteError", err)
		}
	})
}

// reopenAfterPowerCut takes the image a power loss would leave of mem,
// closes l, and opens the log again from that image (seen through wrap,
// when not nil); the reopened log is closed at the end of the test.
func reopenAfterPowerCut(t *testing.T, l *Log, mem *vfs.MemFS, opts Options, wrap func(vfs.FS) vfs.FS) (*Log, *RecoveryReport) {
	t.Helper()
	var crashed vfs.FS = mem.CrashClone()
	l.Close()
	if wrap != nil {
		crashed = wrap(crashed)
	}
	opts.FS = crashed
	l2, rep, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l2.Close() })
	return l2, rep
}

// blockFirstLogSync returns an injector that holds the first fsync of a
// .log file until release is closed (at most 20 s), and a channel closed
// when that fsync has started.
func blockFirstLogSync(release <-chan struct{}) (vfs.Injector, <-chan struct{}) {
	var once atomic.Bool
	started := make(chan struct{})
	return vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpSync && strings.HasSuffix(path, ".log") && once.CompareAndSwap(false, true) {
			close(started)
			select {
			case <-release:
			case <-time.After(20 * time.Second):
			}
		}
		return n, nil
	}), started
}

// A recovery checkpoint is not on the append path: with durability never,
// appends crossing the checkpoint size go on while its fsync is stuck, and
// the checkpoint lands once the fsync returns, so a crash then rescans only
// the tail.
func TestRecoveryCheckpointOffAppendPath(t *testing.T) {
	const checkpoint = 16 << 10
	release := make(chan struct{})
	inj, started := blockFirstLogSync(release)
	mem := vfs.NewMem()
	opts := Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: DefaultConfig(), RecoveryCheckpointBytes: checkpoint}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for l.active.size.Load() < 4*checkpoint {
			if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "v")); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint fsync started")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("appends waited for the checkpoint's fsync")
	}
	if n := l.ckRuns.Load(); n != 0 {
		t.Fatalf("%d checkpoints written while the fsync was stuck", n)
	}
	close(release)
	l.waitCheckpoint()
	if l.ckRuns.Load() == 0 || l.active.diskIndex.Load() <= 0 {
		t.Fatalf("no checkpoint after the fsync returned (runs %d, index at %d)", l.ckRuns.Load(), l.active.diskIndex.Load())
	}
	for i := 0; i < 10; i++ { // a tail after the checkpoint
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "tail")); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	l2, rep := reopenAfterPowerCut(t, l, mem, opts, nil)
	if len(rep.Checkpointed) != 1 || l2.LogEndOffset() != leo {
		t.Fatalf("report %+v, log end %d: want a rescan from the checkpoint finding all %d", rep, l2.LogEndOffset(), leo)
	}
}

// A checkpoint whose snapshot a Truncate overtook (the truncation came
// while its fsync ran) writes no index files: they would describe bytes
// the log no longer holds. Recovery then finds the log as truncated and
// appended to since.
func TestRecoveryCheckpointFencedByTruncate(t *testing.T) {
	const checkpoint = 16 << 10
	release := make(chan struct{})
	inj, started := blockFirstLogSync(release)
	mem := vfs.NewMem()
	opts := Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: DefaultConfig(), RecoveryCheckpointBytes: checkpoint}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for l.active.size.Load() < checkpoint {
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli(), "v")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint fsync started")
	}
	cut := l.LogEndOffset() / 2
	if err := l.Truncate(cut); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 0; l.active.size.Load() < checkpoint+checkpoint/2; i++ {
		b := batch(t, 3, epoch.UnixMilli(), "new")
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	close(release)
	l.waitCheckpoint()
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	kept := readAll(t, l, 0)
	l2, _ := reopenAfterPowerCut(t, l, mem, opts, nil)
	if l2.LogEndOffset() != leo {
		t.Fatalf("log end %d after the crash, want %d", l2.LogEndOffset(), leo)
	}
	got := readAll(t, l2, 0)
	if !bytes.Equal(got, kept) || !bytes.HasSuffix(got, want) {
		t.Fatalf("recovered %d bytes, the log held %d", len(got), len(kept))
	}
}
