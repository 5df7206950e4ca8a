package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// xerialMagic starts the snappy-java "xerial" stream framing that the Java
// client (and librdkafka, for compatibility) may send: magic, then two
// big-endian int32s (version, min compatible version), then chunks of
// [int32 length][raw snappy block].
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// zstdMaxWindow bounds the window a zstd frame may ask for, so a hostile
// frame header cannot make the decoder allocate gigabytes. Kafka producers
// use small levels (windows of a few MiB).
const zstdMaxWindow = 32 << 20

var (
	gzipPool sync.Pool // *gzip.Reader
	lz4Pool  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdPool = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			panic(err) // only on invalid options
		}
		return d
	}}
)

// Decompress decodes src with codec, appending to dst (which may be nil), and
// fails with ErrTooLarge rather than produce more than max bytes. It never
// allocates more than about max bytes for the output, whatever size the
// compressed stream claims (the LZ4/snappy size prefixes are untrusted).
func Decompress(codec Codec, src []byte, max int) ([]byte, error) {
	return DecompressAppend(nil, codec, src, max)
}

// DecompressAppend is Decompress appending to dst; max bounds the bytes added.
func DecompressAppend(dst []byte, codec Codec, src []byte, max int) ([]byte, error) {
	switch codec {
	case CodecNone:
		if len(src) > max {
			return dst, ErrTooLarge
		}
		return append(dst, src...), nil
	case CodecGzip:
		var zr *gzip.Reader
		if v := gzipPool.Get(); v != nil {
			zr = v.(*gzip.Reader)
			if err := zr.Reset(bytes.NewReader(src)); err != nil {
				gzipPool.Put(zr)
				return dst, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			}
		} else {
			var err error
			if zr, err = gzip.NewReader(bytes.NewReader(src)); err != nil {
				return dst, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			}
		}
		out, err := readBounded(dst, zr, max, len(src)*4)
		gzipPool.Put(zr)
		return out, wrapCodecErr("gzip", err)
	case CodecSnappy:
		return decodeSnappy(dst, src, max)
	case CodecLZ4:
		zr := lz4Pool.Get().(*lz4.Reader)
		zr.Reset(bytes.NewReader(src))
		out, err := readBounded(dst, zr, max, len(src)*4)
		zr.Reset(nil)
		lz4Pool.Put(zr)
		return out, wrapCodecErr("lz4", err)
	case CodecZstd:
		zr := zstdPool.Get().(*zstd.Decoder)
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			zstdPool.Put(zr)
			return dst, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		out, err := readBounded(dst, zr, max, len(src)*4)
		_ = zr.Reset(nil)
		zstdPool.Put(zr)
		return out, wrapCodecErr("zstd", err)
	}
	return dst, fmt.Errorf("%w: %d", ErrUnsupportedCompression, codec)
}

func wrapCodecErr(name string, err error) error {
	if err == nil || errors.Is(err, ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
}

// readBounded reads r to EOF into dst, growing geometrically from hint but
// never past len(dst)+max+1 (the extra byte detects overflow).
func readBounded(dst []byte, r io.Reader, max, hint int) ([]byte, error) {
	start := len(dst)
	limit := start + max
	if hint < 512 {
		hint = 512
	}
	if hint > max+1 {
		hint = max + 1
	}
	if cap(dst)-len(dst) < hint {
		nb := make([]byte, len(dst), len(dst)+hint)
		copy(nb, dst)
		dst = nb
	}
	for {
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return dst[:start], ErrTooLarge
			}
			grow := cap(dst) - start
			if grow < 512 {
				grow = 512
			}
			newCap := len(dst) + grow
			if newCap > limit+1 {
				newCap = limit + 1
			}
			nb := make([]byte, len(dst), newCap)
			copy(nb, dst)
			dst = nb
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst[:start], ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], err
		}
	}
}

func decodeSnappy(dst, src []byte, max int) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(dst, src, max)
	}
	if len(src) < xerialHeaderLen {
		return dst, fmt.Errorf("%w: snappy: short xerial header", ErrCorrupt)
	}
	start := len(dst)
	p := src[xerialHeaderLen:]
	for len(p) > 0 {
		if len(p) < 4 {
			return dst[:start], fmt.Errorf("%w: snappy: truncated xerial chunk length", ErrCorrupt)
		}
		n := binary.BigEndian.Uint32(p)
		p = p[4:]
		if uint64(n) > uint64(len(p)) {
			return dst[:start], fmt.Errorf("%w: snappy: xerial chunk of %d bytes, %d left", ErrCorrupt, n, len(p))
		}
		var err error
		dst, err = snappyBlock(dst, p[:n], max-(len(dst)-start))
		if err != nil {
			return dst[:start], err
		}
		p = p[n:]
	}
	return dst, nil
}

// snappyBlock decodes one raw snappy block, checking its claimed length
// against max before allocating.
func snappyBlock(dst, src []byte, max int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
	}
	if n > max {
		return dst, ErrTooLarge
	}
	start := len(dst)
	if cap(dst)-start < n {
		nb := make([]byte, start, start+n)
		copy(nb, dst)
		dst = nb
	}
	out, err := snappy.Decode(dst[start:start+n], src)
	if err != nil {
		return dst[:start], fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
	}
	return dst[:start+len(out)], nil
}

// Compress encodes src with codec (for tests and for the broker when it must
// build batches itself). Snappy output is a raw block; lz4 is the frame format.
func Compress(codec Codec, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case CodecNone:
		return append([]byte(nil), src...), nil
	case CodecGzip:
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CodecSnappy:
		return snappy.Encode(nil, src), nil
	case CodecLZ4:
		w := lz4.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CodecZstd:
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedCompression, codec)
	}
	return buf.Bytes(), nil
}

// XerialSnappy encodes src in the snappy-java stream framing with chunks of
// at most chunk bytes (as the Java client does with 32 KiB blocks).
func XerialSnappy(src []byte, chunk int) []byte {
	out := append([]byte(nil), xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(src) > 0 || len(out) == xerialHeaderLen {
		n := min(chunk, len(src))
		blk := snappy.Encode(nil, src[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		src = src[n:]
		if n == 0 {
			break
		}
	}
	return out
}
