package spool

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/klauspost/compress/zstd"
)

// On-disk segment layout (all integers big-endian); see doc.go for the prose.
//
//	off len field
//	  0   4 magic "MKSP"
//	  4   1 version (1)
//	  5   1 flags: bits 0-1 codec (0 none, 1 zstd), bit 4 encrypted
//	  6   2 reserved, zero
//	  8   8 first sequence
//	 16   8 last sequence
//	 24   4 record count
//	 28   4 raw payload length (decoded, before compression)
//	 32   4 stored payload length (bytes after the header)
//	 36   4 CRC-32C of the stored payload
//	 40   4 CRC-32C of bytes 0..39
//	 44     stored payload
const (
	headerLen     = 44
	formatVersion = 1
	adLen         = 36 // header bytes authenticated by the cipher (all but the two CRCs)

	flagCodecMask = 0x03
	flagEncrypted = 0x10
	knownFlags    = flagCodecMask | flagEncrypted

	codecNone = 0
	codecZstd = 1
)

var (
	magic      = [4]byte{'M', 'K', 'S', 'P'}
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// segHeader is the decoded fixed header of a segment file.
type segHeader struct {
	Version     uint8
	Flags       uint8
	First, Last int64
	Count       uint32
	RawLen      uint32
	StoredLen   uint32
	PayloadCRC  uint32
}

func (h segHeader) codec() uint8    { return h.Flags & flagCodecMask }
func (h segHeader) encrypted() bool { return h.Flags&flagEncrypted != 0 }
func (h segHeader) fileSize() int64 { return headerLen + int64(h.StoredLen) }
func (h segHeader) String() string {
	return fmt.Sprintf("v%d flags=%#x seq=[%d..%d] count=%d raw=%d stored=%d", h.Version, h.Flags, h.First, h.Last, h.Count, h.RawLen, h.StoredLen)
}

// putHeader writes h into b[:headerLen], computing the header CRC. The payload
// CRC must already be set in h.
func putHeader(b []byte, h segHeader) {
	putHeaderAD(b, h)
	binary.BigEndian.PutUint32(b[36:], h.PayloadCRC)
	binary.BigEndian.PutUint32(b[40:], crc32.Checksum(b[:40], castagnoli))
}

// putHeaderAD writes the authenticated part of the header, b[:adLen].
func putHeaderAD(b []byte, h segHeader) {
	copy(b[0:4], magic[:])
	b[4] = h.Version
	b[5] = h.Flags
	b[6], b[7] = 0, 0
	binary.BigEndian.PutUint64(b[8:], uint64(h.First))
	binary.BigEndian.PutUint64(b[16:], uint64(h.Last))
	binary.BigEndian.PutUint32(b[24:], h.Count)
	binary.BigEndian.PutUint32(b[28:], h.RawLen)
	binary.BigEndian.PutUint32(b[32:], h.StoredLen)
}

// parseHeader checks magic, then version, then the header CRC, then the
// header's internal consistency, each with its own error.
func parseHeader(b []byte) (segHeader, error) {
	var h segHeader
	if len(b) < headerLen {
		return h, corruptf("short header: %d bytes", len(b))
	}
	if [4]byte(b[0:4]) != magic {
		return h, corruptf("bad magic %q", b[0:4])
	}
	if got, want := binary.BigEndian.Uint32(b[40:]), crc32.Checksum(b[:40], castagnoli); got != want {
		return h, corruptf("header crc %#08x, want %#08x", got, want)
	}
	h.Version = b[4]
	if h.Version != formatVersion {
		return h, fmt.Errorf("%w: version %d", ErrUnsupported, h.Version)
	}
	h.Flags = b[5]
	if h.Flags&^knownFlags != 0 || h.codec() > codecZstd || b[6] != 0 || b[7] != 0 {
		return h, fmt.Errorf("%w: flags %#x reserved %#x", ErrUnsupported, h.Flags, b[6:8])
	}
	h.First = int64(binary.BigEndian.Uint64(b[8:]))
	h.Last = int64(binary.BigEndian.Uint64(b[16:]))
	h.Count = binary.BigEndian.Uint32(b[24:])
	h.RawLen = binary.BigEndian.Uint32(b[28:])
	h.StoredLen = binary.BigEndian.Uint32(b[32:])
	h.PayloadCRC = binary.BigEndian.Uint32(b[36:])
	switch {
	case h.First < 0 || h.Last < h.First:
		return h, corruptf("sequence range [%d..%d]", h.First, h.Last)
	case h.Count == 0 || uint64(h.Count) > uint64(h.Last-h.First)+1:
		return h, corruptf("%d records cannot span [%d..%d]", h.Count, h.First, h.Last)
	case uint64(h.RawLen) < 2*uint64(h.Count): // a frame is at least a span byte and a length byte
		return h, corruptf("raw length %d too small for %d records", h.RawLen, h.Count)
	}
	return h, nil
}

// segEncoder turns a batch payload into segment file bytes. It is owned by a
// single goroutine (the flusher) and reuses its buffers.
type segEncoder struct {
	zenc    *zstd.Encoder // nil when compression is off
	cipher  Cipher        // nil when encryption is off
	scratch []byte        // compressed plaintext when encrypting
}

func newSegEncoder(codec Codec, c Cipher) (*segEncoder, error) {
	e := &segEncoder{cipher: c}
	if codec == CodecZstd {
		// Single-threaded: each flusher encoder goroutine owns one, which is
		// the parallelism. SpeedFastest, and not the low-memory mode (it
		// costs ~20% speed on 4 MiB batches): compression is most of the
		// CPU a record costs.
		z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
		e.zenc = z
	}
	return e, nil
}

// maxStored is the largest stored payload a raw payload of n bytes can turn
// into: compression never expands it (we fall back to storing raw), the
// cipher adds its fixed overhead.
func maxStored(n int, c Cipher) int {
	if c != nil {
		return n + c.Overhead()
	}
	return n
}

// encode appends the segment file for raw (count records spanning
// [first..last]) to dst[:0] and returns it.
func (e *segEncoder) encode(dst []byte, first, last int64, count int, raw []byte) ([]byte, error) {
	return e.encodeMode(dst, first, last, count, raw, true)
}

// encodeMode is encode that stores raw uncompressed when compress is false.
func (e *segEncoder) encodeMode(dst []byte, first, last int64, count int, raw []byte, compress bool) ([]byte, error) {
	if len(raw) > math.MaxUint32 || count <= 0 || uint64(count) > math.MaxUint32 {
		return nil, fmt.Errorf("spool: batch of %d records, %d bytes cannot be encoded", count, len(raw))
	}
	h := segHeader{Version: formatVersion, First: first, Last: last, Count: uint32(count), RawLen: uint32(len(raw))}
	dst = append(dst[:0], make([]byte, headerLen)...)

	// plain is what the cipher (if any) sees; without a cipher it is written
	// straight after the header.
	var plain []byte
	codec := uint8(codecNone)
	if e.zenc != nil && compress {
		var out []byte
		if e.cipher != nil {
			out = e.zenc.EncodeAll(raw, e.scratch[:0])
			e.scratch = out
		} else {
			dst = e.zenc.EncodeAll(raw, dst)
			out = dst[headerLen:]
		}
		// Incompressible batches are stored raw so that a segment is never
		// larger than its records: the size bound reserved at append holds.
		if len(out) < len(raw) {
			codec, plain = codecZstd, out
		}
	}
	if plain == nil {
		plain = raw
		if e.cipher == nil {
			dst = append(dst[:headerLen], raw...)
		}
	}
	h.Flags = codec
	if e.cipher == nil {
		h.StoredLen = uint32(len(plain))
	} else {
		h.Flags |= flagEncrypted
		h.StoredLen = uint32(len(plain) + e.cipher.Overhead())
		putHeaderAD(dst, h)
		var err error
		dst, err = e.cipher.Seal(dst[:headerLen], plain, dst[:adLen])
		if err != nil {
			return nil, fmt.Errorf("spool: encrypt: %w", err)
		}
		if len(dst)-headerLen != int(h.StoredLen) {
			return nil, fmt.Errorf("spool: cipher overhead is %d, it claimed %d", len(dst)-headerLen-len(plain), e.cipher.Overhead())
		}
	}
	h.PayloadCRC = crc32.Checksum(dst[headerLen:], castagnoli)
	putHeader(dst, h)
	return dst, nil
}

// segDecoder verifies and decodes segment files. Safe for concurrent use.
type segDecoder struct {
	zdec   *zstd.Decoder
	cipher Cipher
	maxRaw int // largest raw payload accepted, Options.MaxDecodedBytes
}

func newSegDecoder(c Cipher, maxRaw int) (*segDecoder, error) {
	// WithDecodeAllCapLimit makes DecodeAll stop at cap(dst), which we size
	// from the header after checking it against maxRaw: a hostile frame
	// cannot make it allocate more than the header admitted.
	z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(uint64(max(maxRaw, 1))), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(uint64(max(maxRaw, zstd.MinWindowSize))))
	if err != nil {
		return nil, err
	}
	return &segDecoder{zdec: z, cipher: c, maxRaw: maxRaw}, nil
}

// decode verifies a whole segment file and returns its header and records.
// Record data aliases a freshly allocated buffer, never b.
func (d *segDecoder) decode(b []byte) (segHeader, []Record, error) {
	h, err := parseHeader(b)
	if err != nil {
		return h, nil, err
	}
	if int64(len(b)) != h.fileSize() {
		return h, nil, corruptf("file is %d bytes, header says %d (torn or trailing bytes)", len(b), h.fileSize())
	}
	if int64(h.RawLen) > int64(d.maxRaw) {
		return h, nil, fmt.Errorf("%w: %d raw bytes, limit %d", ErrTooBig, h.RawLen, d.maxRaw)
	}
	stored := b[headerLen:]
	if got := crc32.Checksum(stored, castagnoli); got != h.PayloadCRC {
		return h, nil, corruptf("payload crc %#08x, want %#08x", got, h.PayloadCRC)
	}
	plain := stored
	if h.encrypted() {
		if d.cipher == nil {
			return h, nil, ErrNoCipher
		}
		// The payload CRC matched, so these are the bytes that were written:
		// an authentication failure here means a different key (or a
		// deliberate forgery with a recomputed CRC), not bit rot.
		plain, err = d.cipher.Open(nil, stored, b[:adLen])
		if err != nil {
			return h, nil, fmt.Errorf("%w: %v", ErrWrongKey, err)
		}
	}
	var raw []byte
	switch h.codec() {
	case codecNone:
		if len(plain) != int(h.RawLen) {
			return h, nil, corruptf("stored %d bytes uncompressed, header says %d", len(plain), h.RawLen)
		}
		raw = plain
		if !h.encrypted() {
			raw = append([]byte(nil), plain...) // do not alias the caller's buffer
		}
	case codecZstd:
		raw, err = d.zdec.DecodeAll(plain, make([]byte, 0, h.RawLen))
		if err != nil {
			return h, nil, corruptf("zstd: %v", err)
		}
		if len(raw) != int(h.RawLen) {
			return h, nil, corruptf("decompressed %d bytes, header says %d", len(raw), h.RawLen)
		}
	}
	recs, err := parsePayload(h, raw)
	if err != nil {
		return h, nil, err
	}
	return h, recs, nil
}

// appendFrame appends one record frame: uvarint span, uvarint length, data.
func appendFrame(dst []byte, span int, data []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(span))
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

func frameLen(span, n int) int {
	return uvarintLen(uint64(span)) + uvarintLen(uint64(n)) + n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// readFrame parses the frame at raw[off:], returning span, data and the
// offset of the next frame.
func readFrame(raw []byte, off int) (span int64, data []byte, next int, err error) {
	s, n := binary.Uvarint(raw[off:])
	if n <= 0 || s == 0 || s > math.MaxInt32 {
		return 0, nil, 0, corruptf("bad span at payload offset %d", off)
	}
	off += n
	l, n := binary.Uvarint(raw[off:])
	if n <= 0 || l > uint64(len(raw)-off-n) {
		return 0, nil, 0, corruptf("bad record length at payload offset %d", off)
	}
	off += n
	return int64(s), raw[off : off+int(l) : off+int(l)], off + int(l), nil
}

// parsePayload splits raw into records and checks them against the header:
// exactly Count frames, spans summing to the header's range, no trailing bytes.
func parsePayload(h segHeader, raw []byte) ([]Record, error) {
	recs := make([]Record, 0, h.Count)
	seq := h.First
	for off := 0; off < len(raw); {
		if uint32(len(recs)) == h.Count {
			return nil, corruptf("trailing bytes after %d records", h.Count)
		}
		span, data, next, err := readFrame(raw, off)
		if err != nil {
			return nil, err
		}
		if seq+span-1 > h.Last || seq+span-1 < seq {
			return nil, corruptf("record at %d with span %d passes last sequence %d", seq, span, h.Last)
		}
		recs = append(recs, Record{Seq: seq, Span: int(span), Data: data})
		seq += span
		off = next
	}
	if uint32(len(recs)) != h.Count || seq != h.Last+1 {
		return nil, corruptf("%d records ending at %d, header says %d ending at %d", len(recs), seq-1, h.Count, h.Last)
	}
	return recs, nil
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
