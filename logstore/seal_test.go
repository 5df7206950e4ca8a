package logstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// gate is an Injector that, once armed, holds the operations match selects
// until release is closed (at most 20 s); hit is closed when the first one
// arrives.
type gate struct {
	match   func(op vfs.Op, path string) bool
	armed   atomic.Bool
	release chan struct{}
	hit     chan struct{}
	once    sync.Once
}

func newGate(match func(op vfs.Op, path string) bool) *gate {
	return &gate{match: match, release: make(chan struct{}), hit: make(chan struct{})}
}

func (g *gate) Inject(op vfs.Op, path string, n int) (int, error) {
	if op != vfs.OpRead && g.armed.Load() && g.match(op, path) {
		g.once.Do(func() { close(g.hit) })
		select {
		case <-g.release:
		case <-time.After(20 * time.Second):
		}
	}
	return n, nil
}

func (g *gate) waitHit(t *testing.T) {
	t.Helper()
	select {
	case <-g.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("the gated operation never came")
	}
}

// syncAllMem makes everything in dir durable behind the log's back, as the
// kernel's writeback may at any time: the files' contents and the
// directory's entries.
func syncAllMem(t *testing.T, mem *vfs.MemFS, dir string, except ...string) {
	t.Helper()
	names, err := mem.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if slicesContains(except, n) {
			continue
		}
		f, err := mem.OpenFile(filepath.Join(dir, n), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := mem.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A roll does not wait for the old segment's fsync: with that fsync stuck,
// appends roll on and the seal finishes once it returns.
func TestRollOffAppendPath(t *testing.T) {
	for _, mode := range []SyncMode{SyncNever, SyncInterval} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			mem := vfs.NewMem()
			g := newGate(func(op vfs.Op, p string) bool { return op == vfs.OpSync && strings.HasSuffix(p, ".log") })
			cfg := DefaultConfig()
			cfg.SegmentBytes = 4096
			opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: mode, Interval: time.Hour}}
			l, _, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			g.armed.Store(true)
			done := make(chan error, 1)
			go func() {
				for len(l.segments()) < 6 {
					if _, err := l.Append(batch(t, 4, epoch.UnixMilli(), "v")); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			g.waitHit(t)
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("appends wait for the sealed segment's fsync")
			}
			if n := l.seals.Load(); n != 0 {
				t.Fatalf("%d seals finished while the first fsync is stuck", n)
			}
			close(g.release)
			l.waitSeals()
			if n := l.seals.Load(); n != int64(len(l.segments())-1) {
				t.Fatalf("%d seals for %d sealed segments", n, len(l.segments())-1)
			}
			for _, s := range l.segments()[:len(l.segments())-1] {
				if s.unsealed.Load() || s.diskIndex.Load() != s.size.Load() {
					t.Fatalf("segment %d: unsealed %v, index for %d of %d bytes", s.base, s.unsealed.Load(), s.diskIndex.Load(), s.size.Load())
				}
			}
		})
	}
}

// A crash after a roll, before the old segment's seal fsynced it, leaving a
// torn write in it: Open treats it and what follows as the tail, cuts it at
// the torn batch and removes the later segments, keeping every byte that was
// fsynced before.
func TestSealCrashTornOldSegment(t *testing.T) {
	mem := vfs.NewMem()
	first := segName(0, ".log")
	g := newGate(func(op vfs.Op, p string) bool { return op == vfs.OpSync && strings.HasSuffix(p, first) })
	cfg := DefaultConfig()
	cfg.SegmentBytes = 4096
	opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	for i := 0; i < 10; i++ {
		b := batch(t, 3, epoch.UnixMilli()+int64(i), "a")
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, b...)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	durable, keptLeo := l.active.size.Load(), l.LogEndOffset()
	g.armed.Store(true) // the seal's fsync of segment 0 never completes
	var next []byte
	for len(l.segments()) < 3 {
		b := batch(t, 3, epoch.UnixMilli(), "b")
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		if next == nil {
			next = b
		}
	}
	g.waitHit(t)
	// Writeback made the later segments and the directory durable, but of
	// segment 0 only what Sync covered, plus half of the next batch.
	syncAllMem(t, mem, "/p", first)
	img := mem.PowerCut()
	f, err := img.OpenFile("/p/"+first, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Stat(); st.Size() != durable {
		t.Fatalf("crash image holds %d bytes of segment 0, want %d", st.Size(), durable)
	}
	f.WriteAt(next[:len(next)/2], durable)
	f.Sync() // the torn bytes are on the disk
	f.Close()
	close(g.release)
	l.Close()

	// A crash during that recovery, at each of its writes in turn: the
	// open after it recovers the same log.
	crashes := 0
	for n := 0; ; n++ {
		fsys := img.CrashClone()
		inj := &crashAfter{n: n, rng: rand.New(rand.NewPCG(uint64(n), 5))}
		if l3, _, err := Open(Options{FS: vfs.NewFaultFS(fsys, inj), Dir: "/p", Config: cfg}); err == nil {
			l3.Close()
		}
		if !inj.crashed {
			break
		}
		crashes++
		l4, _, err := Open(Options{FS: fsys.CrashClone(), Dir: "/p", Config: cfg})
		if err != nil {
			t.Fatalf("open after a crash at recovery's write %d: %v", n, err)
		}
		if l4.LogEndOffset() != keptLeo || !bytes.Equal(readAll(t, l4, 0), kept) {
			t.Fatalf("after a crash at recovery's write %d: leo %d, want %d", n, l4.LogEndOffset(), keptLeo)
		}
		l4.Close()
	}
	if crashes < 5 {
		t.Fatalf("recovery crashed only %d times: the test does not test it", crashes)
	}

	l2, rep, err := Open(Options{FS: img, Dir: "/p", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if len(rep.Unsealed) != 2 || rep.Unsealed[0] != first {
		t.Fatalf("unsealed %v, want %s and the next", rep.Unsealed, first)
	}
	tr := rep.Truncated
	if len(tr) != 3 || tr[0].Pos != 0 || tr[1].Pos != 0 || tr[0].File <= tr[1].File || tr[2].File != first || tr[2].Pos != durable || tr[2].Dropped != int64(len(next)/2) {
		t.Fatalf("truncated %+v: want segments 2 and 1 removed, segment 0 cut at %d", tr, durable)
	}
	if l2.LogEndOffset() != keptLeo || len(l2.segments()) != 1 {
		t.Fatalf("leo %d in %d segments, want %d in 1", l2.LogEndOffset(), len(l2.segments()), keptLeo)
	}
	if got := readAll(t, l2, 0); !bytes.Equal(got, kept) {
		t.Fatalf("recovered %d bytes, want the %d fsynced", len(got), len(kept))
	}
	names, _ := img.ReadDir("/p")
	if len(names) != 1 {
		t.Fatalf("files left: %v", names)
	}
	// The log goes on from there.
	if _, err := l2.Append(batch(t, 1, 0, "c")); err != nil {
		t.Fatal(err)
	}
}

// Under SyncAlways nothing acknowledged is lost when a crash comes while
// seals are stuck: group commit fsynced the rolled segments (and the
// directory entries of new ones) before it made their data visible.
func TestSealCrashAlwaysKeepsAcknowledged(t *testing.T) {
	for _, stuck := range []string{"fsync", "index"} {
		t.Run(stuck, func(t *testing.T) {
			mem := vfs.NewMem()
			g := newGate(func(op vfs.Op, p string) bool {
				if stuck == "index" {
					return op == vfs.OpWrite && strings.HasSuffix(p, ".seal.tmp")
				}
				return op == vfs.OpSync && strings.HasSuffix(p, ".log")
			})
			cfg := DefaultConfig()
			cfg.SegmentBytes = 2000
			opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: SyncAlways}}
			l, _, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			acked := map[int64][]byte{}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := 0; w < 3; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						b := batch(t, 2, epoch.UnixMilli(), fmt.Sprintf("w%d-%d", w, i))
						res, err := l.Append(b)
						if err != nil {
							return
						}
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
						err = l.WaitDurable(ctx, res.LastOffset+1)
						cancel()
						if err != nil {
							continue
						}
						mu.Lock()
						acked[res.BaseOffset] = b
						mu.Unlock()
					}
				}()
			}
			// Let group commit run for a while after the rolls, with the
			// first seal stuck: fsync rounds (not the seal, in the fsync
			// case the round's own fsync of .log files is stuck too, so
			// arm only once some segments exist).
			for len(l.segments()) < 2 {
				time.Sleep(time.Millisecond)
			}
			if stuck == "index" {
				g.armed.Store(true)
				g.waitHit(t)
				// Until data past the start of a segment created two
				// rolls after the stuck one is acknowledged: then a round
				// made its directory entry durable, and the stuck
				// segment is not the last in the crash image.
				stuckAt := len(l.segments()) - 2
				for {
					segs := l.segments()
					if len(segs) >= stuckAt+3 && l.HighWatermark() > segs[len(segs)-1].base {
						break
					}
					time.Sleep(time.Millisecond)
				}
			} else {
				g.armed.Store(true)
				g.waitHit(t)
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			img := mem.PowerCut() // under mu: no ack is recorded meanwhile
			snapshot := make(map[int64][]byte, len(acked))
			for k, v := range acked {
				snapshot[k] = v
			}
			mu.Unlock()
			close(stop)
			close(g.release)
			wg.Wait()
			l.Close()
			if len(snapshot) < 10 {
				t.Fatalf("only %d acknowledged batches", len(snapshot))
			}
			l2, rep, err := Open(Options{FS: img, Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: SyncAlways}})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if stuck == "index" && len(rep.Unsealed) == 0 {
				t.Fatalf("report %+v: want a segment whose seal did not finish", rep)
			}
			present := map[int64][]byte{}
			if err := records.Split(readAll(t, l2, 0), func(_ int, h records.BatchHeader, b []byte) error {
				present[h.BaseOffset] = b
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for off, b := range snapshot {
				if !bytes.Equal(present[off], b) {
					t.Fatalf("acknowledged batch at %d lost (leo %d, report %+v)", off, l2.LogEndOffset(), rep)
				}
			}
			t.Logf("%d acknowledged, %d recovered, report %+v", len(snapshot), len(present), rep)
		})
	}
}

// A crash in the middle of a seal: the offset index renamed into place and
// the directory made durable by writeback, the time index not renamed yet.
// The segment's seal is not proven: it is rescanned (its fsync had
// finished, so nothing is lost) and its index files written at open.
func TestSealCrashMidSeal(t *testing.T) {
	mem := vfs.NewMem()
	g := newGate(func(op vfs.Op, p string) bool {
		return op == vfs.OpRename && strings.HasSuffix(p, ".timeindex.seal.tmp")
	})
	cfg := DefaultConfig()
	cfg.SegmentBytes = 4096
	opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	g.armed.Store(true)
	var all []byte
	for len(l.segments()) < 2 || l.active.size.Load() < 500 {
		b := batch(t, 3, epoch.UnixMilli(), "m")
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	g.waitHit(t)
	if err := l.Sync(); err != nil { // the active segment's data is durable
		t.Fatal(err)
	}
	syncAllMem(t, mem, "/p")
	img := mem.PowerCut()
	close(g.release)
	l.Close()
	names, _ := img.ReadDir("/p")
	if !slicesContains(names, segName(0, ".index")) || slicesContains(names, segName(0, ".timeindex")) {
		t.Fatalf("crash image %v: want the offset index renamed, the time index not", names)
	}
	l2, rep, err := Open(Options{FS: img, Dir: "/p", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if len(rep.Unsealed) != 1 || len(rep.Truncated) != 0 || !slicesContains(rep.IndexesRebuilt, segName(0, ".log")) {
		t.Fatalf("report %+v: want segment 0 unsealed, rescanned and its indexes rebuilt, nothing cut", rep)
	}
	if got := readAll(t, l2, 0); !bytes.Equal(got, all) {
		t.Fatalf("recovered %d bytes, wrote %d", len(got), len(all))
	}
	// Its seal is proven now: the next open after a crash trusts it.
	l2.Close()
	l3, rep, err := Open(Options{FS: img.CrashClone(), Dir: "/p", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if len(rep.Unsealed) != 0 || slicesContains(rep.Rescanned, segName(0, ".log")) {
		t.Fatalf("report %+v after recovery sealed segment 0", rep)
	}
}

// A segment whose seal finished is trusted; damage in it stays a
// *CorruptionError (VerifyAll reads it), while the same damage in a later
// segment whose seal had not finished when the machine crashed is a cut.
func TestSealCompletedThenDamage(t *testing.T) {
	mem := vfs.NewMem()
	var second atomic.Value
	second.Store("")
	g := newGate(func(op vfs.Op, p string) bool {
		s := second.Load().(string)
		return s != "" && op == vfs.OpSync && strings.HasSuffix(p, s)
	})
	cfg := DefaultConfig()
	cfg.SegmentBytes = 2000
	opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	g.armed.Store(true)
	for len(l.segments()) < 2 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "d")); err != nil {
			t.Fatal(err)
		}
	}
	l.waitSeals() // segment 0 sealed
	seg1 := l.active
	second.Store(segName(seg1.base, ".log"))
	for len(l.segments()) < 4 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "d")); err != nil {
			t.Fatal(err)
		}
	}
	g.waitHit(t) // segment 1's seal is stuck in its fsync
	syncAllMem(t, mem, "/p")
	img := mem.PowerCut()
	close(g.release)
	l.Close()
	name0, name1 := "/p/"+segName(0, ".log"), "/p/"+segName(seg1.base, ".log")

	t.Run("sealed", func(t *testing.T) {
		fsys := img.CrashClone()
		flipByte(t, fsys, name0, 300)
		_, _, err := Open(Options{FS: fsys, Dir: "/p", Config: cfg, VerifyAll: true})
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.File != name0 {
			t.Fatalf("got %v, want a CorruptionError in %s", err, name0)
		}
	})
	t.Run("unsealed", func(t *testing.T) {
		fsys := img.CrashClone()
		flipByte(t, fsys, name1, 300)
		l2, rep, err := Open(Options{FS: fsys, Dir: "/p", Config: cfg, VerifyAll: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		tr := rep.Truncated
		if len(rep.Unsealed) != 2 || rep.Unsealed[0] != filepath.Base(name1) || len(tr) != 3 || tr[2].File != filepath.Base(name1) || tr[2].Pos > 300 || len(l2.segments()) != 2 {
			t.Fatalf("report %+v: want segment %d cut before 300 and the 2 after it removed", rep, seg1.base)
		}
	})
}

// Truncate into a segment whose seal is stuck in its fsync does not wait for
// it (a fence), and the seal, once its fsync returns, writes no index file
// for the segment, which is the active one again.
func TestTruncateFencesSeal(t *testing.T) {
	mem := vfs.NewMem()
	var syncs atomic.Int32 // only the seal's fsync is held, not Truncate's
	g := newGate(func(op vfs.Op, p string) bool {
		return op == vfs.OpSync && strings.HasSuffix(p, segName(0, ".log")) && syncs.Add(1) == 1
	})
	cfg := DefaultConfig()
	cfg.SegmentBytes = 2000
	opts := Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p", Config: cfg}
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 5; i++ {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "t")); err != nil {
			t.Fatal(err)
		}
	}
	g.armed.Store(true)
	for len(l.segments()) < 3 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "t")); err != nil {
			t.Fatal(err)
		}
	}
	g.waitHit(t)
	done := make(chan error, 1)
	go func() { done <- l.Truncate(9) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Truncate waits for a seal's fsync")
	}
	g.armed.Store(false)
	close(g.release)
	l.waitSeals()
	if len(l.segments()) != 1 || l.LogEndOffset() != 9 {
		t.Fatalf("%d segments, leo %d", len(l.segments()), l.LogEndOffset())
	}
	names, _ := mem.ReadDir("/p")
	if len(names) != 1 {
		t.Fatalf("files after the truncate and the fenced seal: %v", names)
	}
	for len(l.segments()) < 3 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "u")); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l2, rep := (&testEnv{fs: mem, dir: "/p", opts: Options{FS: mem.CrashClone(), Dir: "/p", Config: cfg}}).open(t)
	defer l2.Close()
	if len(rep.Unsealed) != 0 || len(rep.Truncated) != 0 || l2.LogEndOffset() != l.LogEndOffset() {
		t.Fatalf("report %+v, leo %d want %d", rep, l2.LogEndOffset(), l.LogEndOffset())
	}
}

// A seal whose index files cannot be written for want of space leaves the
// log taking writes; the segment stays queued and a later roll seals it.
func TestSealNoSpaceRetried(t *testing.T) {
	mem := vfs.NewMem()
	var fail atomic.Bool
	fail.Store(true)
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if op == vfs.OpWrite && strings.HasSuffix(p, ".seal.tmp") && fail.Load() {
			return 0, syscall.ENOSPC
		}
		return n, nil
	})
	cfg := DefaultConfig()
	cfg.SegmentBytes = 2000
	l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for len(l.segments()) < 3 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "s")); err != nil {
			t.Fatal(err)
		}
	}
	l.waitSeals()
	if l.seals.Load() != 0 || !l.segments()[0].unsealed.Load() {
		t.Fatal("a seal finished without its index files")
	}
	fail.Store(false)
	for len(l.segments()) < 4 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "s")); err != nil {
			t.Fatal(err)
		}
	}
	l.waitSeals()
	if n := l.seals.Load(); n != 3 {
		t.Fatalf("%d seals after space returned, want 3", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// Rolls under concurrent appends, reads and retention (run with -race):
// every acknowledged batch reads back while it runs, and after Close every
// sealed segment is proven, so the next open rescans nothing.
func TestRollUnderLoad(t *testing.T) {
	for _, mode := range []SyncMode{SyncNever, SyncAlways} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			mem := vfs.NewMem()
			cfg := DefaultConfig()
			cfg.SegmentBytes = 8 << 10
			cfg.IndexIntervalBytes = 512
			opts := Options{FS: mem, Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: mode}}
			l, _, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var appended atomic.Int64
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 300; i++ {
						res, err := l.Append(batch(t, 3, epoch.UnixMilli()+int64(i), fmt.Sprintf("w%d-%d", w, i)))
						if err != nil {
							t.Error(err)
							return
						}
						if err := l.WaitDurable(context.Background(), res.LastOffset+1); err != nil {
							t.Error(err)
							return
						}
						appended.Add(1)
					}
				}()
			}
			var rg sync.WaitGroup
			for r := 0; r < 2; r++ {
				rg.Add(1)
				go func() {
					defer rg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						off := l.LogStartOffset()
						for off < l.HighWatermark() {
							rr, err := l.Read(ReadOptions{Offset: off, MaxBytes: 4096, MinOneBatch: true})
							if errors.Is(err, ErrOffsetOutOfRange) {
								break // retention moved the start
							}
							if err != nil {
								t.Error(err)
								return
							}
							b, err := rr.AppendTo(nil)
							rr.Release()
							if err != nil {
								t.Error(err)
								return
							}
							if len(b) == 0 {
								break
							}
							if err := records.Split(b, func(_ int, h records.BatchHeader, _ []byte) error {
								off = h.LastOffset() + 1
								return nil
							}); err != nil {
								t.Errorf("read at %d: %v", off, err)
								return
							}
						}
					}
				}()
			}
			rg.Add(1)
			go func() {
				defer rg.Done()
				c := cfg
				c.RetentionBytes = 64 << 10
				c.RetentionMs = -1
				l.SetConfig(c)
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					if _, err := l.EnforceRetention(time.Now()); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			wg.Wait()
			close(stop)
			rg.Wait()
			if t.Failed() {
				return
			}
			if l.HighWatermark() != l.LogEndOffset() {
				t.Fatalf("high watermark %d, log end %d", l.HighWatermark(), l.LogEndOffset())
			}
			want := readAll(t, l, l.LogStartOffset())
			start, leo := l.LogStartOffset(), l.LogEndOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2, rep, err := Open(Options{FS: mem.CrashClone(), Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			if len(rep.Unsealed) != 0 || len(rep.Truncated) != 0 || len(rep.Rescanned) > 1 {
				t.Fatalf("report %+v after a clean close", rep)
			}
			if l2.LogStartOffset() != start || l2.LogEndOffset() != leo || !bytes.Equal(readAll(t, l2, start), want) {
				t.Fatalf("reopened [%d, %d), want [%d, %d)", l2.LogStartOffset(), l2.LogEndOffset(), start, leo)
			}
			if len(l2.segments()) < 5 || l.seals.Load() < 5 {
				t.Fatalf("%d segments left, %d seals: the test did not roll under load", len(l2.segments()), l.seals.Load())
			}
			t.Logf("%d batches, %d segments left, %d seals", appended.Load(), len(l2.segments()), l.seals.Load())
		})
	}
}

// Destroy with a seal stuck in its fsync waits for it and leaves nothing
// behind.
func TestDestroyWaitsForSeal(t *testing.T) {
	mem := vfs.NewMem()
	g := newGate(func(op vfs.Op, p string) bool { return op == vfs.OpSync && strings.HasSuffix(p, ".log") })
	cfg := DefaultConfig()
	cfg.SegmentBytes = 2000
	l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, g), Dir: "/p/t-0", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	g.armed.Store(true)
	for len(l.segments()) < 3 {
		if _, err := l.Append(batch(t, 3, epoch.UnixMilli(), "x")); err != nil {
			t.Fatal(err)
		}
	}
	g.waitHit(t)
	done := make(chan error, 1)
	go func() { done <- l.Destroy() }()
	select {
	case err := <-done:
		t.Fatalf("Destroy returned (%v) while a seal still runs", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if names, err := mem.ReadDir("/p/t-0"); err == nil {
		t.Fatalf("directory left with %v", names)
	}
}
