package records

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/pierrec/lz4/v4"
)

// An lz4 frame decoder for validation. pierrec's Reader takes a block
// buffer of the frame's declared maximum (4 MiB with producers' defaults)
// from a sync.Pool for every frame; under a broker's allocation rate the
// pool is emptied at every GC, so a busy broker zeroed a fresh 4 MiB per
// batch. This one decodes each block with lz4.UncompressBlock into a
// buffer its scan slot keeps (at most the frame's 4 MiB maximum), hands the decoded
// block to the Scanner without another copy, and checks what consumers
// check (librdkafka's LZ4F, kgo's pierrec reader, Kafka's
// Lz4BlockInputStream): the header checksum, block checksums, the content
// size and the content checksum. Every block is decoded on its own, as
// Kafka's Java decoder does, so a block of a linked frame that copies from
// the block before it is corrupt: Java consumers could not read it. A
// block's size prefix is never trusted beyond the frame's block maximum or
// the bytes actually present.

const lz4Magic = 0x184D2204

type lz4Frame struct {
	src []byte // the frame's bytes not yet read

	blockMax   int
	blockSum   bool
	contentSum bool
	size       int64 // declared content size, -1 if absent
	total      int64 // decoded so far
	sum        xxh32
	done       bool

	blk []byte // decoded block (kept by the slot)
}

func lz4Corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: lz4: "+format, append([]any{ErrCorrupt}, args...)...)
}

// reset starts decoding body, one lz4 frame and nothing after it.
func (f *lz4Frame) reset(body []byte) error {
	*f = lz4Frame{blk: f.blk, size: -1}
	b := body
	if len(b) < 7 {
		return lz4Corrupt("%d bytes is shorter than a frame header", len(b))
	}
	if m := binary.LittleEndian.Uint32(b); m != lz4Magic {
		return lz4Corrupt("bad frame magic %#x", m)
	}
	flg, bd := b[4], b[5]
	if flg>>6 != 1 || flg&0x02 != 0 || bd&0x8f != 0 {
		return lz4Corrupt("bad frame descriptor %#x %#x", flg, bd)
	}
	if flg&0x01 != 0 {
		return lz4Corrupt("frame needs a dictionary")
	}
	code := int(bd>>4) & 7
	if code < 4 {
		return lz4Corrupt("block maximum size code %d", code)
	}
	f.blockMax = 1 << (8 + 2*code) // 4: 64 KiB ... 7: 4 MiB
	f.blockSum = flg&0x10 != 0
	f.contentSum = flg&0x04 != 0
	n := 6
	if flg&0x08 != 0 {
		if len(b) < n+8+1 {
			return lz4Corrupt("truncated frame header")
		}
		size := binary.LittleEndian.Uint64(b[n:])
		if size > 1<<62 {
			return lz4Corrupt("content size %d", size)
		}
		f.size = int64(size)
		n += 8
	}
	if hc := byte(xxh32Sum(b[4:n]) >> 8); hc != b[n] {
		return lz4Corrupt("header checksum %#x, computed %#x", b[n], hc)
	}
	f.src = b[n+1:]
	f.sum.reset()
	return nil
}

// next decodes the next block; io.EOF after the end mark and checksum.
// The block is valid until the next call.
func (f *lz4Frame) next() ([]byte, error) {
	for !f.done {
		if len(f.src) < 4 {
			return nil, lz4Corrupt("truncated before a block size")
		}
		v := binary.LittleEndian.Uint32(f.src)
		f.src = f.src[4:]
		if v == 0 {
			return nil, f.end()
		}
		n := int(v &^ (1 << 31))
		if n > f.blockMax {
			return nil, lz4Corrupt("block of %d bytes, frame maximum %d", n, f.blockMax)
		}
		need := n
		if f.blockSum {
			need += 4
		}
		if len(f.src) < need {
			return nil, lz4Corrupt("block of %d bytes with %d left", n, len(f.src))
		}
		data := f.src[:n]
		if f.blockSum {
			if want, got := binary.LittleEndian.Uint32(f.src[n:]), xxh32Sum(data); want != got {
				return nil, lz4Corrupt("block checksum %#x, computed %#x", want, got)
			}
		}
		f.src = f.src[need:]
		var out []byte
		if v&(1<<31) != 0 {
			out = data // stored uncompressed: hand the bytes out as they are
		} else {
			// A block decodes to at most 255 bytes per byte (match
			// lengths grow by 255 per extra length byte): the buffer
			// grows to that or the frame's maximum, whatever the
			// frame header declares.
			if need := min(f.blockMax, 256*n+64); cap(f.blk) < need {
				f.blk = make([]byte, min(f.blockMax, max(need, 2*cap(f.blk))))
			}
			k, err := lz4.UncompressBlock(data, f.blk[:min(cap(f.blk), f.blockMax)])
			if err != nil {
				return nil, lz4Corrupt("%v", err)
			}
			out = f.blk[:k]
		}
		f.total += int64(len(out))
		if f.size >= 0 && f.total > f.size {
			return nil, lz4Corrupt("decodes past its declared content size %d", f.size)
		}
		if f.contentSum {
			f.sum.update(out)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, io.EOF
}

func (f *lz4Frame) end() error {
	f.done = true
	if f.contentSum {
		if len(f.src) < 4 {
			return lz4Corrupt("truncated content checksum")
		}
		if want, got := binary.LittleEndian.Uint32(f.src), f.sum.sum(); want != got {
			return lz4Corrupt("content checksum %#x, computed %#x", want, got)
		}
		f.src = f.src[4:]
	}
	if f.size >= 0 && f.total != f.size {
		return lz4Corrupt("%d bytes decoded, content size says %d", f.total, f.size)
	}
	if len(f.src) > 0 {
		return lz4Corrupt("%d bytes after the frame", len(f.src))
	}
	return io.EOF
}

// release lets go of the batch.
func (f *lz4Frame) release() { f.src = nil }

// xxh32 is XXH32 with seed 0 (the lz4 frame format's checksum), streaming.
type xxh32 struct {
	v     [4]uint32
	total uint64
	tail  [16]byte
	nt    int
}

const (
	xxhP1 uint32 = 2654435761
	xxhP2 uint32 = 2246822519
	xxhP3 uint32 = 3266489917
	xxhP4 uint32 = 668265263
	xxhP5 uint32 = 374761393
)

func (x *xxh32) reset() {
	p1 := xxhP1 // wrapping arithmetic, as the spec's seed setup is
	*x = xxh32{v: [4]uint32{p1 + xxhP2, xxhP2, 0, -p1}}
}

func xxhRound(v, in uint32) uint32 {
	return bits.RotateLeft32(v+in*xxhP2, 13) * xxhP1
}

// stripes consumes the whole 16-byte stripes of b and returns the rest.
func (x *xxh32) stripes(b []byte) []byte {
	v1, v2, v3, v4 := x.v[0], x.v[1], x.v[2], x.v[3]
	n := len(b) &^ 15
	for i := 0; i < n; i += 16 {
		s := (*[16]byte)(b[i : i+16])
		v1 = xxhRound(v1, binary.LittleEndian.Uint32(s[0:4]))
		v2 = xxhRound(v2, binary.LittleEndian.Uint32(s[4:8]))
		v3 = xxhRound(v3, binary.LittleEndian.Uint32(s[8:12]))
		v4 = xxhRound(v4, binary.LittleEndian.Uint32(s[12:16]))
	}
	x.v = [4]uint32{v1, v2, v3, v4}
	return b[n:]
}

func (x *xxh32) update(b []byte) {
	x.total += uint64(len(b))
	if x.nt > 0 {
		k := copy(x.tail[x.nt:], b)
		x.nt += k
		b = b[k:]
		if x.nt < 16 {
			return
		}
		x.stripes(x.tail[:])
		x.nt = 0
	}
	b = x.stripes(b)
	x.nt = copy(x.tail[:], b)
}

func (x *xxh32) sum() uint32 {
	var h uint32
	if x.total >= 16 {
		h = bits.RotateLeft32(x.v[0], 1) + bits.RotateLeft32(x.v[1], 7) + bits.RotateLeft32(x.v[2], 12) + bits.RotateLeft32(x.v[3], 18)
	} else {
		h = xxhP5 // + the seed, 0
	}
	h += uint32(x.total)
	p := x.tail[:x.nt]
	for ; len(p) >= 4; p = p[4:] {
		h += binary.LittleEndian.Uint32(p) * xxhP3
		h = bits.RotateLeft32(h, 17) * xxhP4
	}
	for _, c := range p {
		h += uint32(c) * xxhP5
		h = bits.RotateLeft32(h, 11) * xxhP1
	}
	h ^= h >> 15
	h *= xxhP2
	h ^= h >> 13
	h *= xxhP3
	h ^= h >> 16
	return h
}

func xxh32Sum(b []byte) uint32 {
	var x xxh32
	x.reset()
	x.update(b)
	return x.sum()
}
