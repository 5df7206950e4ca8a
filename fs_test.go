package minikafka_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// failingFS is the kind of filesystem a program outside this module can
// hand to WithFS: the OS one, with every fsync failing once failSync is
// set. It names only minikafka's exported types, no internal package.
type failingFS struct {
	minikafka.FS
	failSync atomic.Bool
	syncs    atomic.Int64 // successful file and directory fsyncs
}

var errSyncFailed = errors.New("injected fsync failure")

func (f *failingFS) OpenFile(name string, flag int, perm os.FileMode) (minikafka.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return failingFile{file, f}, nil
}

func (f *failingFS) SyncDir(dir string) error {
	if f.failSync.Load() {
		return errSyncFailed
	}
	f.syncs.Add(1)
	return f.FS.SyncDir(dir)
}

type failingFile struct {
	minikafka.File
	fs *failingFS
}

func (f failingFile) Sync() error {
	if f.fs.failSync.Load() {
		return errSyncFailed
	}
	f.fs.syncs.Add(1)
	return f.File.Sync()
}

var _ minikafka.FS = (*failingFS)(nil)

// A filesystem implemented outside the package stores the broker's data,
// and a failure injected through it reaches the producer as
// KAFKA_STORAGE_ERROR; what was acknowledged before is there after a
// restart.
func TestWithFSImplementedOutside(t *testing.T) {
	dir := t.TempDir()
	fsys := &failingFS{FS: minikafka.OSFS()}
	b, err := minikafka.Start(context.Background(), minikafka.WithFS(fsys), minikafka.WithDataDir(dir),
		minikafka.WithDurability("always"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close() // fails once fsyncs failed; only the restart's Close is checked
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctxT(t), kgo.StringRecord("acked")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if fsys.syncs.Load() == 0 {
		t.Fatal("an acks=all produce with durability always did not fsync through the FS given to WithFS")
	}

	fsys.failSync.Store(true)
	if err := cl.ProduceSync(ctxT(t), kgo.StringRecord("not durable")).FirstErr(); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce while fsync fails: %v, want KAFKA_STORAGE_ERROR", err)
	}
	cl.Close()
	b.Close()

	b = start(t, minikafka.WithDataDir(dir))
	if got := consume(t, b, "t", 1); string(got[0].Value) != "acked" {
		t.Fatalf("after restart the first record is %q, want the acknowledged one", got[0].Value)
	}
}
