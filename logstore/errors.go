package logstore

import (
	"errors"
	"fmt"

	"github.com/minikafka/minikafka/internal/records"
)

var (
	// ErrOffsetOutOfRange: the offset is outside [LogStartOffset, LogEndOffset].
	ErrOffsetOutOfRange = errors.New("logstore: offset out of range")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("logstore: log closed")
	// ErrTruncated: the data WaitDurable waited for was removed by Truncate.
	ErrTruncated = errors.New("logstore: offsets were truncated before becoming durable")
	// ErrEmptyAppend: Append was given no bytes.
	ErrEmptyAppend = errors.New("logstore: empty append")
	// ErrCorruptLog: a sealed segment or the log's metadata is damaged.
	// Returned wrapped in *CorruptionError.
	ErrCorruptLog = errors.New("logstore: corrupt log")
)

// BatchError says which batch of an Append was rejected; Err wraps a
// records.Err* value (ErrCorrupt, ErrInvalidMagic, ErrInvalidRecord, ...).
type BatchError = records.BatchError

// CorruptionError names the file and byte position of damage that recovery
// must not silently repair (anything but the active segment's torn tail).
type CorruptionError struct {
	File string
	Pos  int64
	Err  error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("logstore: corrupt log: %s at byte %d: %v", e.File, e.Pos, e.Err)
}

func (e *CorruptionError) Unwrap() []error { return []error{ErrCorruptLog, e.Err} }

// WriteError is a failed write or fsync. Sticky (Transient false): what
// reached the disk is unknown (an fsync failed, or a failed write could
// not be undone), so the log refuses writes until it is reopened.
// Transient: the failed operation was undone (the segment truncated back,
// an atomic file replace left the old file) and nothing else changed, so
// the log takes writes again once the cause (typically a full disk) is
// gone.
type WriteError struct {
	Op        string
	Err       error
	Transient bool
}

func (e *WriteError) Error() string {
	if e.Transient {
		return fmt.Sprintf("logstore: %s failed and was undone: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("logstore: %s failed, log is read-only until reopened: %v", e.Op, e.Err)
}
func (e *WriteError) Unwrap() error { return e.Err }
