package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Streaming validation. A Scanner walks the records of a batch as Kafka's
// skipKeyValueIterator does: it decodes each record's fixed fields and the
// lengths of its key, value and headers, and skips the bytes themselves,
// walking the decoder's output where it lies (an lz4 block, a snappy
// block or window) or read through a small buffer (gzip, zstd) instead of
// inflating the batch; only a field split between two runs of output is
// copied. What a compressed batch costs in memory is then the codec's own
// state (a gzip window, an lz4 block of at most 4 MiB, a zstd window of at
// most scanZstdWindow, a snappy back-reference window of at most
// snappyMaxWindow) plus scanBufSize, whatever the batch inflates to, and
// each slot keeps that state for its next batch.
//
// Errors: a body the codec cannot decode (bad stream, truncated stream,
// failed checksum) is ErrCorrupt; records that do not parse, fewer records
// than NumRecords, or bytes left after them are ErrInvalidRecord; more than
// the caller's limit of decompressed bytes is ErrTooLarge.

// scanBufSize is the buffer decompressed bytes are read through.
const scanBufSize = 16 << 10

// scanZstdWindow bounds the zstd window (and, for single-segment frames,
// the content size) a scanned batch may use. Producers' defaults stay well
// below it (kgo 64 KiB, zstd level 3 streaming 2 MiB, level 19 8 MiB).
const scanZstdWindow = 8 << 20

// RecordInfo is what a Scanner reports of one record. Lengths are -1 for
// null.
type RecordInfo struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	KeyLen         int32
	ValueLen       int32
	Headers        int32
}

// ScanPool bounds how many batches are decompressed at once, and so the
// memory decompression can hold across the process: each scan holds one
// slot (a read buffer and the slot's decoders) while it runs.
type ScanPool struct {
	slots chan *Scanner
}

// NewScanPool returns a pool of n slots (n <= 0: GOMAXPROCS, between 2
// and 8: decompression is CPU-bound, and each slot may hold a few MiB).
func NewScanPool(n int) *ScanPool {
	if n <= 0 {
		n = min(8, max(2, runtime.GOMAXPROCS(0)))
	}
	p := &ScanPool{slots: make(chan *Scanner, n)}
	for range n {
		p.slots <- &Scanner{pool: p, own: make([]byte, scanBufSize)}
	}
	return p
}

// Slots is the number of scans that may run at once.
func (p *ScanPool) Slots() int { return cap(p.slots) }

// Each slot keeps its own decoders, created on first use: a zstd or gzip
// decoder costs more to build than a small batch costs to decode, and
// decoders in a sync.Pool (or pierrec's pooled 4 MiB lz4 block buffers)
// are dropped at every GC, which a busy broker runs often. The slots bound
// how many exist.
func newScanZstd() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(scanZstdWindow), zstd.WithDecoderMaxMemory(scanZstdWindow))
	if err != nil {
		panic(err) // only on invalid options
	}
	return d
}

// chunkSource hands out the decoded stream in runs, each valid until the
// next call; io.EOF after a clean end (trailer and checksums checked).
type chunkSource interface {
	next() ([]byte, error)
}

// readerChunks reads an io.Reader decoder through the slot's buffer.
type readerChunks struct {
	r   io.Reader
	buf []byte
	err error // held back to follow the bytes it came with
}

func (c *readerChunks) next() ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	for range 100 {
		n, err := c.r.Read(c.buf)
		if n > 0 {
			c.err = err
			return c.buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, io.ErrNoProgress
}

// Scanner iterates the records of one batch without keeping them.
//
//	sc := pool.Scan(h, batch[BatchHeaderLen:h.Size()], limit)
//	defer sc.Close()
//	for sc.Next() { r := sc.Record(); ... }
//	if err := sc.Err(); err != nil { ... }
type Scanner struct {
	pool *ScanPool
	h    BatchHeader
	i    int32
	rec  RecordInfo
	err  error

	// The decoded stream is buf (read up to r), then pend, then what src
	// has not handed out yet. buf is a chunk from src, or carry when a
	// field straddles two chunks; off is buf[0]'s position in the stream.
	buf  []byte
	r    int
	off  int64
	pend []byte
	src  chunkSource // nil once the stream has ended (or for no codec)
	// read counts decompressed bytes handed out by src, against limit.
	read, limit int64
	carry       [2 * binary.MaxVarintLen64]byte

	codec Codec
	br    bytes.Reader

	// The slot's own (nil for an uncompressed scan), reused by its scans.
	own    []byte
	rc     readerChunks
	lz4    lz4Frame
	zstd   *zstd.Decoder
	gzip   *gzip.Reader
	snappy snappyStream
}

// Scan takes a slot (waiting for one if all are in use) and returns a
// Scanner over the records of the batch with header h and body
// batch[BatchHeaderLen:h.Size()]. limit bounds the decompressed bytes.
// Close gives the slot back.
func (p *ScanPool) Scan(h BatchHeader, body []byte, limit int) *Scanner {
	var s *Scanner
	if h.Compression() == CodecNone {
		// Nothing to inflate: no slot, the body is the buffer.
		s = plainScanners.Get().(*Scanner)
	} else {
		s = <-p.slots
	}
	s.h, s.i, s.err, s.limit, s.read = h, 0, nil, int64(limit), 0
	s.codec = h.Compression()
	s.r, s.off, s.pend, s.src = 0, 0, nil, nil
	if s.codec == CodecNone {
		s.buf = body
		return s
	}
	s.buf = nil
	s.br.Reset(body)
	switch s.codec {
	case CodecGzip:
		var err error
		if s.gzip == nil {
			s.gzip, err = gzip.NewReader(&s.br)
		} else {
			err = s.gzip.Reset(&s.br)
		}
		if err != nil {
			s.err = fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			return s
		}
		s.rc = readerChunks{r: s.gzip, buf: s.own}
		s.src = &s.rc
	case CodecLZ4:
		if err := s.lz4.reset(body); err != nil {
			s.err = err
			return s
		}
		s.src = &s.lz4
	case CodecZstd:
		if s.zstd == nil {
			s.zstd = newScanZstd()
		}
		if err := s.zstd.Reset(&s.br); err != nil {
			s.err = fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
			return s
		}
		s.rc = readerChunks{r: s.zstd, buf: s.own}
		s.src = &s.rc
	case CodecSnappy:
		if err := s.snappy.reset(body); err != nil {
			s.err = err
			return s
		}
		s.src = &s.snappy
	default:
		s.err = fmt.Errorf("%w: %d", ErrUnsupportedCompression, s.codec)
	}
	return s
}

// Inflate appends the decompressed body of the batch with header h to dst
// with a slot's decoders, failing with ErrTooLarge past limit bytes: for
// a caller that needs the records in memory anyway (recompression), so
// that they are decoded once. ScanRaw then checks them.
func (p *ScanPool) Inflate(dst []byte, h BatchHeader, body []byte, limit int) ([]byte, error) {
	if h.Compression() == CodecNone {
		if len(body) > limit {
			return dst, fmt.Errorf("%w: batch inflates past %d bytes", ErrTooLarge, limit)
		}
		return append(dst, body...), nil
	}
	s := p.Scan(h, body, limit)
	defer s.Close()
	if s.err != nil {
		return dst, s.err
	}
	start := len(dst)
	// Room for a usual ratio first, then doubling, never past the limit:
	// what is allocated stays under twice the limit.
	grow := func(need int) {
		if need <= cap(dst) {
			return
		}
		nb := make([]byte, len(dst), min(max(need, 2*cap(dst), start+4*len(body)), start+limit))
		copy(nb, dst)
		dst = nb
	}
	for s.src != nil {
		c, err := s.src.next()
		if len(dst)-start+len(c) > limit {
			return dst[:start], fmt.Errorf("%w: batch inflates past %d bytes", ErrTooLarge, limit)
		}
		grow(len(dst) + len(c))
		dst = append(dst, c...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return dst[:start], s.codecErr(err)
		}
	}
	return dst, nil
}

// ScanRaw returns a Scanner over raw, the decompressed records of the
// batch with header h (see Inflate). It takes no slot.
func (p *ScanPool) ScanRaw(h BatchHeader, raw []byte) *Scanner {
	h.Attributes &^= attrCompressionMask
	return p.Scan(h, raw, len(raw))
}

// Close ends the scan and gives back its slot.
func (s *Scanner) Close() {
	switch s.codec {
	case CodecZstd:
		_ = s.zstd.Reset(nil)
	case CodecLZ4:
		s.lz4.release()
	case CodecSnappy:
		// A window grown for one far-reaching kgo block is not kept.
		if cap(s.snappy.win) > 1<<20 {
			s.snappy.win = nil
		}
		s.snappy.src, s.snappy.rest = nil, nil
	}
	s.rc = readerChunks{}
	s.src, s.buf, s.pend = nil, nil, nil
	s.br.Reset(nil)
	if s.pool == nil {
		plainScanners.Put(s)
		return
	}
	s.pool.slots <- s
}

var plainScanners = sync.Pool{New: func() any { return new(Scanner) }}

// Record returns the current record.
func (s *Scanner) Record() *RecordInfo { return &s.rec }

// Err returns the first error met.
func (s *Scanner) Err() error { return s.err }

// AllRecords scans to the end and returns the error, for callers that need
// no per-record fields.
func (s *Scanner) AllRecords() error {
	for s.Next() {
	}
	return s.err
}

// Next decodes the next record; false at the end or on error. After the
// last record it checks that the stream ends there: a compressed stream
// must also end cleanly (its trailer and checksum are read), as a
// consumer's decoder reads it to the end.
func (s *Scanner) Next() bool {
	if s.err != nil {
		return false
	}
	if s.i >= s.h.NumRecords {
		s.checkEnd()
		return false
	}
	if err := s.decode(); err != nil {
		s.err = err
		return false
	}
	s.i++
	return true
}

func (s *Scanner) checkEnd() {
	if n := len(s.buf) - s.r + len(s.pend); n > 0 {
		s.err = fmt.Errorf("%w: %d unexpected bytes after %d records", ErrInvalidRecord, n, s.h.NumRecords)
		return
	}
	for s.src != nil {
		c, err := s.src.next()
		if len(c) > 0 {
			s.err = fmt.Errorf("%w: bytes after %d records", ErrInvalidRecord, s.h.NumRecords)
			return
		}
		if err == io.EOF {
			s.src = nil
			return
		}
		if err != nil {
			s.err = s.codecErr(err)
			return
		}
	}
}

func (s *Scanner) codecErr(err error) error {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, s.codec, err)
}

// errEOF marks the decompressed stream ending inside a record.
var errEOF = errors.New("premature end of records")

// pos is the position of the next unread byte in the decoded stream.
func (s *Scanner) pos() int64 { return s.off + int64(s.r) }

// more makes at least n bytes (n <= len(carry)) contiguous in buf[r:], or
// fails with errEOF at a clean end of stream, or the codec's error.
func (s *Scanner) more(n int) error {
	for {
		have := len(s.buf) - s.r
		if have >= n {
			return nil
		}
		if len(s.pend) == 0 {
			if s.src == nil {
				return errEOF
			}
			if have > 0 && !s.inCarry() {
				// The chunk under buf is about to be reused.
				s.off += int64(s.r)
				s.buf = s.carry[:copy(s.carry[:], s.buf[s.r:])]
				s.r = 0
			}
			c, err := s.src.next()
			s.read += int64(len(c))
			if s.read > s.limit {
				return fmt.Errorf("%w: batch inflates past %d bytes", ErrTooLarge, s.limit)
			}
			switch {
			case err == io.EOF:
				s.src = nil
			case err != nil:
				return s.codecErr(err)
			}
			s.pend = c
			continue
		}
		if have == 0 {
			s.off += int64(len(s.buf))
			s.buf, s.r, s.pend = s.pend, 0, nil
			continue
		}
		// A field straddles buf and pend: gather its bytes in carry.
		s.off += int64(s.r)
		k := copy(s.carry[:], s.buf[s.r:])
		m := copy(s.carry[k:n], s.pend)
		s.pend = s.pend[m:]
		s.buf, s.r = s.carry[:k+m], 0
	}
}

func (s *Scanner) inCarry() bool {
	return len(s.buf) > 0 && &s.buf[0] == &s.carry[0]
}

// varint reads a zigzag varint (at most 10 bytes).
func (s *Scanner) varint() (int64, error) {
	if len(s.buf)-s.r < binary.MaxVarintLen64 {
		if err := s.more(binary.MaxVarintLen64); err != nil && err != errEOF {
			return 0, err
		}
	}
	v, n := binary.Varint(s.buf[s.r:])
	if n <= 0 {
		if len(s.buf) == s.r || n == 0 {
			return 0, errEOF
		}
		return 0, decodeErr("bad varint")
	}
	s.r += n
	return v, nil
}

// decodeWhole decodes the next record when all of it is in buf and it is
// well formed, which is every record of an uncompressed batch a client
// sent, and most of a decoded chunk's. Anything else (a record running past
// buf, a bad field) it leaves untouched for decodeStream, which
// refills across chunks and says what is wrong; so the two accept the same
// records. For small records the field walk is most of validation's cost:
// this path reads each field with no refill check, and one- and two-byte
// varints without binary.Varint's loop.
func (s *Scanner) decodeWhole() bool {
	b := s.buf[s.r:]
	length, n := wholeVarint(b)
	if n <= 0 || length <= 0 || length > int64(len(b)-n) {
		return false
	}
	rec := b[n : n+int(length)]
	attrs := rec[0]
	i := 1
	ts, k := wholeVarint(rec[i:])
	if k <= 0 {
		return false
	}
	i += k
	od, k := wholeVarint(rec[i:])
	if k <= 0 || od < -1<<31 || od > 1<<31-1 {
		return false
	}
	i += k
	keyLen, i, ok := wholeField(rec, i, true)
	if !ok {
		return false
	}
	valueLen, i, ok := wholeField(rec, i, true)
	if !ok {
		return false
	}
	nh, k := wholeVarint(rec[i:])
	if k <= 0 || nh < 0 || nh > length {
		return false
	}
	i += k
	for range nh {
		if _, i, ok = wholeField(rec, i, false); !ok {
			return false
		}
		if _, i, ok = wholeField(rec, i, true); !ok {
			return false
		}
	}
	if i != len(rec) {
		return false
	}
	r := &s.rec
	r.Attributes, r.TimestampDelta, r.OffsetDelta = int8(attrs), ts, int32(od)
	r.KeyLen, r.ValueLen, r.Headers = keyLen, valueLen, int32(nh)
	s.r += n + len(rec)
	return true
}

// wholeField reads the length-prefixed field at rec[i:] and returns its
// length and the index after it; ok is false when it is not a field
// decode would accept or does not end inside rec.
func wholeField(rec []byte, i int, nullOK bool) (l32 int32, next int, ok bool) {
	l, k := wholeVarint(rec[i:])
	if k <= 0 || l < -1 || (l == -1 && !nullOK) || l > int64(len(rec)-i-k) {
		return 0, i, false
	}
	i += k
	if l > 0 {
		i += int(l)
	}
	return int32(l), i, true
}

// wholeVarint is binary.Varint with the one- and two-byte cases (the
// lengths, deltas and counts of small records) decoded before its loop;
// n <= 0 when b holds no whole, valid varint.
func wholeVarint(b []byte) (int64, int) {
	if len(b) >= 2 {
		if b[0] < 0x80 {
			return int64(b[0]>>1) ^ -int64(b[0]&1), 1
		}
		if b[1] < 0x80 {
			u := uint64(b[0]&0x7f) | uint64(b[1])<<7
			return int64(u>>1) ^ -int64(u&1), 2
		}
	}
	return binary.Varint(b)
}

// skip discards n decoded bytes.
func (s *Scanner) skip(n int64) error {
	for {
		have := int64(len(s.buf) - s.r)
		if have >= n {
			s.r += int(n)
			return nil
		}
		n -= have
		s.r = len(s.buf)
		if err := s.more(1); err != nil {
			return err
		}
	}
}

// decode reads one record, as Kafka's DefaultRecord does, checking that
// its fields fill exactly its declared length.
func (s *Scanner) decode() error {
	if s.decodeWhole() {
		return nil
	}
	return s.decodeStream()
}

// decodeStream decodes the next record wherever its bytes are: in buf, or
// still to come from src.
func (s *Scanner) decodeStream() error {
	fail := func(err error) error {
		switch {
		case err == errEOF:
			return fmt.Errorf("%w: record %d: batch claims %d records; premature end of records", ErrInvalidRecord, s.i, s.h.NumRecords)
		case errors.As(err, new(decodeErr)):
			return fmt.Errorf("%w: record %d: %s", ErrInvalidRecord, s.i, err)
		}
		return err
	}
	length, err := s.varint()
	if err != nil {
		return fail(err)
	}
	if length <= 0 || length > 1<<31-1 {
		return fail(decodeErr(fmt.Sprintf("bad record length %d", length)))
	}
	// The fixed fields take at most 1+10+5+5+5+5 bytes; count what the
	// record uses as we go.
	start := s.pos()
	if err := s.more(1); err != nil {
		return fail(err)
	}
	r := &s.rec
	r.Attributes = int8(s.buf[s.r])
	s.r++
	if r.TimestampDelta, err = s.varint(); err != nil {
		return fail(err)
	}
	od, err := s.varint()
	if err != nil {
		return fail(err)
	}
	if od < -1<<31 || od > 1<<31-1 {
		return fail(decodeErr(fmt.Sprintf("offset delta %d", od)))
	}
	r.OffsetDelta = int32(od)
	field := func(what string, nullOK bool) (int32, error) {
		l, err := s.varint()
		if err != nil {
			return 0, err
		}
		if l < -1 || (l == -1 && !nullOK) || l > length {
			return 0, decodeErr("bad " + what)
		}
		if l > 0 {
			if err := s.skip(l); err != nil {
				return 0, err
			}
		}
		return int32(l), nil
	}
	if r.KeyLen, err = field("key", true); err != nil {
		return fail(err)
	}
	if r.ValueLen, err = field("value", true); err != nil {
		return fail(err)
	}
	nh, err := s.varint()
	if err != nil {
		return fail(err)
	}
	if nh < 0 || nh > length {
		return fail(decodeErr("bad header count"))
	}
	r.Headers = int32(nh)
	for range nh {
		if _, err := field("header key", false); err != nil {
			return fail(err)
		}
		if _, err := field("header value", true); err != nil {
			return fail(err)
		}
		if s.pos()-start > length {
			break
		}
	}
	if s.pos()-start != length {
		return fail(decodeErr("record length does not match contents"))
	}
	return nil
}
