package broker

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/minikafka/minikafka/broker/internal/cleanstop"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// A clean Close leaves the marker; the next start takes it, removes it
// durably before serving (a power cut right after the start finds none),
// and the records are all there either way.
func TestCleanShutdownMarker(t *testing.T) {
	mem := vfs.NewMem()
	cfg := Config{DataDir: "/data", FS: mem, NodeID: 1, DefaultPartitions: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}}
	marker := "/data/" + cleanstop.File
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "t", 1)
	for i := range 3 {
		if r := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte{byte(i)}})); r.ErrorCode != 0 {
			t.Fatalf("produce: %d", r.ErrorCode)
		}
	}
	if _, err := mem.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker while running: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CrashClone().Stat(marker); err != nil {
		t.Fatalf("no durable marker after a clean Close: %v", err)
	}
	b, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.CrashClone().Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("marker still durable after the start: %v", err)
	}
	if hw := b.lookupTopic("t", [16]byte{}).partition(0).log.HighWatermark(); hw != 3 {
		t.Fatalf("high watermark %d after a clean restart, want 3", hw)
	}
	// A crash now: the restart recovers without the marker.
	crashed := mem.PowerCut()
	_ = b.Close()
	b2, err := New(Config{DataDir: "/data", FS: crashed, NodeID: 1, DefaultPartitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if hw := b2.lookupTopic("t", [16]byte{}).partition(0).log.HighWatermark(); hw != 3 {
		t.Fatalf("high watermark %d after the crash, want 3", hw)
	}
}

// readDirCounter counts directory reads under /data/topics/<id>/<n>, the
// partition directories.
type readDirCounter struct {
	vfs.FS
	partitionReads atomic.Int64
	fail           atomic.Pointer[string] // a directory whose reads fail with EIO
}

func (c *readDirCounter) ReadDir(dir string) ([]string, error) {
	if strings.Count(strings.TrimPrefix(dir, "/data/topics/"), "/") == 1 {
		c.partitionReads.Add(1)
	}
	if f := c.fail.Load(); f != nil && *f == dir {
		return nil, syscall.EIO
	}
	return c.FS.ReadDir(dir)
}

// After a clean Close the marker carries every partition's listing: the
// next start reads no partition directory and finds every record. After
// a crash (no marker) every directory is read. A listing gone stale while
// the broker was down (a partition's files removed, the marker's checksum
// broken) costs only the directory reads, never the start.
func TestCleanShutdownListings(t *testing.T) {
	mem := vfs.NewMem()
	fsys := &readDirCounter{FS: mem}
	cfg := Config{DataDir: "/data", FS: fsys, NodeID: 1, DefaultPartitions: 1}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "t", 8)
	for p := range int32(8) {
		for i := range 3 {
			if r := produce(t, b, "t", p, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte{byte(i)}})); r.ErrorCode != 0 {
				t.Fatalf("produce: %d", r.ErrorCode)
			}
		}
	}
	restart := func(what string, wantReads int64) *Broker {
		t.Helper()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		fsys.partitionReads.Store(0)
		nb, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := fsys.partitionReads.Load(); n != wantReads {
			t.Errorf("%s: %d partition directories read at start, want %d", what, n, wantReads)
		}
		return nb
	}
	hws := func(b *Broker) (out []int64) {
		for p := range int32(8) {
			out = append(out, b.lookupTopic("t", [16]byte{}).partition(p).log.HighWatermark())
		}
		return out
	}
	b = restart("clean restart", 0)
	if got := hws(b); !slices.Equal(got, []int64{3, 3, 3, 3, 3, 3, 3, 3}) {
		t.Fatalf("high watermarks %v after a clean restart, want 3 each", got)
	}

	// A directory that cannot be listed after its log closed fails
	// nothing: that partition only goes without a listing.
	dir2 := b.lookupTopic("t", [16]byte{}).partition(2).log.Dir()
	fsys.fail.Store(&dir2)
	if err := b.Close(); err != nil {
		t.Fatalf("Close with a directory that cannot be listed: %v", err)
	}
	fsys.fail.Store(nil)
	fsys.partitionReads.Store(0)
	if b, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	if n := fsys.partitionReads.Load(); n != 1 {
		t.Errorf("%d partition directories read, want 1 (the one without a listing)", n)
	}
	if got := hws(b); !slices.Equal(got, []int64{3, 3, 3, 3, 3, 3, 3, 3}) {
		t.Fatalf("high watermarks %v, want 3 each", got)
	}

	// Partition 5's files go while the broker is down: its listing names
	// files that are no more; that log reads its directory instead.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	dir5 := b.lookupTopic("t", [16]byte{}).partition(5).log.Dir()
	names, _ := mem.ReadDir(dir5)
	for _, n := range names {
		mem.Remove(dir5 + "/" + n)
	}
	b, err = New(cfg) // the marker is the one the Close above wrote
	if err != nil {
		t.Fatalf("start with a stale listing: %v", err)
	}
	if got := hws(b); !slices.Equal(got, []int64{3, 3, 3, 3, 3, 0, 3, 3}) {
		t.Fatalf("high watermarks %v, want partition 5 empty and the others at 3", got)
	}

	// A damaged marker still means a clean shutdown, without listings.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := readFile(mem, "/data/"+cleanstop.File)
	data[len(data)-3] ^= 1
	if err := vfs.WriteFileAtomic(mem, "/data/"+cleanstop.File, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys.partitionReads.Store(0)
	b, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := fsys.partitionReads.Load(); n != 8 {
		t.Errorf("%d partition directories read with a damaged marker, want 8", n)
	}
	if got := hws(b); !slices.Equal(got, []int64{3, 3, 3, 3, 3, 0, 3, 3}) {
		t.Fatalf("high watermarks %v after a start with a damaged marker", got)
	}

	// A crash: no marker, every directory read.
	crashed := mem.PowerCut()
	_ = b.Close()
	cfg.FS = &readDirCounter{FS: crashed}
	b2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if n := cfg.FS.(*readDirCounter).partitionReads.Load(); n != 8 {
		t.Errorf("%d partition directories read after a crash, want 8", n)
	}
}
