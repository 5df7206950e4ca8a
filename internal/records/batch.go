package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// BatchHeaderLen is the size of the fixed v2 RecordBatch header.
const BatchHeaderLen = 61

// Byte offsets of the header fields inside a batch.
const (
	offBaseOffset      = 0
	offLength          = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57

	// lengthFieldEnd is where the bytes counted by Length start.
	lengthFieldEnd = 12
)

// Compression codecs as stored in the low three attribute bits.
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Attribute bits (Kafka DefaultRecordBatch).
const (
	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
	attrDeleteHorizon   = 0x40
)

// Typed errors. Callers match them with errors.Is; the broker maps them to
// Kafka error codes (CORRUPT_MESSAGE, INVALID_RECORD, ...).
var (
	// ErrCorrupt: the bytes do not form a batch (short, bad length, bad CRC).
	ErrCorrupt = errors.New("records: corrupt record batch")
	// ErrInvalidMagic: the magic byte is not 2.
	ErrInvalidMagic = errors.New("records: unsupported record batch magic")
	// ErrInvalidRecord: the batch is well framed but its contents are
	// inconsistent (record count vs offset delta, malformed records).
	ErrInvalidRecord = errors.New("records: invalid record")
	// ErrUnsupportedCompression: unknown codec in the attributes.
	ErrUnsupportedCompression = errors.New("records: unsupported compression codec")
	// ErrTooLarge: decompressed data would exceed the caller's limit.
	ErrTooLarge = errors.New("records: decompressed size exceeds limit")
)

// BatchHeader is the fixed part of a v2 RecordBatch.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32 // bytes after the Length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Size is the total size of the batch in bytes, header included.
func (h *BatchHeader) Size() int { return int(h.Length) + lengthFieldEnd }

// LastOffset is BaseOffset + LastOffsetDelta.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression returns the codec.
func (h *BatchHeader) Compression() Codec { return Codec(h.Attributes & attrCompressionMask) }

// IsTransactional reports the transactional attribute bit.
func (h *BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports the control-batch attribute bit.
func (h *BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// TimestampType is 0 for CreateTime and 1 for LogAppendTime.
func (h *BatchHeader) TimestampType() int8 {
	if h.Attributes&attrTimestampType != 0 {
		return 1
	}
	return 0
}

// HasLogAppendTime reports whether the timestamps are broker append times.
func (h *BatchHeader) HasLogAppendTime() bool { return h.Attributes&attrTimestampType != 0 }

// HasDeleteHorizon reports the delete-horizon attribute bit (set by compaction).
func (h *BatchHeader) HasDeleteHorizon() bool { return h.Attributes&attrDeleteHorizon != 0 }

// ParseHeader decodes the fixed header. It checks only that b is long enough
// and that Length is plausible; it does not check magic or CRC (Validate does).
func ParseHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	if len(b) < BatchHeaderLen {
		return h, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorrupt, len(b))
	}
	be := binary.BigEndian
	h.BaseOffset = int64(be.Uint64(b[offBaseOffset:]))
	h.Length = int32(be.Uint32(b[offLength:]))
	h.PartitionLeaderEpoch = int32(be.Uint32(b[offLeaderEpoch:]))
	h.Magic = int8(b[offMagic])
	h.CRC = be.Uint32(b[offCRC:])
	h.Attributes = int16(be.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(be.Uint32(b[offLastOffsetDelta:]))
	h.FirstTimestamp = int64(be.Uint64(b[offFirstTimestamp:]))
	h.MaxTimestamp = int64(be.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(be.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(be.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(be.Uint32(b[offBaseSequence:]))
	h.NumRecords = int32(be.Uint32(b[offNumRecords:]))
	if h.Length < BatchHeaderLen-lengthFieldEnd {
		return h, fmt.Errorf("%w: batch length %d is smaller than the header", ErrCorrupt, h.Length)
	}
	return h, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum computes the CRC32C a batch should carry: over attributes..end.
func Checksum(batch []byte) uint32 {
	return crc32.Checksum(batch[offAttributes:], castagnoli)
}

// Validate checks that b starts with one complete, well-formed v2 batch:
// header, length within b, magic 2, CRC32C, and Kafka's count rule
// (NumRecords > 0 and NumRecords == LastOffsetDelta+1, as LogValidator
// enforces). Bytes after the batch are ignored; use Split for concatenations.
// It does not look inside the records (see Records).
func Validate(b []byte) (BatchHeader, error) {
	h, err := checkFraming(b)
	if err != nil {
		return h, err
	}
	size := h.Size()
	if h.NumRecords <= 0 {
		return h, fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.NumRecords)
	}
	if h.LastOffsetDelta < 0 || int64(h.NumRecords) != int64(h.LastOffsetDelta)+1 {
		return h, fmt.Errorf("%w: record count %d does not match last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	}
	if c := h.Compression(); c > CodecZstd {
		return h, fmt.Errorf("%w: %d", ErrUnsupportedCompression, c)
	}
	if h.Compression() == CodecNone && size-BatchHeaderLen < int(h.NumRecords) {
		// every uncompressed record takes at least... well, more than one byte
		return h, fmt.Errorf("%w: %d records in %d bytes", ErrInvalidRecord, h.NumRecords, size-BatchHeaderLen)
	}
	return h, nil
}

// checkFraming is what Validate and ValidateStored share: a parsable
// header, magic 2, the length within b and the CRC32C.
func checkFraming(b []byte) (BatchHeader, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if h.Magic != 2 {
		return h, fmt.Errorf("%w: magic %d", ErrInvalidMagic, h.Magic)
	}
	size := h.Size()
	if size > len(b) {
		return h, fmt.Errorf("%w: batch length %d exceeds the %d bytes available", ErrCorrupt, size, len(b))
	}
	if got := Checksum(b[:size]); got != h.CRC {
		return h, fmt.Errorf("%w: crc32c %08x, header says %08x", ErrCorrupt, got, h.CRC)
	}
	return h, nil
}

// SetBaseOffset rewrites the base offset in place. The CRC does not cover it.
func SetBaseOffset(batch []byte, base int64) {
	binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(base))
}

// SetLogAppendTime stamps ts as the batch's max timestamp, sets the
// LogAppendTime attribute and recomputes the CRC (Kafka keeps FirstTimestamp
// and the record deltas as the producer wrote them).
func SetLogAppendTime(batch []byte, ts int64) {
	be := binary.BigEndian
	attr := be.Uint16(batch[offAttributes:]) | attrTimestampType
	be.PutUint16(batch[offAttributes:], attr)
	be.PutUint64(batch[offMaxTimestamp:], uint64(ts))
	be.PutUint32(batch[offCRC:], Checksum(batch))
}

// SetIdempotentProducer rewrites the batch's producer identity and first
// sequence in place, clears its transactional bit (the batch is then the
// data of an idempotent, not transactional, producer) and recomputes the CRC.
func SetIdempotentProducer(batch []byte, id int64, epoch int16, seq int32) {
	setProducer(batch, id, epoch, seq, false)
}

// SetTransactionalProducer is SetIdempotentProducer for a transactional
// producer: the batch keeps (or gains) its transactional bit.
func SetTransactionalProducer(batch []byte, id int64, epoch int16, seq int32) {
	setProducer(batch, id, epoch, seq, true)
}

func setProducer(batch []byte, id int64, epoch int16, seq int32, transactional bool) {
	be := binary.BigEndian
	attrs := be.Uint16(batch[offAttributes:]) &^ attrTransactional
	if transactional {
		attrs |= attrTransactional
	}
	be.PutUint16(batch[offAttributes:], attrs)
	be.PutUint64(batch[offProducerID:], uint64(id))
	be.PutUint16(batch[offProducerEpoch:], uint16(epoch))
	be.PutUint32(batch[offBaseSequence:], uint32(seq))
	be.PutUint32(batch[offCRC:], Checksum(batch))
}

// SetPartitionLeaderEpoch rewrites the leader epoch in place (not covered by the CRC).
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[offLeaderEpoch:], uint32(epoch))
}

// Split walks a concatenation of whole batches, calling fn with each batch's
// header and bytes (a sub-slice of buf). It validates each batch (Validate)
// and stops at the first error, which it returns wrapped in a *BatchError
// naming the batch index. Trailing bytes that are not a whole batch are an
// error (ErrCorrupt): producers never send partial batches.
func Split(buf []byte, fn func(i int, h BatchHeader, batch []byte) error) error {
	for i := 0; len(buf) > 0; i++ {
		h, err := Validate(buf)
		if err != nil {
			return &BatchError{Index: i, Err: err}
		}
		size := h.Size()
		if err := fn(i, h, buf[:size]); err != nil {
			return err
		}
		buf = buf[size:]
	}
	return nil
}

// BatchError says which batch of a concatenation failed.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("batch %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }
