package minikafka

import (
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// StorageFaults are switches on the filesystem under a broker started
// WithStorageFaults (the binary's -storage-faults): failing fsyncs, a full
// disk, slow fsyncs. Its methods are safe for concurrent use.
//
// A failing fsync takes the log that saw it offline until the broker
// restarts, as Kafka takes a log dir offline: produce answers
// KAFKA_STORAGE_ERROR and nothing acknowledged is lost. A full disk fails
// writes with ENOSPC; the broker answers KAFKA_STORAGE_ERROR and takes
// writes again once the switch is off.
type StorageFaults struct {
	failSync  atomic.Bool
	full      atomic.Bool
	syncDelay atomic.Int64
	failed    atomic.Int64
}

// FailSync makes every fsync fail (EIO) while on.
func (s *StorageFaults) FailSync(on bool) { s.failSync.Store(on) }

// Full makes every write fail with ENOSPC while on.
func (s *StorageFaults) Full(on bool) { s.full.Store(on) }

// SlowSync makes every fsync take at least delay (0: as fast as the disk).
func (s *StorageFaults) SlowSync(delay time.Duration) { s.syncDelay.Store(int64(max(delay, 0))) }

// StorageFaultState is the switches and how many operations they failed.
type StorageFaultState struct {
	FailSync  bool          `json:"fail_sync"`
	Full      bool          `json:"full"`
	SyncDelay time.Duration `json:"-"`
	Failed    int64         `json:"failed"`
}

// State reports the switches.
func (s *StorageFaults) State() StorageFaultState {
	return StorageFaultState{FailSync: s.failSync.Load(), Full: s.full.Load(), SyncDelay: time.Duration(s.syncDelay.Load()), Failed: s.failed.Load()}
}

// Inject implements the filesystem hook (vfs.Injector).
func (s *StorageFaults) Inject(op vfs.Op, path string, n int) (int, error) {
	switch op {
	case vfs.OpSync, vfs.OpSyncDir:
		if t := time.Duration(s.syncDelay.Load()); t > 0 {
			time.Sleep(t)
		}
		if s.failSync.Load() {
			s.failed.Add(1)
			return 0, &os.PathError{Op: "fsync", Path: path, Err: syscall.EIO}
		}
	case vfs.OpWrite:
		if s.full.Load() {
			s.failed.Add(1)
			return 0, &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
	}
	return n, nil
}
