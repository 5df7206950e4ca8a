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
	"github.com/pierrec/lz4/v4"
)

// Streaming validation. A Scanner walks the records of a batch as Kafka's
// skipKeyValueIterator does: it decodes each record's fixed fields and the
// lengths of its key, value and headers, and skips the bytes themselves,
// reading the decompressed stream through a small buffer instead of
// inflating the batch. What a compressed batch costs in memory is then the
// codec's own state (a gzip window, an lz4 block, a zstd window of at most
// scanZstdWindow, a snappy back-reference window of at most
// snappyMaxWindow) plus scanBufSize, whatever the batch inflates to.
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
// slot (a read buffer, plus a decoder from the pools below) while it runs.
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

// Decoders are pooled: building a zstd or gzip decoder costs more than a
// small batch's decompression. How many are in use is bounded by the
// ScanPool slots.
var (
	scanGzipPool sync.Pool // *gzip.Reader
	scanLZ4Pool  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	scanZstdPool = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(scanZstdWindow), zstd.WithDecoderMaxMemory(scanZstdWindow))
		if err != nil {
			panic(err) // only on invalid options
		}
		return d
	}}
	scanSnappyPool = sync.Pool{New: func() any { return new(snappyStream) }}
)

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

	// The decoded stream: buf[r:w] is buffered; src refills it (nil for
	// an uncompressed body, which buf then is).
	buf  []byte
	r, w int
	src  io.Reader
	own  []byte // the slot's read buffer (nil for an uncompressed scan)
	// read counts decompressed bytes pulled from src, against limit.
	read, limit int64

	codec Codec
	dec   any // the pooled decoder in use
	br    bytes.Reader
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
	s.r, s.w = 0, 0
	if s.codec == CodecNone {
		s.buf, s.w, s.src = body, len(body), nil
		return s
	}
	s.buf = s.own
	s.br.Reset(body)
	switch s.codec {
	case CodecGzip:
		var zr *gzip.Reader
		var err error
		if v := scanGzipPool.Get(); v != nil {
			zr = v.(*gzip.Reader)
			err = zr.Reset(&s.br)
		} else {
			zr, err = gzip.NewReader(&s.br)
		}
		if err != nil {
			s.err = fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
			if zr != nil {
				scanGzipPool.Put(zr)
			}
			return s
		}
		s.dec, s.src = zr, zr
	case CodecLZ4:
		zr := scanLZ4Pool.Get().(*lz4.Reader)
		zr.Reset(&s.br)
		s.dec, s.src = zr, zr
	case CodecZstd:
		zr := scanZstdPool.Get().(*zstd.Decoder)
		s.dec = zr
		if err := zr.Reset(&s.br); err != nil {
			s.err = fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
			return s
		}
		s.src = zr
	case CodecSnappy:
		ss := scanSnappyPool.Get().(*snappyStream)
		s.dec = ss
		if err := ss.reset(body); err != nil {
			s.err = err
			return s
		}
		s.src = ss
	default:
		s.err = fmt.Errorf("%w: %d", ErrUnsupportedCompression, s.codec)
	}
	return s
}

// Close ends the scan and gives back its slot and decoder.
func (s *Scanner) Close() {
	switch d := s.dec.(type) {
	case *gzip.Reader:
		scanGzipPool.Put(d)
	case *lz4.Reader:
		d.Reset(nil)
		scanLZ4Pool.Put(d)
	case *zstd.Decoder:
		_ = d.Reset(nil)
		scanZstdPool.Put(d)
	case *snappyStream:
		// A window grown for one far-reaching kgo block is not kept.
		if cap(d.win) > 1<<20 {
			d.win = nil
		}
		d.src, d.rest = nil, nil
		scanSnappyPool.Put(d)
	}
	s.dec, s.src, s.buf = nil, nil, nil
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
	if s.w > s.r {
		s.err = fmt.Errorf("%w: %d unexpected bytes after %d records", ErrInvalidRecord, s.w-s.r, s.h.NumRecords)
		return
	}
	if s.src == nil {
		return
	}
	var one [1]byte
	for {
		n, err := s.src.Read(one[:])
		if n > 0 {
			s.err = fmt.Errorf("%w: bytes after %d records", ErrInvalidRecord, s.h.NumRecords)
			return
		}
		if err == io.EOF {
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

// more makes at least n bytes (n <= scanBufSize) buffered, or fails with
// errEOF at a clean end of stream, or the codec's error.
func (s *Scanner) more(n int) error {
	if s.w-s.r >= n {
		return nil
	}
	if s.src == nil {
		return errEOF
	}
	if s.r > 0 {
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.r = 0
	}
	for s.w < n {
		m, err := s.src.Read(s.buf[s.w:])
		s.w += m
		s.read += int64(m)
		if s.read > s.limit {
			return fmt.Errorf("%w: batch inflates past %d bytes", ErrTooLarge, s.limit)
		}
		if err == io.EOF {
			if s.w < n {
				return errEOF
			}
			return nil
		}
		if err != nil {
			return s.codecErr(err)
		}
	}
	return nil
}

// varint reads a zigzag varint (at most 10 bytes).
func (s *Scanner) varint() (int64, error) {
	if s.w-s.r < binary.MaxVarintLen64 {
		if err := s.more(binary.MaxVarintLen64); err != nil && err != errEOF {
			return 0, err
		}
	}
	v, n := binary.Varint(s.buf[s.r:s.w])
	if n <= 0 {
		if s.w == s.r || n == 0 {
			return 0, errEOF
		}
		return 0, decodeErr("bad varint")
	}
	s.r += n
	return v, nil
}

// skip discards n decoded bytes.
func (s *Scanner) skip(n int64) error {
	for {
		if have := int64(s.w - s.r); have >= n {
			s.r += int(n)
			return nil
		} else {
			n -= have
			s.r, s.w = 0, 0
		}
		if err := s.more(1); err != nil {
			return err
		}
	}
}

// decode reads one record, as Kafka's DefaultRecord does, checking that
// its fields fill exactly its declared length.
func (s *Scanner) decode() error {
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
	start := s.read - int64(s.w-s.r) // position in the decoded stream
	if s.src == nil {
		start = int64(s.r)
	}
	pos := func() int64 {
		if s.src == nil {
			return int64(s.r)
		}
		return s.read - int64(s.w-s.r)
	}
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
		if pos()-start > length {
			break
		}
	}
	if pos()-start != length {
		return fail(decodeErr("record length does not match contents"))
	}
	return nil
}
