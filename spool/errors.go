package spool

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns either is one of these or
// wraps one (errors.Is works), so callers such as the broker can map them to
// protocol error codes without parsing strings.
var (
	// ErrFull: the spool holds MaxBytes already; the append would exceed it.
	// Retriable once the consumer acknowledges (DeleteAcked) and space frees up.
	// Returned wrapped in a *FullError.
	ErrFull = errors.New("spool: full")
	// ErrTooLarge: the record can never fit (larger than MaxRecordBytes, or
	// than MaxBytes itself). Not retriable.
	ErrTooLarge = errors.New("spool: record too large")
	// ErrClosed: the spool was closed.
	ErrClosed = errors.New("spool: closed")
	// ErrCorrupt: a segment failed verification (bad magic, CRC, length,
	// payload framing, name/header mismatch). Such a segment is set aside
	// (renamed to *.corrupt) and reported, never silently skipped.
	ErrCorrupt = errors.New("spool: corrupt segment")
	// ErrUnsupported: a segment was written by a newer format version or
	// uses flags this build does not know.
	ErrUnsupported = errors.New("spool: unsupported segment format")
	// ErrWrongKey: an encrypted segment's bytes are intact (CRC matches) but
	// the cipher cannot authenticate them: the key is not the one it was
	// written with. A configuration error, not corruption; the segment is
	// left in place.
	ErrWrongKey = errors.New("spool: cannot decrypt segment (wrong key?)")
	// ErrNoCipher: the directory holds encrypted segments but no Cipher was
	// configured.
	ErrNoCipher = errors.New("spool: encrypted segment but no cipher configured")
	// ErrTooBig: a segment claims a decoded size above the configured
	// maximum; decoding it is refused before allocating.
	ErrTooBig = errors.New("spool: segment exceeds decode limit")
)

// FullError is returned (wrapping ErrFull) when an append would push the
// spool past its bound.
type FullError struct {
	Need int64 // bytes the append would reserve
	Used int64 // bytes used: on disk plus reserved by records not yet flushed
	Max  int64 // Options.MaxBytes
}

func (e *FullError) Error() string {
	return fmt.Sprintf("spool: full: %d bytes used of %d, append needs %d", e.Used, e.Max, e.Need)
}

func (e *FullError) Unwrap() error { return ErrFull }

// SegmentError locates a failure in one segment file. It wraps ErrCorrupt,
// ErrUnsupported, ErrWrongKey, ErrNoCipher or ErrTooBig.
type SegmentError struct {
	Path        string
	First, Last int64 // the sequence range the file name claims
	Err         error
}

func (e *SegmentError) Error() string {
	return fmt.Sprintf("spool: segment %s [%d..%d]: %v", e.Path, e.First, e.Last, e.Err)
}

func (e *SegmentError) Unwrap() error { return e.Err }

// corruptf builds an error that wraps ErrCorrupt with detail.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
