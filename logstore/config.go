package logstore

import (
	"log/slog"
	"time"

	"github.com/minikafka/minikafka/internal/durability"
	"github.com/minikafka/minikafka/internal/vfs"
)

// SyncMode says when appended data is fsynced. It is the broker-wide
// durability mode (internal/durability), so every store reads one setting
// the same way. Under SyncNever rolled segments are still fsynced (by their
// seal, in the background), and so is everything on Sync/Close; under SyncAlways appends become visible (high
// watermark) and WaitDurable returns only after fsync, with concurrent
// appenders sharing one fsync.
type SyncMode = durability.Mode

// SyncPolicy is the durability policy of a log.
type SyncPolicy = durability.Policy

const (
	SyncNever    = durability.Never
	SyncInterval = durability.Interval
	SyncAlways   = durability.Always
)

// ParseSyncPolicy parses "always", "never" or "interval=100ms".
func ParseSyncPolicy(s string) (SyncPolicy, error) { return durability.Parse(s) }

// Config holds the per-topic settings, named after Kafka's topic configs.
type Config struct {
	SegmentBytes       int64         // segment.bytes: roll when the active segment would exceed this
	SegmentMs          time.Duration // segment.ms: roll a non-empty segment this long after its first append; <=0 never
	RetentionMs        time.Duration // retention.ms: delete sealed segments whose newest record is older; <0 unlimited
	RetentionBytes     int64         // retention.bytes: keep the log below this size (whole sealed segments); <0 unlimited
	IndexIntervalBytes int           // index.interval.bytes: log bytes between offset index entries
	LogAppendTime      bool          // message.timestamp.type=LogAppendTime
}

// maxSegmentBytes keeps positions in 32-bit index entries.
const maxSegmentBytes = 1<<31 - 1

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * time.Hour,
		RetentionMs:        7 * 24 * time.Hour,
		RetentionBytes:     -1,
		IndexIntervalBytes: 4096,
	}
}

func (c Config) normalized() Config {
	if c.SegmentBytes <= 0 || c.SegmentBytes > maxSegmentBytes {
		c.SegmentBytes = maxSegmentBytes
	}
	if c.IndexIntervalBytes <= 0 {
		c.IndexIntervalBytes = 4096
	}
	return c
}

// Options configures Open.
type Options struct {
	FS     vfs.FS // nil: vfs.Default
	Dir    string // the partition directory; created if missing
	Config Config
	Sync   SyncPolicy
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
	Files  *FileCache       // shared descriptor cache; nil: the log gets its own, unbounded
	// VerifyAll checks the CRC of every batch of every segment at open, not
	// only of segments being rescanned (the active one after an unclean
	// shutdown, and any whose index is missing or stale). Slow for big logs.
	VerifyAll bool
	// CleanShutdown says every file of the log is durable as it is: the
	// last Close completed (the broker's clean-shutdown marker). A
	// rescanned active segment is then not fsynced again at open, which
	// with thousands of partitions is most of a restart.
	CleanShutdown bool
	// SmallActiveBytes: an active segment smaller than this gets no
	// index files at Close, and the next open rescans it instead (at
	// most this much reading per log). With thousands of small
	// partitions, creating two files per log at Close and opening them
	// at start was most of the shutdown and restart; 0 always writes
	// them.
	SmallActiveBytes int64
	// RecoveryCheckpointBytes: each time the active segment grows this
	// much, a background checkpoint fsyncs it and writes its index files
	// (never on the append path), so an open after a crash rescans at
	// most about this much of it (see Recovery in doc.go); 0 means
	// 128 MiB, negative never.
	RecoveryCheckpointBytes int64
	// Listing, when not nil, is taken as the names of the files in Dir
	// instead of reading the directory: what the caller listed right
	// after the last Close, which left the log as it was (a clean
	// shutdown), saving a directory read per log at start. Files added
	// since are not seen; if a listed file is missing, Open reads the
	// directory and starts over.
	Listing []string
}
