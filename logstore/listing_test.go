package logstore

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// countingFS counts directory reads.
type countingFS struct {
	vfs.FS
	reads atomic.Int64
}

func (c *countingFS) ReadDir(dir string) ([]string, error) {
	c.reads.Add(1)
	return c.FS.ReadDir(dir)
}

// Open with the listing taken after a clean Close reads no directory and
// finds the same log; a listing that names a file since removed makes
// Open go by the directory instead of failing.
func TestOpenWithListing(t *testing.T) {
	mem := vfs.NewMem()
	fsys := &countingFS{FS: mem}
	opts := Options{FS: fsys, Dir: "/p", Config: DefaultConfig()}
	opts.Config.SegmentBytes = 4 << 10
	l, _, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := l.Append(batch(t, 5, epoch.UnixMilli()+int64(i), "v")); err != nil {
			t.Fatal(err)
		}
	}
	want := readAll(t, l, 0)
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	listing, err := mem.ReadDir("/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(listing) < 6 {
		t.Fatalf("listing %v: the test needs several segments", listing)
	}

	fsys.reads.Store(0)
	opts.Listing, opts.CleanShutdown = listing, true
	l2, rep, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := fsys.reads.Load(); n != 0 {
		t.Errorf("%d directory reads with a listing, want none", n)
	}
	if got := readAll(t, l2, 0); !bytes.Equal(got, want) || l2.LogEndOffset() != leo || rep.Segments != len(l2.segments()) {
		t.Fatalf("with a listing: %d bytes to offset %d, want %d bytes to %d", len(got), l2.LogEndOffset(), len(want), leo)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}

	// The listing goes stale: the newest segment is removed behind
	// the log's back (the listing still names it).
	last := ""
	for _, n := range listing {
		if _, ok := parseSegName(n, ".log"); ok {
			last = n
		}
	}
	if err := mem.Remove("/p/" + last); err != nil {
		t.Fatal(err)
	}
	fsys.reads.Store(0)
	l3, _, err := Open(opts)
	if err != nil {
		t.Fatalf("open with a stale listing: %v", err)
	}
	defer l3.Close()
	if fsys.reads.Load() == 0 {
		t.Error("a stale listing did not make Open read the directory")
	}
	if l3.LogEndOffset() >= leo {
		t.Errorf("log end %d with the newest segment gone, want below %d", l3.LogEndOffset(), leo)
	}
}
