package records

import (
	"encoding/binary"
	"fmt"
)

// Header is one record header. Key is never null on the wire; a null value
// is a nil Value.
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record inside a batch. Key and Value are nil when null.
// Slices alias the iterator's buffer and are valid until the next call to Next.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	Value          []byte
	Headers        []Header
}

// RecordIter iterates the records of one batch.
//
//	it, err := records.Records(h, batch[records.BatchHeaderLen:], maxBytes)
//	for it.Next() { r := it.Record(); ... }
//	if err := it.Err(); err != nil { ... }
type RecordIter struct {
	h    BatchHeader
	data []byte
	i    int32
	rec  Record
	hdrs []Header
	err  error
	// anyDeltas: offset deltas are reported, not checked (AnyOffsetDeltas).
	anyDeltas bool
}

// Records returns an iterator over the records of the batch with header h
// whose bytes after the fixed header are body (batch[BatchHeaderLen:]).
// Compressed bodies are decompressed first, producing at most max bytes.
// The iterator checks, as Kafka's LogValidator does, that each record's
// length matches its contents, that offset deltas count up from 0, that the
// number of records is h.NumRecords and that no bytes are left over.
func Records(h BatchHeader, body []byte, max int) (*RecordIter, error) {
	it := &RecordIter{h: h}
	if c := h.Compression(); c != CodecNone {
		d, err := Decompress(c, body, max)
		if err != nil {
			return nil, err
		}
		body = d
	}
	it.data = body
	return it, nil
}

// BatchRecords is Records for a whole batch (header included).
func BatchRecords(batch []byte, max int) (*RecordIter, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(batch) {
		return nil, fmt.Errorf("%w: batch length %d exceeds the %d bytes available", ErrCorrupt, h.Size(), len(batch))
	}
	return Records(h, batch[BatchHeaderLen:h.Size()], max)
}

// Next decodes the next record; it returns false at the end or on error.
func (it *RecordIter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.i >= it.h.NumRecords {
		if len(it.data) != 0 {
			it.err = fmt.Errorf("%w: %d unexpected bytes after %d records", ErrInvalidRecord, len(it.data), it.h.NumRecords)
		}
		return false
	}
	if len(it.data) == 0 {
		it.err = fmt.Errorf("%w: batch claims %d records, found %d", ErrInvalidRecord, it.h.NumRecords, it.i)
		return false
	}
	if err := it.decode(); err != nil {
		it.err = fmt.Errorf("%w: record %d: %s", ErrInvalidRecord, it.i, err)
		return false
	}
	it.i++
	return true
}

// AnyOffsetDeltas makes the iterator return records whose offset delta is
// not their index instead of failing, so a caller can report exactly which
// records are wrong (Kafka's per-record errors). Deltas must still fit an
// int32.
func (it *RecordIter) AnyOffsetDeltas() { it.anyDeltas = true }

// Record returns the current record.
func (it *RecordIter) Record() *Record { return &it.rec }

// Err returns the first error met.
func (it *RecordIter) Err() error { return it.err }

type decodeErr string

func (e decodeErr) Error() string { return string(e) }

func (it *RecordIter) decode() error {
	length, n := binary.Varint(it.data)
	if n <= 0 || length < 0 || length > int64(len(it.data)-n) {
		return decodeErr("bad record length")
	}
	p := it.data[n : n+int(length)]
	it.data = it.data[n+int(length):]

	r := &it.rec
	if len(p) < 1 {
		return decodeErr("empty record")
	}
	r.Attributes = int8(p[0])
	p = p[1:]
	if r.TimestampDelta, p = varint(p); p == nil {
		return decodeErr("bad timestamp delta")
	}
	var od int64
	if od, p = varint(p); p == nil || od < -1<<31 || od > 1<<31-1 || (!it.anyDeltas && od != int64(it.i)) {
		return decodeErr(fmt.Sprintf("offset delta %d, expected %d", od, it.i))
	}
	r.OffsetDelta = int32(od)
	var ok bool
	if r.Key, p, ok = bytesField(p); !ok {
		return decodeErr("bad key")
	}
	if r.Value, p, ok = bytesField(p); !ok {
		return decodeErr("bad value")
	}
	var nh int64
	if nh, p = varint(p); p == nil || nh < 0 || nh > int64(len(p)) {
		return decodeErr("bad header count")
	}
	it.hdrs = it.hdrs[:0]
	for j := int64(0); j < nh; j++ {
		var h Header
		if h.Key, p, ok = bytesField(p); !ok || h.Key == nil {
			return decodeErr("bad header key")
		}
		if h.Value, p, ok = bytesField(p); !ok {
			return decodeErr("bad header value")
		}
		it.hdrs = append(it.hdrs, h)
	}
	r.Headers = it.hdrs
	if len(p) != 0 {
		return decodeErr("record length does not match contents")
	}
	return nil
}

// varint decodes a zigzag varint limited to int32 range... or int64 for
// timestamps; it returns nil rest on error.
func varint(p []byte) (int64, []byte) {
	v, n := binary.Varint(p)
	if n <= 0 {
		return 0, nil
	}
	rest := p[n:]
	if rest == nil {
		rest = p[:0:0]
	}
	return v, rest
}

// bytesField decodes a varint length followed by that many bytes; -1 is null.
func bytesField(p []byte) ([]byte, []byte, bool) {
	l, n := binary.Varint(p)
	if n <= 0 || l < -1 || l > int64(len(p)-n) {
		return nil, nil, false
	}
	p = p[n:]
	if l == -1 {
		return nil, p, true
	}
	return p[:l:l], p[l:], true
}

// BatchSpec describes a batch for AppendBatch.
type BatchSpec struct {
	BaseOffset      int64
	LeaderEpoch     int32
	Codec           Codec
	LogAppendTime   bool
	Transactional   bool
	Control         bool
	FirstTimestamp  int64
	ProducerID      int64 // -1 for none
	ProducerEpoch   int16 // -1 for none
	BaseSequence    int32 // -1 for none
	MaxTimestampSet bool  // use MaxTimestamp instead of deriving it
	MaxTimestamp    int64
}

// AppendBatch encodes a v2 batch of recs (their OffsetDelta is ignored and
// rewritten as the index) and appends it to dst. Used by tests and by code that
// must write its own batches (control records).
func AppendBatch(dst []byte, spec BatchSpec, recs []Record) ([]byte, error) {
	if len(recs) == 0 {
		return dst, fmt.Errorf("%w: empty batch", ErrInvalidRecord)
	}
	var body []byte
	maxTS := spec.FirstTimestamp
	for i := range recs {
		r := &recs[i]
		if ts := spec.FirstTimestamp + r.TimestampDelta; ts > maxTS {
			maxTS = ts
		}
		body = appendRecord(body, r, int32(i))
	}
	if spec.MaxTimestampSet {
		maxTS = spec.MaxTimestamp
	}
	if spec.Codec != CodecNone {
		c, err := Compress(spec.Codec, body)
		if err != nil {
			return dst, err
		}
		body = c
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderLen)...)
	dst = append(dst, body...)
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[offBaseOffset:], uint64(spec.BaseOffset))
	be.PutUint32(b[offLength:], uint32(len(b)-lengthFieldEnd))
	be.PutUint32(b[offLeaderEpoch:], uint32(spec.LeaderEpoch))
	b[offMagic] = 2
	attr := uint16(spec.Codec) & attrCompressionMask
	if spec.LogAppendTime {
		attr |= attrTimestampType
	}
	if spec.Transactional {
		attr |= attrTransactional
	}
	if spec.Control {
		attr |= attrControl
	}
	be.PutUint16(b[offAttributes:], attr)
	be.PutUint32(b[offLastOffsetDelta:], uint32(len(recs)-1))
	be.PutUint64(b[offFirstTimestamp:], uint64(spec.FirstTimestamp))
	be.PutUint64(b[offMaxTimestamp:], uint64(maxTS))
	be.PutUint64(b[offProducerID:], uint64(spec.ProducerID))
	be.PutUint16(b[offProducerEpoch:], uint16(spec.ProducerEpoch))
	be.PutUint32(b[offBaseSequence:], uint32(spec.BaseSequence))
	be.PutUint32(b[offNumRecords:], uint32(len(recs)))
	be.PutUint32(b[offCRC:], Checksum(b))
	return dst, nil
}

func appendRecord(dst []byte, r *Record, delta int32) []byte {
	var tmp [256]byte
	body := tmp[:0]
	body = append(body, byte(r.Attributes))
	body = binary.AppendVarint(body, r.TimestampDelta)
	body = binary.AppendVarint(body, int64(delta))
	body = appendBytesField(body, r.Key)
	body = appendBytesField(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = appendBytesField(body, h.Key)
		body = appendBytesField(body, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
