package minikafkatest

// Storage faults: a broker whose disk a test can make fail its fsyncs,
// run full or sync slowly, to see the broker answer KAFKA_STORAGE_ERROR
// and keep what it acknowledged. Request faults (errors, delays, drops,
// broker down) are on *minikafka.Broker itself: AddFault, PausePartition,
// Down, ...

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Disk is the filesystem under a NewWithDisk broker, with switches. Its
// methods are safe for concurrent use.
type Disk struct {
	failSync  atomic.Bool
	full      atomic.Bool
	syncDelay atomic.Int64
	failed    atomic.Int64
}

// FailSync makes every fsync fail (EIO) while on. The log that saw the
// failure stays failed until the broker restarts, as Kafka takes a log
// dir offline: what it had not synced may be gone, but nothing it
// acknowledged.
func (d *Disk) FailSync(on bool) { d.failSync.Store(on) }

// Full makes every write fail with ENOSPC while on.
func (d *Disk) Full(on bool) { d.full.Store(on) }

// SlowSync makes every fsync take at least delay (0: as fast as the disk).
func (d *Disk) SlowSync(delay time.Duration) { d.syncDelay.Store(int64(delay)) }

// Failed is how many operations the switches failed.
func (d *Disk) Failed() int64 { return d.failed.Load() }

// Inject implements the filesystem hook; tests use the switches.
func (d *Disk) Inject(op vfs.Op, path string, n int) (int, error) {
	switch op {
	case vfs.OpSync, vfs.OpSyncDir:
		if t := time.Duration(d.syncDelay.Load()); t > 0 {
			time.Sleep(t)
		}
		if d.failSync.Load() {
			d.failed.Add(1)
			return 0, &os.PathError{Op: "fsync", Path: path, Err: syscall.EIO}
		}
	case vfs.OpWrite:
		if d.full.Load() {
			d.failed.Add(1)
			return 0, &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
	}
	return n, nil
}

// NewWithDisk is New on a data dir behind d: files are real (in
// t.TempDir()), every operation passes through d's switches. It syncs
// every acknowledged write (durability always) so a failing fsync fails
// the produce that needed it.
func NewWithDisk(t testing.TB, opts ...minikafka.Option) (*minikafka.Broker, *Disk) {
	t.Helper()
	d := &Disk{}
	all := append([]minikafka.Option{minikafka.WithFS(vfs.NewFaultFS(vfs.OS{}, d)), minikafka.WithDurability("always")}, opts...)
	b := New(t, all...)
	return b, d
}

// String describes the switches.
func (d *Disk) String() string {
	return fmt.Sprintf("fail sync %v, full %v, sync delay %v", d.failSync.Load(), d.full.Load(), time.Duration(d.syncDelay.Load()))
}
