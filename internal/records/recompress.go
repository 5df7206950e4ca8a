package records

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Recompression: a topic whose compression.type names a codec stores
// every batch in that codec, as Kafka's LogValidator does when the
// producer's codec differs (same codec, any level: stored as sent).

// LevelDefault asks for the codec's default level (the pooled encoders).
const LevelDefault = 0

// Kafka's ranges for compression.<codec>.level (KIP-390).
const (
	GzipLevelMin, GzipLevelMax = 1, 9
	LZ4LevelMin, LZ4LevelMax   = 1, 17
	ZstdLevelMin, ZstdLevelMax = -131072, 22
)

// Recompress appends to dst batch (valid, with its records) rebuilt with
// codec at level: the records' bytes are unchanged, the header keeps
// every field but the codec bits, Length and CRC. The decompressed
// records may take at most max bytes; scratch is reused for them and
// returned.
func Recompress(dst, batch []byte, codec Codec, level, max int, scratch []byte) (out, scratchOut []byte, err error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return dst, scratch, err
	}
	raw := batch[BatchHeaderLen:h.Size()]
	if c := h.Compression(); c != CodecNone {
		if scratch, err = DecompressAppend(scratch[:0], c, raw, max); err != nil {
			return dst, scratch, err
		}
		raw = scratch
	}
	out, err = RecompressRaw(dst, h, raw, codec, level)
	return out, scratch, err
}

// RecompressRaw appends to dst the batch with header h whose records,
// decompressed, are raw, rebuilt with codec at level (for a caller that
// decompressed the body already, to validate it).
func RecompressRaw(dst []byte, h BatchHeader, raw []byte, codec Codec, level int) ([]byte, error) {
	var body []byte
	var err error
	switch {
	case codec == CodecNone:
		body = raw
	case codec == CodecSnappy:
		// Kafka's broker writes snappy in the snappy-java stream framing,
		// which every client reads.
		body = XerialSnappy(raw, 32<<10)
	case level == LevelDefault:
		if body, err = compressPooled(codec, raw); err != nil {
			return dst, err
		}
	default:
		if body, err = compressLevel(codec, level, raw); err != nil {
			return dst, err
		}
	}
	return AppendBody(dst, h, codec, body)
}

// AppendBody appends to dst the batch with header h (but for Length, CRC
// and the codec bits) and body, records already compressed with codec.
func AppendBody(dst []byte, h BatchHeader, codec Codec, body []byte) ([]byte, error) {
	h.Attributes = h.Attributes&^attrCompressionMask | int16(codec)
	// AppendRewritten compresses raw itself; hand it the finished body
	// as an uncompressed one and set the codec bits after.
	hh := h
	hh.Attributes &^= attrCompressionMask
	start := len(dst)
	dst, err := AppendRewritten(dst, hh, h.NumRecords, body, nil)
	if err != nil {
		return dst, err
	}
	putAttributes(dst[start:], h.Attributes)
	return dst, nil
}

// putAttributes sets a built batch's attributes and its CRC again.
func putAttributes(b []byte, attrs int16) {
	b[offAttributes] = byte(uint16(attrs) >> 8)
	b[offAttributes+1] = byte(attrs)
	c := Checksum(b)
	b[offCRC], b[offCRC+1], b[offCRC+2], b[offCRC+3] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
}

// Encoders at explicit levels are pooled per codec and level: a topic
// uses one level, and a new zstd encoder per batch costs more than the
// batch.
var levelPools sync.Map // levelKey -> *sync.Pool

type levelKey struct {
	codec Codec
	level int
}

func compressLevel(codec Codec, level int, src []byte) ([]byte, error) {
	k := levelKey{codec, level}
	pi, ok := levelPools.Load(k)
	if !ok {
		pi, _ = levelPools.LoadOrStore(k, &sync.Pool{})
	}
	pool := pi.(*sync.Pool)
	switch codec {
	case CodecZstd:
		e, _ := pool.Get().(*zstd.Encoder)
		if e == nil {
			var err error
			e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
			if err != nil {
				return nil, err
			}
		}
		out := e.EncodeAll(src, nil)
		pool.Put(e)
		return out, nil
	case CodecGzip:
		var buf bytes.Buffer
		w, _ := pool.Get().(*gzip.Writer)
		if w == nil {
			var err error
			if w, err = gzip.NewWriterLevel(&buf, level); err != nil {
				return nil, err
			}
		} else {
			w.Reset(&buf)
		}
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		pool.Put(w)
		return buf.Bytes(), err
	case CodecLZ4:
		var buf bytes.Buffer
		w, _ := pool.Get().(*lz4.Writer)
		if w == nil {
			w = lz4.NewWriter(nil)
			if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.CompressionLevelOption(lz4Level(level))); err != nil {
				return nil, err
			}
		}
		w.Reset(&buf)
		_, err := w.Write(src)
		if err == nil {
			err = w.Close()
		}
		pool.Put(w)
		return buf.Bytes(), err
	}
	return nil, fmt.Errorf("%w: %d", ErrUnsupportedCompression, codec)
}

// lz4Level maps Kafka's 1..17 (lz4-java's high-compression levels) onto
// the levels pierrec/lz4 has, 1..9; above 9 is 9.
func lz4Level(level int) lz4.CompressionLevel {
	levels := [...]lz4.CompressionLevel{lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5, lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9}
	return levels[min(max(level, 1), 9)-1]
}
