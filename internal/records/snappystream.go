package records

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
)

// A streaming decoder for standard snappy blocks and the xerial framing
// around them. klauspost's snappy only decodes a whole block into a buffer
// of its declared length, which is what a decompression bomb wants; this
// one keeps only the history that back-references can reach.
//
// Blocks of up to snappyWhole bytes are decoded whole with s2.Decode
// (assembly; far cheaper, and still bounded), their tags walked for S2's
// repeat copies. For larger ones: snappy offsets
// are not bounded by the format, so the decoder first walks
// the block's tags (cheap: no bytes are produced) to check the block
// (lengths add up to the declared length, every copy's offset is within
// what was decoded before it) and to learn the farthest offset used. The
// C++ and Go encoders never reach back more than 64 KiB; s2.EncodeSnappy
// (kgo) may reach back across its whole input, in which case the window
// grows to that distance, up to snappyMaxWindow. The S2 extensions (repeat
// copies, offset 0) are refused: Java and librdkafka consumers could not
// read them.

// snappyMaxWindow is the farthest back-reference the streaming decoder
// follows; a block that reaches further is refused as corrupt rather than
// buffered whole.
const snappyMaxWindow = 8 << 20

// snappyOut is how much decoded output is produced between slides of the
// window.
const snappyOut = 32 << 10

// snappyWhole is the largest block decoded in one go into a buffer of the
// stream's own: per-element
// streaming costs several times more CPU, and every xerial chunk and most
// producers' whole-batch blocks are this small. Larger blocks stream.
const snappyWhole = 1 << 20

type snappyStream struct {
	rest   []byte // xerial: the chunks not yet started
	xerial bool

	src    []byte // the current block's remaining tagged elements
	remain int    // decoded bytes the current block still owes
	lit    int    // bytes left of the literal being copied

	win []byte // history + output
	pos int    // end of decoded bytes in win
	rd  int    // next decoded byte to hand to Read
	// whole holds a block decoded in one go (len > 0 while in use); the
	// Read position is rd then too.
	whole    []byte
	wholeBuf []byte
	// reach is the history kept when the window slides.
	reach int
	err   error
}

// reset prepares s to decode body (a raw block or an xerial stream); it
// checks the whole body first and fails with ErrCorrupt if it is invalid.
func (s *snappyStream) reset(body []byte) error {
	*s = snappyStream{win: s.win[:0], wholeBuf: s.wholeBuf}
	if len(body) >= xerialHeaderLen && string(body[:len(xerialMagic)]) == string(xerialMagic) {
		s.xerial = true
		s.rest = body[xerialHeaderLen:]
		for p := s.rest; len(p) > 0; {
			if len(p) < 4 {
				return fmt.Errorf("%w: snappy: truncated xerial chunk length", ErrCorrupt)
			}
			n := binary.BigEndian.Uint32(p)
			p = p[4:]
			if uint64(n) > uint64(len(p)) {
				return fmt.Errorf("%w: snappy: xerial chunk of %d bytes, %d left", ErrCorrupt, n, len(p))
			}
			p = p[n:]
		}
		return nil
	}
	return s.startBlock(body)
}

// snappyScan checks one raw block without producing output and returns the
// farthest offset it copies from.
func snappyScan(b []byte) (int, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("%w: snappy: bad block length", ErrCorrupt)
	}
	b = b[k:]
	var d uint64 // decoded so far
	reach := 0
	for len(b) > 0 {
		length, off, rest, ok := snappyTag(b)
		if !ok {
			return 0, fmt.Errorf("%w: snappy: truncated element", ErrCorrupt)
		}
		if off == 0 { // literal
			if uint64(len(rest)) < uint64(length) {
				return 0, fmt.Errorf("%w: snappy: literal runs past the block", ErrCorrupt)
			}
			rest = rest[length:]
		} else {
			if off < 0 || uint64(off) > d {
				return 0, fmt.Errorf("%w: snappy: copy offset %d with %d bytes decoded", ErrCorrupt, off, d)
			}
			reach = max(reach, off)
		}
		d += uint64(length)
		if d > n {
			return 0, fmt.Errorf("%w: snappy: block decodes past its declared %d bytes", ErrCorrupt, n)
		}
		b = rest
	}
	if d != n {
		return 0, fmt.Errorf("%w: snappy: block decodes to %d bytes, declares %d", ErrCorrupt, d, n)
	}
	if reach > snappyMaxWindow {
		return 0, fmt.Errorf("%w: snappy: back-reference of %d bytes exceeds the %d-byte window", ErrCorrupt, reach, snappyMaxWindow)
	}
	return reach, nil
}

// snappyHasRepeat reports whether a block's elements (after the length
// preamble), which s2.Decode accepted, use S2's repeat copy (a one-byte
// offset copy with offset 0), which standard snappy decoders refuse. It
// only walks the tags: three times cheaper than the strict decoder.
func snappyHasRepeat(b []byte) bool {
	for i := 0; i < len(b); {
		t := b[i]
		switch t & 3 {
		case 0:
			l := int(t >> 2)
			if l < 60 {
				i += 2 + l
				continue
			}
			nb := l - 59
			if i+1+nb > len(b) {
				return false
			}
			n := 0
			for j := nb; j >= 1; j-- {
				n = n<<8 | int(b[i+j])
			}
			i += 2 + nb + n
		case 1:
			if t&0xe0 == 0 && i+1 < len(b) && b[i+1] == 0 {
				return true
			}
			i += 2
		case 2:
			i += 3
		default:
			i += 5
		}
	}
	return false
}

// snappyTag decodes one element: a literal (off 0, length bytes follow in
// rest) or a copy (off > 0; off -1 means an offset of 0, which standard
// snappy forbids).
func snappyTag(b []byte) (length, off int, rest []byte, ok bool) {
	t := b[0]
	switch t & 3 {
	case 0:
		l := int(t >> 2)
		switch {
		case l < 60:
			return l + 1, 0, b[1:], true
		default:
			nb := l - 59 // 1..4 length bytes, little-endian
			if len(b) < 1+nb {
				return 0, 0, nil, false
			}
			var v uint64
			for i := nb - 1; i >= 0; i-- {
				v = v<<8 | uint64(b[1+i])
			}
			if v >= 1<<32-1 {
				return 0, 0, nil, false
			}
			return int(v) + 1, 0, b[1+nb:], true
		}
	case 1:
		if len(b) < 2 {
			return 0, 0, nil, false
		}
		off = int(t&0xe0)<<3 | int(b[1])
		length = 4 + int(t>>2&7)
		rest = b[2:]
	case 2:
		if len(b) < 3 {
			return 0, 0, nil, false
		}
		off = int(binary.LittleEndian.Uint16(b[1:]))
		length = 1 + int(t>>2)
		rest = b[3:]
	case 3:
		if len(b) < 5 {
			return 0, 0, nil, false
		}
		off = int(binary.LittleEndian.Uint32(b[1:]))
		length = 1 + int(t>>2)
		rest = b[5:]
	}
	if off == 0 {
		off = -1
	}
	return length, off, rest, true
}

// startBlock begins decoding a raw block: whole if it is small, else by
// streaming after snappyScan checked it and sized the window. Blocks are
// independent: a block's copies never reach into the one before.
func (s *snappyStream) startBlock(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 1<<32-1 {
		return fmt.Errorf("%w: snappy: bad block length", ErrCorrupt)
	}
	s.rd, s.pos, s.whole = 0, 0, nil
	if n <= snappyWhole {
		if cap(s.wholeBuf) < int(n) {
			s.wholeBuf = make([]byte, max(int(n), 64<<10))
		}
		out, err := s2.Decode(s.wholeBuf[:cap(s.wholeBuf)], b)
		if err != nil {
			return fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		if snappyHasRepeat(b[k:]) {
			return fmt.Errorf("%w: snappy: S2 repeat copy (offset 0) in a snappy block", ErrCorrupt)
		}
		s.whole, s.remain = out, 0
		if len(out) == 0 {
			s.whole = nil
		}
		return nil
	}
	reach, err := snappyScan(b)
	if err != nil {
		return err
	}
	s.reach = reach
	if need := reach + snappyOut + 64; cap(s.win) < need {
		s.win = make([]byte, need)
	}
	s.win = s.win[:cap(s.win)]
	s.src, s.remain, s.lit = b[k:], int(n), 0
	return nil
}

// Read hands out decoded bytes.
func (s *snappyStream) Read(p []byte) (int, error) {
	for {
		if s.whole != nil {
			n := copy(p, s.whole[s.rd:])
			if s.rd += n; s.rd == len(s.whole) {
				s.whole = nil
			}
			return n, nil
		}
		if s.rd < s.pos {
			n := copy(p, s.win[s.rd:s.pos])
			s.rd += n
			return n, nil
		}
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
}

// fill decodes up to snappyOut more bytes into the window, sliding it
// first so that reach bytes of history stay behind the output.
func (s *snappyStream) fill() {
	if s.pos+snappyOut+64 > len(s.win) {
		keep := min(s.reach, s.pos)
		copy(s.win, s.win[s.pos-keep:s.pos])
		s.pos, s.rd = keep, keep
	}
	end := s.pos + snappyOut
	for s.pos < end {
		if s.remain == 0 {
			// Hand out this block's last bytes before the next block
			// starts over at the front of the window.
			if s.pos > s.rd || !s.nextChunk() || s.whole != nil {
				return
			}
			continue
		}
		if s.lit > 0 {
			n := copy(s.win[s.pos:end], s.src[:s.lit])
			s.pos += n
			s.src = s.src[n:]
			s.lit -= n
			s.remain -= n
			continue
		}
		length, off, rest, _ := snappyTag(s.src)
		s.src = rest
		if off == 0 {
			s.lit = length
			continue
		}
		// Copies may overlap their own output (run-length), so byte by
		// byte when they do.
		from := s.pos - off
		if off >= length {
			copy(s.win[s.pos:s.pos+length], s.win[from:from+length])
		} else {
			for i := range length {
				s.win[s.pos+i] = s.win[from+i]
			}
		}
		s.pos += length
		s.remain -= length
	}
}

// nextChunk starts the next xerial chunk; at the end it records io.EOF.
func (s *snappyStream) nextChunk() bool {
	if !s.xerial || len(s.rest) == 0 {
		s.err = io.EOF
		return false
	}
	n := binary.BigEndian.Uint32(s.rest)
	blk := s.rest[4 : 4+n]
	s.rest = s.rest[4+n:]
	if err := s.startBlock(blk); err != nil {
		s.err = err
		return false
	}
	return true
}

// next hands out the next run of decoded bytes without copying them (the
// Scanner's chunk source); the slice is valid until the next call.
func (s *snappyStream) next() ([]byte, error) {
	for {
		if s.whole != nil {
			out := s.whole[s.rd:]
			s.rd, s.whole = len(s.whole), nil
			if len(out) > 0 {
				return out, nil
			}
			continue
		}
		if s.rd < s.pos {
			out := s.win[s.rd:s.pos]
			s.rd = s.pos
			return out, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		s.fill()
	}
}
