package broker

// The clean-shutdown marker, as Kafka's .kafka_cleanshutdown: Close writes
// DataDir/clean_shutdown (durably) once every partition log closed without
// error, which means every log file is durable as it is. The next start
// finds it, opens the logs knowing that (logstore.Options.CleanShutdown: a
// rescanned active segment needs no fsync), and removes it durably before
// any client is served, so a crash from then on is recovered as a crash.
// Small active segments get no index files at Close (logstore), so after
// a clean stop their rescan is a read of a few bytes and nothing more.

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/minikafka/minikafka/internal/vfs"
)

const cleanShutdownFile = "clean_shutdown"

// smallActiveBytes is logstore's SmallActiveBytes for every partition:
// below it an active segment is rescanned at open rather than indexed at
// Close (10 000 partitions of 128 KiB each would be 1.25 GiB to read
// after a restart; of a few records each, next to nothing).
const smallActiveBytes = 128 << 10

func (b *Broker) cleanShutdownPath() string { return path.Join(b.cfg.DataDir, cleanShutdownFile) }

// markCleanShutdown writes the marker after a Close without errors.
func (b *Broker) markCleanShutdown() error {
	if err := vfs.WriteFileAtomic(b.fs, b.cleanShutdownPath(), []byte("minikafka clean shutdown\n"), 0o644); err != nil {
		return fmt.Errorf("broker: writing the clean-shutdown marker: %w", err)
	}
	return nil
}

// takeCleanShutdown reports whether the marker is there.
func (b *Broker) takeCleanShutdown() (bool, error) {
	_, err := b.fs.Stat(b.cleanShutdownPath())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("broker: checking the clean-shutdown marker: %w", err)
}

// dropCleanShutdown removes the marker, durably, once the logs are open.
func (b *Broker) dropCleanShutdown() error {
	err := b.fs.Remove(b.cleanShutdownPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = b.fs.SyncDir(b.cfg.DataDir)
	}
	if err != nil {
		return fmt.Errorf("broker: removing the clean-shutdown marker: %w", err)
	}
	return nil
}
