package groupstore

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

var update = flag.Bool("update", false, "rewrite golden files")

func open(t testing.TB, o Options) (*Store, *RecoveryReport) {
	t.Helper()
	s, rep, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, rep
}

func off(o int64) Offset {
	return Offset{Offset: o, LeaderEpoch: 3, Metadata: fmt.Sprint("m", o), CommitMs: 1000 + o, ExpireMs: -1}
}

// state is the whole store as plain data, for comparisons.
func state(s *Store) map[string][]Commit {
	m := map[string][]Commit{}
	for _, g := range s.Groups() {
		m[g] = s.GroupOffsets(g)
	}
	return m
}

func TestCommitReopen(t *testing.T) {
	dir := t.TempDir()
	s, rep := open(t, Options{Dir: dir, Sync: SyncAlways})
	if !rep.Clean() || rep.File != "" {
		t.Fatalf("fresh store report %+v", rep)
	}
	must(t, s.Commit("g1", []Commit{{"a", 0, off(5)}, {"a", 1, off(7)}, {"b", 0, off(1)}}))
	must(t, s.Commit("g2", []Commit{{"a", 0, off(9)}}))
	must(t, s.Commit("g1", []Commit{{"a", 0, off(6)}}))
	must(t, s.DeleteOffsets("g1", []TopicPartition{{"a", 1}}))
	must(t, s.Commit("g3", []Commit{{"c", 2, off(2)}}))
	must(t, s.DeleteGroup("g3"))
	want := state(s)
	must(t, s.Close())
	if err := s.Commit("g1", []Commit{{"a", 0, off(1)}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}

	s, rep = open(t, Options{Dir: dir})
	defer s.Close()
	if !rep.Clean() || rep.Frames != 6 || rep.Offsets != 3 {
		t.Fatalf("report %+v", rep)
	}
	if got := state(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen\n got %v\nwant %v", got, want)
	}
	o, ok := s.Get("g1", "a", 0)
	if !ok || o != off(6) {
		t.Fatalf("Get = %v %v", o, ok)
	}
	if _, ok := s.Get("g1", "a", 1); ok {
		t.Fatal("deleted offset still present")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// history commits a fixed sequence of changes and returns the log bytes
// plus, for each change, the log size after it and the state after it.
type step struct {
	size  int64
	state map[string][]Commit
}

func buildHistory(t *testing.T, dir string) ([]byte, []step) {
	s, _ := open(t, Options{Dir: dir, Sync: SyncAlways})
	steps := []step{{s.Stats().LogBytes, state(s)}}
	changes := []func() error{
		func() error { return s.Commit("g1", []Commit{{"a", 0, off(5)}, {"a", 1, off(7)}}) },
		func() error { return s.Commit("g2", []Commit{{"b", 0, off(1)}}) },
		func() error { return s.Commit("g1", []Commit{{"a", 0, off(10)}, {"b", 3, off(11)}}) },
		func() error { return s.DeleteOffsets("g1", []TopicPartition{{"a", 1}}) },
		func() error { return s.DeleteTopic("b") },
		func() error { return s.Commit("g2", []Commit{{"c", 0, off(42)}}) },
		func() error { return s.DeleteGroup("g1") },
	}
	for _, c := range changes {
		must(t, c())
		steps = append(steps, step{s.Stats().LogBytes, state(s)})
	}
	must(t, s.Close())
	data, err := os.ReadFile(filepath.Join(dir, logName(1)))
	must(t, err)
	if int64(len(data)) != steps[len(steps)-1].size {
		t.Fatalf("file %d bytes, store says %d", len(data), steps[len(steps)-1].size)
	}
	return data, steps
}

// TestTornWriteEveryByte cuts the log at every byte and checks that Open
// always succeeds with exactly the changes whose frames are complete.
func TestTornWriteEveryByte(t *testing.T) {
	full, steps := buildHistory(t, t.TempDir())
	for cut := 0; cut <= len(full); cut++ {
		dir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, logName(1)), full[:cut], 0o644))
		s, rep, err := Open(Options{Dir: dir, Sync: SyncAlways})
		if err != nil {
			t.Fatalf("cut %d: open: %v", cut, err)
		}
		want := map[string][]Commit{}
		torn := int64(0)
		if cut >= fileHeaderLen {
			for _, st := range steps {
				if st.size <= int64(cut) {
					want = st.state
					torn = int64(cut) - st.size
				}
			}
			if rep.TornBytes != torn || len(rep.Damaged) != 0 {
				t.Fatalf("cut %d: report %+v, want torn %d", cut, rep, torn)
			}
		} else if cut > 0 && len(rep.Damaged) != 1 {
			t.Fatalf("cut %d inside the header: report %+v", cut, rep)
		}
		if got := state(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d:\n got %v\nwant %v", cut, got, want)
		}
		// The store must keep working after the repair and survive reopen.
		must(t, s.Commit("after", []Commit{{"z", 0, off(1)}}))
		want = state(s)
		must(t, s.Close())
		s, rep = open(t, Options{Dir: dir})
		if !rep.Clean() {
			t.Fatalf("cut %d: second open not clean: %+v", cut, rep)
		}
		if got := state(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("cut %d after repair:\n got %v\nwant %v", cut, got, want)
		}
		must(t, s.Close())
	}
}

// TestDamageInMiddle flips a byte inside each frame in turn: only that
// frame's change is lost, the others survive, and the file is rewritten.
func TestDamageInMiddle(t *testing.T) {
	full, steps := buildHistory(t, t.TempDir())
	for i := 1; i < len(steps)-1; i++ { // not the last frame: that reads as a torn tail
		start, end := steps[i-1].size, steps[i].size
		for _, pos := range []int64{start, start + 5, start + 10, (start + end) / 2, end - 1} {
			data := bytes.Clone(full)
			data[pos] ^= 0x40
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, logName(1)), data, 0o644))
			s, rep := open(t, Options{Dir: dir})
			if len(rep.Damaged) != 1 || rep.Damaged[0].Pos != start || rep.Damaged[0].Length != end-start || rep.TornBytes != 0 {
				t.Fatalf("frame %d byte %d: report %+v", i, pos, rep)
			}
			// Replaying every frame but i gives the expected state.
			ref := &Store{groups: map[string]groupOffsets{}}
			ref.replay("ref", append(bytes.Clone(full[:start]), full[end:]...), &RecoveryReport{}, false)
			if got, want := state(s), state(ref); !reflect.DeepEqual(got, want) {
				t.Fatalf("frame %d byte %d:\n got %v\nwant %v", i, pos, got, want)
			}
			want := state(s)
			must(t, s.Close())
			s, rep = open(t, Options{Dir: dir})
			if !rep.Clean() || !reflect.DeepEqual(state(s), want) {
				t.Fatalf("frame %d: not repaired: %+v", i, rep)
			}
			names, _ := os.ReadDir(dir)
			if len(names) != 1 || names[0].Name() != logName(2) {
				t.Fatalf("files after repair: %v", names)
			}
			must(t, s.Close())
		}
	}
}

func TestDamagedHeaderFallsBackToOlderGeneration(t *testing.T) {
	dir := t.TempDir()
	full, steps := buildHistory(t, dir)
	// A newer generation with a corrupt header next to an intact older one.
	bad := encodeFileHeader(2)
	bad[17] ^= 1
	must(t, os.WriteFile(filepath.Join(dir, logName(2)), bad, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, logName(3)+".tmp"), []byte("debris"), 0o644))
	s, rep := open(t, Options{Dir: dir})
	defer s.Close()
	if len(rep.Damaged) != 1 || rep.File != filepath.Join(dir, logName(1)) || len(rep.Removed) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if !reflect.DeepEqual(state(s), steps[len(steps)-1].state) {
		t.Fatal("state not recovered from the older generation")
	}
	_ = full
}

func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, Options{Dir: dir, Sync: SyncInterval, Interval: time.Millisecond, CompactBytes: 4096})
	for i := range 2000 {
		must(t, s.Commit("g", []Commit{{"t", int32(i % 4), off(int64(i))}}))
	}
	st := s.Stats()
	if st.Generation < 3 || st.LogBytes > 8192 || st.Offsets != 4 {
		t.Fatalf("not compacting: %+v", st)
	}
	want := state(s)
	must(t, s.Close())
	// The generation is read after Close: the 1 ms background sync (or
	// Close's own flush) may compact once more after the last Commit, so a
	// generation read before Close was sometimes one behind the file.
	gen := s.Stats().Generation
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || names[0].Name() != logName(gen) {
		t.Fatalf("files: %v, generation %d", names, gen)
	}
	s, rep := open(t, Options{Dir: dir})
	defer s.Close()
	if !rep.Clean() || !reflect.DeepEqual(state(s), want) {
		t.Fatalf("after compaction reopen: %+v", rep)
	}
}

func TestLargeCommitSplitsFrames(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, Options{Dir: dir})
	meta := string(bytes.Repeat([]byte("x"), 900_000))
	var cs []Commit
	for p := range 30 { // ~27 MB: several frames
		cs = append(cs, Commit{"big", int32(p), Offset{Offset: int64(p), Metadata: meta, ExpireMs: -1}})
	}
	must(t, s.Commit("g", cs))
	must(t, s.Close())
	s, rep := open(t, Options{Dir: dir})
	defer s.Close()
	if !rep.Clean() || rep.Frames < 4 || rep.Offsets != 30 {
		t.Fatalf("report %+v", rep)
	}
	if err := s.Commit("g", []Commit{{"t", 0, Offset{Metadata: meta + meta}}}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversize metadata: %v", err)
	}
}

func TestExpire(t *testing.T) {
	s, _ := open(t, Options{Dir: t.TempDir()})
	defer s.Close()
	at := func(ms int64, exp int64) Offset { return Offset{Offset: 1, CommitMs: ms, ExpireMs: exp} }
	must(t, s.Commit("active", []Commit{{"t", 0, at(0, -1)}}))
	must(t, s.Commit("empty", []Commit{{"t", 0, at(0, -1)}, {"t", 1, at(0, -1)}}))
	must(t, s.Commit("recentlyEmpty", []Commit{{"t", 0, at(0, -1)}}))
	must(t, s.Commit("simple", []Commit{{"t", 0, at(0, -1)}, {"t", 1, at(9_000, -1)}}))
	must(t, s.Commit("explicit", []Commit{{"t", 0, at(9_500, 9_900)}}))
	status := func(g string) GroupStatus {
		switch g {
		case "active":
			return GroupStatus{Active: true}
		case "empty":
			return GroupStatus{EmptySinceMs: 1_000}
		case "recentlyEmpty":
			return GroupStatus{EmptySinceMs: 9_000}
		}
		return GroupStatus{}
	}
	n, err := s.Expire(time.UnixMilli(10_000), 5*time.Second, status)
	must(t, err)
	if n != 4 {
		t.Fatalf("expired %d, want 4", n)
	}
	want := []string{"active", "recentlyEmpty", "simple"}
	if got := s.Groups(); !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v want %v", got, want)
	}
	if _, ok := s.Get("simple", "t", 1); !ok {
		t.Fatal("recent simple commit expired")
	}
}

func TestDeleteTopic(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, Options{Dir: dir})
	must(t, s.Commit("g1", []Commit{{"gone", 0, off(1)}, {"kept", 0, off(2)}}))
	must(t, s.Commit("g2", []Commit{{"gone", 3, off(1)}}))
	must(t, s.DeleteTopic("gone"))
	check := func(s *Store) {
		if got := s.Groups(); !reflect.DeepEqual(got, []string{"g1"}) {
			t.Fatalf("groups %v", got)
		}
		if got := s.GroupOffsets("g1"); len(got) != 1 || got[0].Topic != "kept" {
			t.Fatalf("g1 offsets %v", got)
		}
	}
	check(s)
	must(t, s.Close())
	s, _ = open(t, Options{Dir: dir})
	defer s.Close()
	check(s)
}

// countFS counts fsyncs and can fail them.
type countFS struct {
	vfs.FS
	syncs    atomic.Int64
	failSync atomic.Bool
}

type countFile struct {
	vfs.File
	fs *countFS
}

func (c *countFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return countFile{f, c}, nil
}

func (f countFile) Sync() error {
	f.fs.syncs.Add(1)
	if f.fs.failSync.Load() {
		return errors.New("injected fsync failure")
	}
	return f.File.Sync()
}

func TestGroupCommitSharesFsyncs(t *testing.T) {
	cfs := &countFS{FS: vfs.Default}
	s, _ := open(t, Options{FS: cfs, Dir: t.TempDir(), Sync: SyncAlways})
	defer s.Close()
	before := cfs.syncs.Load()
	const writers, each = 32, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				must(t, s.Commit("g", []Commit{{"t", int32(w), off(int64(i))}}))
			}
		})
	}
	wg.Wait()
	syncs := cfs.syncs.Load() - before
	if syncs >= writers*each/2 {
		t.Fatalf("%d commits took %d fsyncs: not coalesced", writers*each, syncs)
	}
	t.Logf("%d commits, %d fsyncs", writers*each, syncs)
}

func TestStickyWriteError(t *testing.T) {
	cfs := &countFS{FS: vfs.Default}
	dir := t.TempDir()
	s, _ := open(t, Options{FS: cfs, Dir: dir, Sync: SyncAlways})
	must(t, s.Commit("g", []Commit{{"t", 0, off(1)}}))
	cfs.failSync.Store(true)
	if err := s.Commit("g", []Commit{{"t", 0, off(2)}}); err == nil {
		t.Fatal("commit succeeded although fsync failed")
	}
	cfs.failSync.Store(false)
	if err := s.Commit("g", []Commit{{"t", 0, off(3)}}); err == nil {
		t.Fatal("write error not sticky")
	}
	_ = s.Close()
	s, _ = open(t, Options{Dir: dir})
	defer s.Close()
	if o, _ := s.Get("g", "t", 0); o.Offset != 1 && o.Offset != 2 {
		t.Fatalf("offset after failed fsync %d", o.Offset)
	}
}

func TestIntervalSyncs(t *testing.T) {
	cfs := &countFS{FS: vfs.Default}
	// The interval is long enough that the first tick cannot fall between
	// the Commit and the inline check even on a loaded machine (with 5 ms
	// a tick could land there, and the background fsync looked inline).
	s, _ := open(t, Options{FS: cfs, Dir: t.TempDir(), Sync: SyncInterval, Interval: time.Second})
	defer s.Close()
	before := cfs.syncs.Load()
	must(t, s.Commit("g", []Commit{{"t", 0, off(1)}}))
	if cfs.syncs.Load() != before {
		t.Fatal("interval policy fsynced inline")
	}
	deadline := time.Now().Add(20 * time.Second)
	for cfs.syncs.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("no background fsync")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGolden pins the version-1 format: the same changes must produce the
// same bytes, and the committed file must keep decoding to the same state.
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	full, steps := buildHistory(t, dir)
	golden := filepath.Join("testdata", "offsets-v1.golden")
	if *update {
		must(t, os.WriteFile(golden, full, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(full, want) {
		t.Fatalf("format changed: %d bytes vs golden %d (run with -update only if the version was bumped)", len(full), len(want))
	}
	gdir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(gdir, logName(1)), want, 0o644))
	s, rep := open(t, Options{Dir: gdir})
	defer s.Close()
	if !rep.Clean() || !reflect.DeepEqual(state(s), steps[len(steps)-1].state) {
		t.Fatalf("golden file decodes differently: %+v", rep)
	}
}

// TestTornTailRepairFails: when the truncate or the fsync that cuts a
// torn tail fails, Open fails with that error instead of carrying on with
// the torn bytes still in the file, or with a cut that may not be on
// disk; once the disk is back, Open repairs the tail.
func TestTornTailRepairFails(t *testing.T) {
	full, steps := buildHistory(t, t.TempDir())
	cut := steps[len(steps)-1].size - 3 // the last frame torn
	for _, op := range []vfs.Op{vfs.OpTruncate, vfs.OpSync} {
		dir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, logName(1)), full[:cut], 0o644))
		fault := &vfs.FailNth{Op: op, N: 1}
		if _, _, err := Open(Options{FS: vfs.NewFaultFS(vfs.Default, fault), Dir: dir, Sync: SyncAlways}); !errors.Is(err, vfs.ErrInjected) || !fault.Fired() {
			t.Fatalf("%v failing while the torn tail is cut: open gave %v, want the injected error", op, err)
		}
		// A failed truncate left the tail for this open to cut; a failed
		// fsync after a truncate that took leaves nothing torn.
		s, rep, err := Open(Options{Dir: dir, Sync: SyncAlways})
		if err != nil || (op == vfs.OpTruncate) != (rep.TornBytes > 0) {
			t.Fatalf("%v: open once the disk is back: %v, report %+v", op, err, rep)
		}
		if got, want := state(s), steps[len(steps)-2].state; !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: after repair\n got %v\nwant %v", op, got, want)
		}
		must(t, s.Close())
	}
}
