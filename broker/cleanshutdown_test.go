package broker

import (
	"errors"
	"io/fs"
	"testing"

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
	marker := "/data/" + cleanShutdownFile
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
