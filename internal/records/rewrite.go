package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Stored batches: the log cleaner (logstore compaction) rewrites batches
// the way Kafka's LogCleaner does, so a batch in a compacted log may hold
// fewer records than LastOffsetDelta+1 (the offset deltas keep their
// original values, with gaps), or none at all (an empty batch kept only to
// preserve a producer's last sequence). Validate and Records enforce the
// produce-side rule (deltas 0..n-1); the functions here accept what a
// cleaner may leave and nothing more.

// AttrDeleteHorizon is the attribute bit saying FirstTimestamp holds the
// delete horizon (KIP-534): tombstones and transaction markers in the batch
// may be removed once the horizon has passed.
const AttrDeleteHorizon = attrDeleteHorizon

// ValidateStored is Validate for batches read back from a (possibly
// compacted) log: NumRecords may be anything from 0 to LastOffsetDelta+1.
func ValidateStored(b []byte) (BatchHeader, error) {
	h, err := checkFraming(b)
	if err != nil {
		return h, err
	}
	if h.LastOffsetDelta < 0 || h.NumRecords < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
		return h, fmt.Errorf("%w: record count %d, last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	}
	if c := h.Compression(); c > CodecZstd {
		return h, fmt.Errorf("%w: %d", ErrUnsupportedCompression, c)
	}
	return h, nil
}

// ForEachStored decodes the records of a stored batch (header included,
// already checked with ValidateStored) and calls fn for each. Offset deltas
// must be strictly increasing within [0, LastOffsetDelta]; the record count
// must be NumRecords. A compressed body is decompressed into scratch (grown
// as needed, at most max bytes) which is returned for reuse; the Record
// passed to fn aliases it and is valid only during the call; raw is the
// record's encoding (length prefix included), to copy it unchanged.
func ForEachStored(batch []byte, max int, scratch []byte, fn func(r *Record, raw []byte) error) ([]byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return scratch, err
	}
	if h.NumRecords == 0 {
		return scratch, nil
	}
	body := batch[BatchHeaderLen:h.Size()]
	if c := h.Compression(); c != CodecNone {
		scratch, err = DecompressAppend(scratch[:0], c, body, max)
		if err != nil {
			return scratch, err
		}
		body = scratch
	}
	var r Record
	var hdrs []Header
	prev := int64(-1)
	for i := int32(0); i < h.NumRecords; i++ {
		rest, err := decodeStored(body, &r, &hdrs)
		if err != nil {
			return scratch, fmt.Errorf("%w: record %d: %v", ErrInvalidRecord, i, err)
		}
		if int64(r.OffsetDelta) <= prev || r.OffsetDelta > h.LastOffsetDelta {
			return scratch, fmt.Errorf("%w: record %d: offset delta %d after %d (last %d)", ErrInvalidRecord, i, r.OffsetDelta, prev, h.LastOffsetDelta)
		}
		prev = int64(r.OffsetDelta)
		if err := fn(&r, body[:len(body)-len(rest)]); err != nil {
			return scratch, err
		}
		body = rest
	}
	if len(body) != 0 {
		return scratch, fmt.Errorf("%w: %d unexpected bytes after %d records", ErrInvalidRecord, len(body), h.NumRecords)
	}
	return scratch, nil
}

// decodeStored decodes one record from p into r and returns the rest.
func decodeStored(p []byte, r *Record, hdrs *[]Header) ([]byte, error) {
	length, n := binary.Varint(p)
	if n <= 0 || length < 1 || length > int64(len(p)-n) {
		return nil, decodeErr("bad record length")
	}
	rec, rest := p[n:n+int(length)], p[n+int(length):]
	r.Attributes = int8(rec[0])
	rec = rec[1:]
	if r.TimestampDelta, rec = varint(rec); rec == nil {
		return nil, decodeErr("bad timestamp delta")
	}
	var od int64
	if od, rec = varint(rec); rec == nil || od < 0 || od > 1<<31-1 {
		return nil, decodeErr("bad offset delta")
	}
	r.OffsetDelta = int32(od)
	var ok bool
	if r.Key, rec, ok = bytesField(rec); !ok {
		return nil, decodeErr("bad key")
	}
	if r.Value, rec, ok = bytesField(rec); !ok {
		return nil, decodeErr("bad value")
	}
	var nh int64
	if nh, rec = varint(rec); rec == nil || nh < 0 || nh > int64(len(rec)) {
		return nil, decodeErr("bad header count")
	}
	*hdrs = (*hdrs)[:0]
	for j := int64(0); j < nh; j++ {
		var h Header
		if h.Key, rec, ok = bytesField(rec); !ok || h.Key == nil {
			return nil, decodeErr("bad header key")
		}
		if h.Value, rec, ok = bytesField(rec); !ok {
			return nil, decodeErr("bad header value")
		}
		*hdrs = append(*hdrs, h)
	}
	r.Headers = *hdrs
	if len(rec) != 0 {
		return nil, decodeErr("record length does not match contents")
	}
	return rest, nil
}

// AppendRecord encodes r (with its own OffsetDelta and TimestampDelta) as
// one uncompressed record and appends it to dst.
func AppendRecord(dst []byte, r *Record) []byte { return appendRecord(dst, r, r.OffsetDelta) }

// AppendRewritten builds a batch from header h (BaseOffset, LeaderEpoch,
// Attributes, LastOffsetDelta, timestamps, producer fields as given) and
// raw, the concatenation of numRecords uncompressed records (AppendRecord),
// compressing raw with h's codec; CRC and Length are computed. A body
// compressed with snappy in the xerial framing (origBody starts with it) is
// re-framed the same way. With numRecords 0 the body is empty and the
// codec bits are cleared, as Kafka writes empty batches.
func AppendRewritten(dst []byte, h BatchHeader, numRecords int32, raw, origBody []byte) ([]byte, error) {
	body := raw
	codec := h.Compression()
	if numRecords == 0 {
		body = nil
		h.Attributes &^= attrCompressionMask
	} else if codec != CodecNone {
		var err error
		if codec == CodecSnappy && bytes.HasPrefix(origBody, xerialMagic) {
			body = XerialSnappy(raw, 32<<10)
		} else if body, err = compressPooled(codec, raw); err != nil {
			return dst, err
		}
	}
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderLen)...)
	dst = append(dst, body...)
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[offLength:], uint32(len(b)-lengthFieldEnd))
	be.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = 2
	be.PutUint16(b[offAttributes:], uint16(h.Attributes))
	be.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[offFirstTimestamp:], uint64(h.FirstTimestamp))
	be.PutUint64(b[offMaxTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[offNumRecords:], uint32(numRecords))
	be.PutUint32(b[offCRC:], Checksum(b))
	return dst, nil
}

// Encoders are reused across batches: a cleaner rewrites many, and a new
// zstd or gzip encoder per batch costs more than the batch.
var (
	zstdEncPool = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only on invalid options
		}
		return e
	}}
	gzipEncPool = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4EncPool  = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// 64 KiB blocks, as the Java client writes (the 4 MiB default
		// costs 4 MiB of buffer per encoder).
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			panic(err)
		}
		return w
	}}
)

// compressPooled is Compress with pooled encoders.
func compressPooled(codec Codec, src []byte) ([]byte, error) {
	switch codec {
	case CodecZstd:
		e := zstdEncPool.Get().(*zstd.Encoder)
		out := e.EncodeAll(src, nil)
		zstdEncPool.Put(e)
		return out, nil
	case CodecGzip:
		var buf bytes.Buffer
		w := gzipEncPool.Get().(*gzip.Writer)
		w.Reset(&buf)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		gzipEncPool.Put(w)
		return buf.Bytes(), err
	case CodecLZ4:
		var buf bytes.Buffer
		w := lz4EncPool.Get().(*lz4.Writer)
		w.Reset(&buf)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		lz4EncPool.Put(w)
		return buf.Bytes(), err
	case CodecSnappy:
		return snappy.Encode(nil, src), nil
	}
	return Compress(codec, src)
}
