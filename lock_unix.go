//go:build unix

package minikafka

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive advisory lock on dir/.lock, as Kafka
// does, so that two brokers never write the same data dir. The kernel
// drops the lock when the process dies, so a crash never leaves a stale
// lock behind.
func lockDataDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another running broker", ErrDataDirLocked, dir)
		}
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}
