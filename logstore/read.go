package logstore

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// ReadOptions selects what Read returns.
type ReadOptions struct {
	Offset      int64 // first offset wanted; the batch containing it is returned whole
	MaxBytes    int   // soft limit on the bytes returned
	MaxOffset   int64 // exclusive upper bound (e.g. the LSO); <=0 means the high watermark
	MinOneBatch bool  // return the first batch even if it is larger than MaxBytes
}

// Range is a byte range of whole batches in a segment file. File is a
// vfs.OSFile when the log is on the OS filesystem, so the bytes can be
// sent with sendfile.
type Range struct {
	File vfs.File
	Pos  int64
	Len  int64
}

// ReadResult holds file ranges pinned until Release.
type ReadResult struct {
	Ranges         []Range
	Size           int64
	HighWatermark  int64
	LogStartOffset int64

	segs     []*segment
	released bool
}

// AppendTo appends the bytes of all ranges to dst. The room is taken
// from dst's capacity without zeroing it first (the reads overwrite it),
// so a caller that reuses a buffer large enough pays for the reads alone.
func (r *ReadResult) AppendTo(dst []byte) ([]byte, error) {
	dst = slices.Grow(dst, int(r.Size))
	for _, rg := range r.Ranges {
		start := len(dst)
		dst = dst[:start+int(rg.Len)]
		n, err := rg.File.ReadAt(dst[start:], rg.Pos)
		if n < int(rg.Len) {
			// Only a Truncate racing this read can shorten a range.
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return dst[:start], err
		}
	}
	return dst, nil
}

// Release unpins the files; the result must not be used afterwards. It is
// safe to call more than once.
func (r *ReadResult) Release() {
	if r == nil || r.released {
		return
	}
	r.released = true
	for _, s := range r.segs {
		s.h.release()
		s.unref()
	}
	r.segs = nil
}

// Read returns whole batches starting with the one that contains o.Offset,
// up to o.MaxBytes (at least one batch with MinOneBatch) and below
// min(high watermark, o.MaxOffset). An offset outside [LogStartOffset,
// LogEndOffset] is ErrOffsetOutOfRange; an offset at or past the high
// watermark returns no ranges. The caller must Release the result.
func (l *Log) Read(o ReadOptions) (*ReadResult, error) {
	for {
		res, retry, err := l.read(o)
		if !retry {
			return res, err
		}
	}
}

func (l *Log) read(o ReadOptions) (*ReadResult, bool, error) {
	mark := l.hw.Load()
	segs := l.segments()
	ls := l.logStart.Load()
	leo := l.leo.Load()
	if o.Offset < ls || o.Offset > leo {
		return nil, false, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, o.Offset, ls, leo)
	}
	res := &ReadResult{HighWatermark: mark.off, LogStartOffset: ls}
	bound := mark.off
	if o.MaxOffset > 0 && o.MaxOffset < bound {
		bound = o.MaxOffset
	}
	if o.Offset >= bound {
		return res, false, nil
	}
	i := findSegment(segs, o.Offset)
	if i < 0 {
		// Retention removed the segment after we loaded the log start.
		return nil, false, fmt.Errorf("%w: %d is below the first segment", ErrOffsetOutOfRange, o.Offset)
	}
	remaining := int64(o.MaxBytes)
	first := true
	for ; i < len(segs); i++ {
		s := segs[i]
		if s.base >= bound || s.base > mark.seg.base {
			break
		}
		var end int64
		switch {
		case s == mark.seg:
			end = mark.pos
		default:
			end = s.size.Load()
		}
		if !s.tryRef() {
			res.Release()
			return nil, true, nil // deleted under us: take a new snapshot
		}
		f, err := s.h.acquire()
		if err != nil {
			s.unref()
			res.Release()
			if l.closed.Load() {
				return nil, false, ErrClosed
			}
			return nil, true, nil
		}
		res.segs = append(res.segs, s)
		start := int64(0)
		if first {
			if start, err = s.findPos(f, o.Offset, end); err != nil {
				res.Release()
				return nil, false, err
			}
		}
		if bound < mark.off && bound < s.next.Load() {
			// The bound falls in this segment: stop before its batch.
			bp, err := s.findPos(f, bound, end)
			if err != nil {
				res.Release()
				return nil, false, err
			}
			end = min(end, bp)
		}
		stop := false
		if end-start > remaining {
			cut, err := s.cutPos(f, start, start+remaining)
			if err != nil {
				res.Release()
				return nil, false, err
			}
			if cut == start && first && o.MinOneBatch {
				var hb [records.BatchHeaderLen]byte
				h, err := readHeader(f, start, &hb)
				if err != nil {
					res.Release()
					return nil, false, err
				}
				cut = min(start+int64(h.Size()), end)
			}
			end, stop = cut, true
		}
		if end > start {
			res.Ranges = append(res.Ranges, Range{File: f, Pos: start, Len: end - start})
			res.Size += end - start
			remaining -= end - start
			first = false
		}
		if stop || s == mark.seg || s.next.Load() >= bound {
			break
		}
	}
	return res, false, nil
}

// batchRecordTimes yields each record's offset and timestamp in a batch
// (a stored one: compaction may have removed records, see
// records.ValidateStored).
func batchRecordTimes(batch []byte, fn func(off, ts int64) bool) error {
	h, err := records.ValidateStored(batch)
	if err != nil {
		return err
	}
	if h.HasLogAppendTime() {
		if h.NumRecords > 0 {
			fn(h.BaseOffset, h.MaxTimestamp)
		}
		return nil
	}
	errStop := errors.New("stop")
	_, err = records.ForEachStored(batch, 256<<20, nil, func(r *records.Record, _ []byte) error {
		if !fn(h.BaseOffset+int64(r.OffsetDelta), h.FirstTimestamp+r.TimestampDelta) {
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return err
}

// OffsetForTimestamp returns the first record (below the high watermark)
// whose timestamp is >= ts, and that timestamp; ok is false if there is none.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error) {
	mark := l.hw.Load()
	ls := l.logStart.Load()
	for _, s := range l.segments() {
		if s.base >= mark.off || s.base > mark.seg.base {
			break
		}
		s.mu.RLock()
		smax := s.maxTs
		startPos := int64(0)
		if e, found := lastBelowTs(s.tidx, ts); found {
			startPos = int64(e.pos)
		}
		s.mu.RUnlock()
		if smax < ts {
			continue
		}
		end := s.size.Load()
		if s == mark.seg {
			end = mark.pos
		}
		if !s.tryRef() {
			return l.OffsetForTimestamp(ts)
		}
		offset, timestamp, ok, err = l.searchTime(s, startPos, end, ts, ls)
		s.unref()
		if err != nil || ok {
			return offset, timestamp, ok, err
		}
	}
	return -1, -1, false, nil
}

func (l *Log) searchTime(s *segment, pos, end, ts, logStart int64) (int64, int64, bool, error) {
	f, err := s.h.acquire()
	if err != nil {
		return 0, 0, false, err
	}
	defer s.h.release()
	var hb [records.BatchHeaderLen]byte
	for pos < end {
		h, err := readHeader(f, pos, &hb)
		if err != nil {
			return 0, 0, false, err
		}
		if h.MaxTimestamp >= ts && h.LastOffset() >= logStart {
			batch := make([]byte, h.Size())
			if _, err := f.ReadAt(batch, pos); err != nil {
				return 0, 0, false, err
			}
			var fo, ft int64 = -1, -1
			err := batchRecordTimes(batch, func(off, t int64) bool {
				if t >= ts && off >= logStart {
					fo, ft = off, t
					return false
				}
				return true
			})
			if err != nil {
				return 0, 0, false, &CorruptionError{File: s.h.getPath(), Pos: pos, Err: err}
			}
			if fo >= 0 {
				return fo, ft, true, nil
			}
		}
		pos += int64(h.Size())
	}
	return 0, 0, false, nil
}

// MaxTimestamp returns the offset and timestamp of the first record with the
// largest timestamp below the high watermark, or -1, -1 when empty.
func (l *Log) MaxTimestamp() (offset, timestamp int64) {
	mark := l.hw.Load()
	var best *segment
	var bestTs, bestPos int64 = -1, -1
	for _, s := range l.segments() {
		if s.base >= mark.off || s.base > mark.seg.base {
			break
		}
		s.mu.RLock()
		if s.maxTs > bestTs && (s != mark.seg || s.maxTsPos < mark.pos) {
			best, bestTs, bestPos = s, s.maxTs, s.maxTsPos
		}
		s.mu.RUnlock()
	}
	if best == nil || !best.tryRef() {
		return -1, -1
	}
	defer best.unref()
	f, err := best.h.acquire()
	if err != nil {
		return -1, -1
	}
	defer best.h.release()
	var hb [records.BatchHeaderLen]byte
	h, err := readHeader(f, bestPos, &hb)
	if err != nil {
		return -1, -1
	}
	batch := make([]byte, h.Size())
	if _, err := f.ReadAt(batch, bestPos); err != nil {
		return -1, -1
	}
	offset, timestamp = h.LastOffset(), bestTs
	_ = batchRecordTimes(batch, func(off, t int64) bool {
		if t == bestTs {
			offset = off
			return false
		}
		return true
	})
	return offset, timestamp
}
