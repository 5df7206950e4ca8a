package records

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/snappy"
)

// CheckFrame is a cheap sanity check of a compressed batch body: it looks
// only at the codec's stream header (gzip member header, zstd and lz4 frame
// descriptors, the snappy block preamble or xerial header), never
// decompresses, and costs the same for any body size. It lets a broker that
// stores compressed batches without decoding them (the CRC already covers
// the compressed bytes, so transport damage is caught) still refuse bodies
// that are plainly not data of the claimed codec, with ErrCorrupt.
//
// It is deliberately loose: every body that Decompress accepts with a
// non-empty result passes (FuzzCheckFrame checks that), so it can reject
// garbage but never a valid stream.
func CheckFrame(c Codec, body []byte) error {
	var why string
	switch c {
	case CodecNone:
		return nil
	case CodecGzip:
		why = checkGzip(body)
	case CodecSnappy:
		why = checkSnappy(body)
	case CodecLZ4:
		why = checkLZ4(body)
	case CodecZstd:
		why = checkZstd(body)
	default:
		return fmt.Errorf("%w: %d", ErrUnsupportedCompression, c)
	}
	if why != "" {
		return fmt.Errorf("%w: %s body: %s", ErrCorrupt, c, why)
	}
	return nil
}

// gzip (RFC 1952): ID1 ID2 CM FLG MTIME(4) XFL OS, then the deflate data
// and an 8-byte trailer (CRC32, ISIZE).
func checkGzip(b []byte) string {
	const header, trailer = 10, 8
	switch {
	case len(b) < header+trailer:
		return fmt.Sprintf("%d bytes is shorter than a gzip member", len(b))
	case b[0] != 0x1f || b[1] != 0x8b:
		return "no gzip magic"
	case b[2] != 8:
		return fmt.Sprintf("gzip compression method %d, want 8 (deflate)", b[2])
	case b[3]&0xe0 != 0:
		return "reserved gzip flag bits set"
	}
	return ""
}

// zstd (RFC 8878): a frame starts with magic 0xFD2FB528 (little endian)
// and a frame header descriptor whose bit 3 is reserved (zero); a
// skippable frame (magic 0x184D2A5?) carries its own length.
func checkZstd(b []byte) string {
	if len(b) < 5 {
		return fmt.Sprintf("%d bytes is shorter than a zstd frame header", len(b))
	}
	switch m := binary.LittleEndian.Uint32(b); {
	case m == 0xFD2FB528:
		if b[4]&0x08 != 0 {
			return "reserved bit set in the zstd frame header descriptor"
		}
	case m&0xFFFFFFF0 == 0x184D2A50:
		if len(b) < 8 {
			return "truncated zstd skippable frame"
		}
	default:
		return "no zstd frame magic"
	}
	return ""
}

// lz4 frame format: magic 0x184D2204 (little endian), FLG (version 01 in
// bits 7-6, bit 1 reserved), BD (block maximum size 4..7 in bits 6-4,
// other bits reserved), optional content size and dictionary ID, header
// checksum. Skippable frames (0x184D2A5?) are allowed as for zstd.
func checkLZ4(b []byte) string {
	if len(b) < 4 {
		return fmt.Sprintf("%d bytes is shorter than an lz4 frame header", len(b))
	}
	switch m := binary.LittleEndian.Uint32(b); {
	case m == 0x184D2204:
	case m&0xFFFFFFF0 == 0x184D2A50:
		if len(b) < 8 {
			return "truncated lz4 skippable frame"
		}
		return ""
	default:
		return "no lz4 frame magic"
	}
	if len(b) < 7 {
		return "truncated lz4 frame descriptor"
	}
	flg, bd := b[4], b[5]
	switch {
	case flg>>6 != 1:
		return fmt.Sprintf("lz4 frame version %d, want 1", flg>>6)
	case flg&0x02 != 0:
		return "reserved bit set in the lz4 FLG byte"
	case bd&0x8f != 0:
		return "reserved bits set in the lz4 BD byte"
	case (bd>>4)&7 < 4:
		return fmt.Sprintf("lz4 block maximum size code %d, want 4..7", (bd>>4)&7)
	}
	need := 7 // magic, FLG, BD, HC
	if flg&0x08 != 0 {
		need += 8 // content size
	}
	if flg&0x01 != 0 {
		need += 4 // dictionary ID
	}
	if len(b) < need {
		return "truncated lz4 frame descriptor"
	}
	return ""
}

// snappy: either the xerial stream framing (magic, version, compatible
// version, then [int32 length][raw block] chunks) or one raw block: a
// uvarint decoded length, then elements of which the first must be a
// literal (a copy has nothing to copy from yet).
func checkSnappy(b []byte) string {
	if bytes.HasPrefix(b, xerialMagic) {
		if len(b) < xerialHeaderLen {
			return "truncated xerial snappy header"
		}
		p := b[xerialHeaderLen:]
		if len(p) == 0 {
			return ""
		}
		if len(p) < 4 {
			return "truncated xerial snappy chunk length"
		}
		n := binary.BigEndian.Uint32(p)
		if uint64(n) > uint64(len(p)-4) {
			return fmt.Sprintf("xerial snappy chunk of %d bytes, %d left", n, len(p)-4)
		}
		return checkSnappyBlock(p[4 : 4+n])
	}
	return checkSnappyBlock(b)
}

func checkSnappyBlock(b []byte) string {
	n, err := snappy.DecodedLen(b)
	if err != nil {
		return "bad snappy block length"
	}
	if n == 0 {
		return ""
	}
	_, w := binary.Uvarint(b)
	if w >= len(b) {
		return "snappy block has no data"
	}
	if b[w]&0x03 != 0 {
		return "snappy block does not start with a literal"
	}
	return ""
}
