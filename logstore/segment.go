package logstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/internal/records"
)

// segment is one log file plus its in-memory indexes. The writer (holding
// Log.mu) appends; readers find batches through the indexes under mu.RLock
// and read file bytes below the published high watermark.
type segment struct {
	base int64
	h    *fileHandle

	size atomic.Int64 // bytes of whole batches in the file
	next atomic.Int64 // offset after the last batch

	mu        sync.RWMutex
	idx       []idxEntry
	tidx      []tidxEntry
	maxTs     int64 // largest batch max timestamp, -1 if none
	maxTsBase int64 // base offset of the first batch carrying maxTs
	maxTsPos  int64

	// Writer-only bookkeeping.
	sinceIdx  int64
	sinceTidx int64
	created   time.Time // first append into this segment (for segment.ms)
	// diskIndex is the log size the index files on disk describe, -1 if
	// none (written under Log.mu, or Log.ckMu by a checkpoint).
	diskIndex atomic.Int64
	// checkpointAt is the size at the last recovery checkpoint tried
	// (written or not), so a failing index write is not retried on
	// every append.
	checkpointAt int64
	// unsealed: rolled, but its seal (fsync, index files, directory
	// fsync; sealLoop) has not finished. synced: fsynced whole since it
	// was rolled (by its seal or a group-commit round), so a seal need
	// not fsync it again.
	unsealed atomic.Bool
	synced   atomic.Bool

	// Lifetime: readers pin a segment with ref; a deleted segment is
	// renamed to *.deleted and unlinked when the last reader lets go.
	refs      atomic.Int32
	dead      atomic.Bool
	finalized atomic.Bool
	onFinal   func(*segment)
}

func newSegment(base int64, h *fileHandle) *segment {
	s := &segment{base: base, h: h, maxTs: -1, maxTsBase: -1, maxTsPos: -1}
	s.next.Store(base)
	s.diskIndex.Store(-1)
	return s
}

func segName(base int64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// noteBatch updates the indexes for a batch appended at pos. Callers hold
// s.mu for writing.
func (s *segment) noteBatch(pos, base int64, size int64, maxTs int64, interval int64) {
	if s.sinceIdx >= interval {
		s.idx = append(s.idx, idxEntry{rel: uint32(base - s.base), pos: uint32(pos)})
		s.sinceIdx = 0
	}
	if maxTs > s.maxTs {
		s.maxTs, s.maxTsBase, s.maxTsPos = maxTs, base, pos
		if s.sinceTidx >= interval {
			s.tidx = append(s.tidx, tidxEntry{ts: maxTs, rel: uint32(base - s.base), pos: uint32(pos)})
			s.sinceTidx = 0
		}
	}
	s.sinceIdx += size
	s.sinceTidx += size
}

// timeIndexForDisk returns the time index with a final entry for the
// segment's maximum, as written when the segment is sealed or closed.
func (s *segment) timeIndexForDisk() []tidxEntry {
	t := append([]tidxEntry(nil), s.tidx...)
	if s.maxTs >= 0 && (len(t) == 0 || t[len(t)-1].ts < s.maxTs) {
		t = append(t, tidxEntry{ts: s.maxTs, rel: uint32(s.maxTsBase - s.base), pos: uint32(s.maxTsPos)})
	}
	return t
}

// tryRef pins the segment for a reader; false if it is being deleted.
func (s *segment) tryRef() bool {
	s.refs.Add(1)
	if s.dead.Load() {
		s.unref()
		return false
	}
	return true
}

func (s *segment) unref() {
	if s.refs.Add(-1) == 0 && s.dead.Load() {
		s.finalize()
	}
}

// kill marks the segment deleted; the file goes when the last reader is done.
func (s *segment) kill() {
	s.dead.Store(true)
	if s.refs.Load() == 0 {
		s.finalize()
	}
}

func (s *segment) finalize() {
	if s.finalized.Swap(true) {
		return
	}
	if s.onFinal != nil {
		s.onFinal(s)
	}
}

// batchInfo is what scanners report per batch.
type batchInfo struct {
	pos   int64
	base  int64
	last  int64
	size  int64
	maxTs int64
	first int64 // FirstTimestamp
	attr  int16
}

// errTorn marks data that ends mid-batch; errBadBatch data that is complete
// but wrong (CRC, magic, offsets).
var (
	errTorn     = errors.New("incomplete batch at end of file")
	errBadBatch = errors.New("bad batch")
)

// scanResult is the outcome of scanning a segment: end is the position after
// the last good batch, next the offset after it; err (nil if the whole file
// was good) says why scanning stopped at end.
type scanResult struct {
	end     int64
	next    int64
	batches int
	err     error
}

// scanner reads a segment sequentially through a large buffer.
type scanner struct {
	r      io.ReaderAt
	size   int64
	buf    []byte
	bufPos int64
	bufLen int
}

const scanBufSize = 1 << 20

// window returns n bytes at pos, refilling the buffer as needed.
func (sc *scanner) window(pos int64, n int) ([]byte, error) {
	if pos >= sc.bufPos && pos+int64(n) <= sc.bufPos+int64(sc.bufLen) {
		off := pos - sc.bufPos
		return sc.buf[off : off+int64(n)], nil
	}
	if pos+int64(n) > sc.size {
		return nil, errTorn
	}
	want := max(n, scanBufSize)
	if int64(want) > sc.size-pos {
		want = int(sc.size - pos)
	}
	if cap(sc.buf) < want {
		sc.buf = make([]byte, want)
	}
	sc.buf = sc.buf[:want]
	m, err := sc.r.ReadAt(sc.buf, pos)
	if m < n {
		if err == nil || err == io.EOF {
			err = errTorn
		}
		return nil, err
	}
	sc.bufPos, sc.bufLen = pos, m
	return sc.buf[:n], nil
}

// scanBatches walks the batches of a segment file of the given size whose
// first batch must have base offset base, checking lengths, magic, offset
// continuity and (if verify) CRC32C and the record count rule. visit (may be
// nil) sees each good batch. I/O errors other than a short file are
// returned as err with end at the failing batch.
func scanBatches(r io.ReaderAt, size int64, base int64, verify bool, visit func(batchInfo)) scanResult {
	return scanBatchesFrom(r, 0, size, base, verify, visit)
}

// scanBatchesFrom is scanBatches from position from, whose batch must
// start at offset next or later (the tail after a recovery checkpoint).
func scanBatchesFrom(r io.ReaderAt, from, size int64, next int64, verify bool, visit func(batchInfo)) scanResult {
	sc := scanner{r: r, size: size}
	res := scanResult{next: next}
	pos := from
	for pos < size {
		hb, err := sc.window(pos, records.BatchHeaderLen)
		if err != nil {
			res.end, res.err = pos, err
			return res
		}
		h, err := records.ParseHeader(hb)
		if err != nil {
			res.end, res.err = pos, fmt.Errorf("%w: %v", errTorn, err)
			return res
		}
		bsize := int64(h.Size())
		if pos+bsize > size {
			res.end, res.err = pos, fmt.Errorf("%w: batch of %d bytes, %d left", errTorn, bsize, size-pos)
			return res
		}
		if h.Magic != 2 {
			res.end, res.err = pos, fmt.Errorf("%w: magic %d", errBadBatch, h.Magic)
			return res
		}
		// Compaction leaves gaps (removed batches keep no trace), so
		// offsets need only increase.
		if h.BaseOffset < res.next {
			res.end, res.err = pos, fmt.Errorf("%w: base offset %d, expected %d", errBadBatch, h.BaseOffset, res.next)
			return res
		}
		if h.LastOffsetDelta < 0 {
			res.end, res.err = pos, fmt.Errorf("%w: last offset delta %d", errBadBatch, h.LastOffsetDelta)
			return res
		}
		if verify {
			b, err := sc.window(pos, int(bsize))
			if err != nil {
				res.end, res.err = pos, err
				return res
			}
			// ValidateStored: cleaned batches may hold fewer records
			// than their offset span.
			if _, err := records.ValidateStored(b); err != nil {
				res.end, res.err = pos, fmt.Errorf("%w: %v", errBadBatch, err)
				return res
			}
		}
		if visit != nil {
			visit(batchInfo{pos: pos, base: h.BaseOffset, last: h.LastOffset(), size: bsize, maxTs: h.MaxTimestamp, first: h.FirstTimestamp, attr: h.Attributes})
		}
		res.batches++
		res.next = h.LastOffset() + 1
		pos += bsize
	}
	res.end = pos
	return res
}

// readHeader reads the batch header at pos.
func readHeader(r io.ReaderAt, pos int64, buf *[records.BatchHeaderLen]byte) (records.BatchHeader, error) {
	if _, err := r.ReadAt(buf[:], pos); err != nil {
		return records.BatchHeader{}, err
	}
	return records.ParseHeader(buf[:])
}

// findPos returns the position of the first batch in s (within [0, end))
// whose last offset is >= off, or end if there is none.
func (s *segment) findPos(r io.ReaderAt, off int64, end int64) (int64, error) {
	pos := int64(0)
	s.mu.RLock()
	if off > s.base {
		if e, ok := floorByRel(s.idx, uint32(min(off-s.base, 1<<32-1))); ok {
			pos = int64(e.pos)
		}
	}
	s.mu.RUnlock()
	var hb [records.BatchHeaderLen]byte
	for pos < end {
		h, err := readHeader(r, pos, &hb)
		if err != nil {
			return 0, err
		}
		if h.LastOffset() >= off {
			return pos, nil
		}
		pos += int64(h.Size())
	}
	return end, nil
}

// cutPos returns the largest batch boundary p with start <= p <= limit,
// walking from the index entry at or before limit.
func (s *segment) cutPos(r io.ReaderAt, start, limit int64) (int64, error) {
	pos := start
	s.mu.RLock()
	if e, ok := floorByPos(s.idx, limit); ok && int64(e.pos) > start {
		pos = int64(e.pos)
	}
	s.mu.RUnlock()
	var hb [records.BatchHeaderLen]byte
	for {
		h, err := readHeader(r, pos, &hb)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return pos, nil
			}
			return 0, err
		}
		if pos+int64(h.Size()) > limit {
			return pos, nil
		}
		pos += int64(h.Size())
	}
}
