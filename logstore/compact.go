package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// CompactOptions parameterizes one Compact call (Kafka's topic and cleaner
// settings).
type CompactOptions struct {
	Now time.Time // zero: the log's clock
	// DeleteRetention is delete.retention.ms: how long a tombstone is kept
	// after the clean that first saw it (its batch's delete horizon).
	DeleteRetention time.Duration
	// MinCompactionLag is min.compaction.lag.ms: segments holding a record
	// newer than this are not cleaned yet.
	MinCompactionLag time.Duration
	// MaxOffset, if positive, is the first offset that must not be mapped
	// (the broker passes the last stable offset).
	MaxOffset int64
	// MapBytes caps the offset map (log.cleaner.dedupe.buffer.size); when
	// it fills, only the prefix it covers is cleaned. <=0: 128 MiB.
	MapBytes int
	// ProducerExpiry: an emptied batch is kept as the last batch of its
	// producer (idempotence state) unless its max timestamp is older than
	// this (Kafka's producer.id.expiration.ms). <=0: always kept.
	ProducerExpiry time.Duration
	// Stop aborts the clean promptly when closed (broker shutdown).
	Stop <-chan struct{}
	// RemovingMarkers, if set, is called with the transaction markers a
	// pass removes, after the cleaned segments are written and before
	// they are swapped in: from then on a reader may find a marker gone,
	// so whoever indexes aborted transactions by their marker must drop
	// them first (no batch of those transactions is left in the log). If
	// the swap then fails the markers stay, which is harmless.
	RemovingMarkers func([]TxnMarker)
}

// TxnMarker names a transaction marker (control batch) of the log.
type TxnMarker struct {
	ProducerID int64
	Offset     int64
	Commit     bool // a COMMIT marker; false: ABORT
}

// DefaultCompactMapBytes is Kafka's log.cleaner.dedupe.buffer.size.
const DefaultCompactMapBytes = 128 << 20

// compactMaxRecordBytes bounds decompression of one batch while cleaning.
const compactMaxRecordBytes = 256 << 20

// CompactResult says what a Compact call did.
type CompactResult struct {
	Segments     int   // sealed segments read and rewritten (or found unchanged)
	Replaced     int   // of those, segments replaced by cleaned ones
	NewSegments  int   // cleaned segments written
	BytesRead    int64 // size of the segments cleaned
	BytesWritten int64 // size of the cleaned segments written
	Records      int64 // records in the segments cleaned
	Removed      int64 // records removed (superseded or expired tombstones)
	Tombstones   int64 // expired tombstones removed
	Aborted      int64 // records of aborted transactions removed
	Markers      int64 // transaction markers removed
	FirstDirty   int64 // the first dirty offset afterwards (where the map stopped)
	MapFull      bool  // the offset map filled before the dirty section ended
}

// ErrCompactAborted: the log changed under a compaction (retention,
// truncation, close) or CompactOptions.Stop fired; nothing was changed and
// a later call may retry.
var ErrCompactAborted = errors.New("logstore: compaction aborted")

// Compact runs one cleaning pass (Kafka's log cleaner semantics, see
// doc.go): it maps the dirty section's keys to their latest offsets, then
// rewrites the sealed segments from the log start to the end of what was
// mapped, keeping per key only the latest record, removing tombstones whose
// delete horizon passed, keeping offsets, and swapping the rewritten
// segments in crash-safely. Appends and reads continue meanwhile; only the
// final swap takes the writer lock.
func (l *Log) Compact(o CompactOptions) (CompactResult, error) {
	res, err := l.compact(o)
	if err != nil && l.closed.Load() && !errors.Is(err, ErrClosed) {
		// Closed or destroyed under the clean: its file errors mean that.
		err = fmt.Errorf("%w (%v)", ErrClosed, err)
	}
	return res, err
}

func (l *Log) compact(o CompactOptions) (CompactResult, error) {
	// Segments still being sealed are not cleanable; the cleaner runs off
	// the produce path and may wait for their seals to finish.
	l.waitSeals()
	c := &l.cleaner
	c.mu.Lock()
	defer c.mu.Unlock()
	var res CompactResult
	if l.closed.Load() {
		return res, ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return res, err
	}
	if o.Now.IsZero() {
		o.Now = l.now()
	}
	if o.MapBytes <= 0 {
		o.MapBytes = DefaultCompactMapBytes
	}
	l.loadCleanPoint()
	gen := l.gen.Load()
	segs := l.segments()
	fd := l.clampDirty(segs, c.firstDirty)
	u := l.firstUncleanable(segs, fd, o.Now, o.MinCompactionLag, o.MaxOffset)
	var cand []*segment
	for _, s := range segs[:len(segs)-1] {
		if s.base >= u {
			break
		}
		cand = append(cand, s)
	}
	res.FirstDirty = fd
	if len(cand) == 0 {
		return res, nil
	}
	for i, s := range cand {
		if !s.tryRef() {
			for _, p := range cand[:i] {
				p.unref()
			}
			return res, ErrCompactAborted
		}
	}
	defer func() {
		for _, s := range cand {
			s.unref()
		}
	}()
	cl := &cleaning{l: l, o: o, m: newOffsetMap(o.MapBytes), lastByPid: map[int64]int64{}, txn: map[int64]bool{}, txnBatches: map[int64]uint8{}, fd: fd, u: u, horizon: math.MaxInt64}
	if err := cl.headerPass(cand); err != nil {
		return res, err
	}
	if err := cl.buildMap(cand); err != nil {
		return res, err
	}
	res.FirstDirty, res.MapFull = cl.mappedTo, cl.full
	// The segments to rewrite: all whose base is below the mapped end (a
	// segment straddling it is rewritten whole; its records past the map
	// are kept unless the map holds a later offset for their key).
	n := 0
	for n < len(cand) && cand[n].base < cl.mappedTo {
		n++
	}
	if n == 0 || (cl.mappedTo == fd && c.horizon > o.Now.UnixMilli()) {
		// Nothing new to deduplicate against and no tombstone due: a
		// rewrite would change nothing.
		return res, nil
	}
	// Cleaned segments are merged while the output so far plus the next
	// input (an upper bound of its output) fits one segment, and the
	// offsets fit the 32-bit relative index entries, so the segment count
	// stays bounded.
	limit := min(l.config().SegmentBytes, maxSegmentBytes)
	var outs []*cleanedSegment
	discard := func() {
		for _, out := range outs {
			l.removeCleaned(out.seg.base)
		}
	}
	var cur *groupWriter
	for _, s := range cand[:n] {
		if cur != nil && (cur.pos+s.size.Load() > limit || s.next.Load()-cur.out.seg.base >= math.MaxInt32) {
			err := cur.finish()
			if err != nil {
				discard()
				return res, err
			}
			cur = nil
		}
		if cur == nil {
			var err error
			if cur, err = cl.startGroup(s.base); err != nil {
				discard()
				return res, err
			}
			outs = append(outs, cur.out)
		}
		if err := cur.add(s); err != nil {
			cur.abandon()
			discard()
			return res, err
		}
		res.Segments++
		res.BytesRead += s.size.Load()
	}
	if err := cur.finish(); err != nil {
		discard()
		return res, err
	}
	res.Records, res.Removed, res.Tombstones, res.Aborted, res.Markers = cl.records, cl.removed, cl.tombstones, cl.aborted, int64(len(cl.markers))
	var changed []*cleanedSegment
	for _, out := range outs {
		if out.changed {
			changed = append(changed, out)
			res.Replaced += len(out.olds)
			res.NewSegments++
			res.BytesWritten += out.seg.size.Load()
		} else {
			l.removeCleaned(out.seg.base)
		}
	}
	if len(changed) > 0 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			discard()
			return res, err
		}
		if len(cl.markers) > 0 && o.RemovingMarkers != nil {
			o.RemovingMarkers(cl.markers)
		}
		if err := l.swapCleaned(changed, gen); err != nil {
			discard()
			return res, err
		}
	}
	if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, cleanPointFile), encodeCleanPoint(cl.mappedTo, cl.horizon), 0o644); err != nil {
		// The segments are swapped; a stale cleanpoint only means the
		// next clean redoes some work.
		l.logger.Warn("logstore: writing cleanpoint", "dir", l.dir, "err", err)
	}
	c.firstDirty, c.horizon = cl.mappedTo, cl.horizon
	return res, nil
}

// cleaning is the state of one Compact call.
type cleaning struct {
	l         *Log
	o         CompactOptions
	m         *offsetMap
	lastByPid map[int64]int64 // producer ID -> last offset of its last data batch in the cleanable segments
	txn       map[int64]bool  // transactional data batch base offset -> committed (absent: outcome unknown)
	// txnBatches: producer ID -> what this pass met of the producer's
	// transaction since its previous marker (txnRead, txnKept bits).
	txnBatches map[int64]uint8
	markers    []TxnMarker // markers removed
	emitted    int64       // batches written so far
	fd, u      int64
	mappedTo   int64 // offsets below were mapped
	full       bool
	horizon    int64 // earliest delete horizon of a kept tombstone below mappedTo or of a kept marker

	scratch []byte // decompression buffer
	raw     []byte // kept records of the batch being rebuilt
	nb      []byte // the rebuilt batch
	out     []byte // write buffer
	keep    []bool

	records, removed, tombstones, aborted int64
}

func (cl *cleaning) stopped() bool {
	if cl.o.Stop == nil {
		return false
	}
	select {
	case <-cl.o.Stop:
		return true
	default:
		return false
	}
}

// batchHeader reads the batch header at pos of segment s and checks that
// the batch ends within the segment.
func (sc *scanner) batchHeader(s *segment, pos int64) (records.BatchHeader, error) {
	hb, err := sc.window(pos, records.BatchHeaderLen)
	if err != nil {
		return records.BatchHeader{}, &CorruptionError{File: s.h.getPath(), Pos: pos, Err: err}
	}
	h, err := records.ParseHeader(hb)
	if err != nil || pos+int64(h.Size()) > sc.size {
		return h, &CorruptionError{File: s.h.getPath(), Pos: pos, Err: fmt.Errorf("bad batch header: %v", err)}
	}
	return h, nil
}

// forBatches walks the batches of sealed segment s (pinned by the caller).
func (cl *cleaning) forBatches(s *segment, fn func(pos int64, h *records.BatchHeader, b []byte) (bool, error)) error {
	f, err := s.h.acquire()
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return ErrCompactAborted
		}
		return err
	}
	defer s.h.release()
	size := s.size.Load()
	sc := scanner{r: f, size: size}
	for pos := int64(0); pos < size; {
		if cl.stopped() {
			return ErrCompactAborted
		}
		h, err := sc.batchHeader(s, pos)
		if err != nil {
			return err
		}
		b, err := sc.window(pos, h.Size())
		if err != nil {
			return &CorruptionError{File: s.h.getPath(), Pos: pos, Err: err}
		}
		more, err := fn(pos, &h, b)
		if err != nil || !more {
			return err
		}
		pos += int64(h.Size())
	}
	return nil
}

// buildMap maps keys to their latest offsets over the dirty section
// [fd, u), stopping at a batch boundary if the map fills.
func (cl *cleaning) buildMap(cand []*segment) error {
	cl.mappedTo = cl.fd
	for _, s := range cand {
		if s.next.Load() <= cl.fd {
			continue
		}
		stop := false
		err := cl.forBatches(s, func(_ int64, h *records.BatchHeader, b []byte) (bool, error) {
			if h.LastOffset() < cl.fd {
				return true, nil
			}
			if h.LastOffset() >= cl.u || !cl.m.fits(int(h.NumRecords)) {
				stop = true
				cl.full = h.LastOffset() < cl.u
				return false, nil
			}
			// Only records that stay visible may supersede others: not
			// markers, not aborted or undecided transactions.
			if committed, known := cl.txn[h.BaseOffset]; !h.IsControl() && (!h.IsTransactional() || known && committed) {
				if _, err := records.ValidateStored(b); err != nil {
					return false, &CorruptionError{File: s.h.getPath(), Pos: 0, Err: err}
				}
				base := h.BaseOffset
				var err error
				cl.scratch, err = records.ForEachStored(b, compactMaxRecordBytes, cl.scratch, func(r *records.Record, _ []byte) error {
					if r.Key != nil {
						cl.m.put(r.Key, base+int64(r.OffsetDelta))
					}
					return nil
				})
				if err != nil {
					return false, fmt.Errorf("logstore: compacting %s: batch at offset %d: %w", s.h.getPath(), base, err)
				}
			}
			cl.mappedTo = h.LastOffset() + 1
			return true, nil
		})
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	if cl.full && cl.mappedTo == cl.fd {
		return fmt.Errorf("logstore: compaction offset map (%d entries) cannot hold one batch at offset %d; raise the dedupe buffer size", cl.m.capacity(), cl.fd)
	}
	return nil
}

// maxTxnBatches bounds the transaction outcomes one pass tracks; batches
// beyond it count as unknown (kept as they are).
const maxTxnBatches = 1 << 20

// headerPass reads the batch headers of the cleanable segments (and the
// records of control batches) to find each producer's last batch, which
// survives even if emptied so the producer's sequence state is not lost,
// and the outcome of each transactional data batch: the type of the next
// marker of its producer. Batches whose marker lies beyond the cleanable
// segments stay unknown.
func (cl *cleaning) headerPass(segs []*segment) error {
	pending := map[int64][]int64{} // producer ID -> its data batches awaiting a marker
	tracked := 0
	for _, s := range segs {
		f, err := s.h.acquire()
		if err != nil {
			return ErrCompactAborted
		}
		err = cl.headersOf(s, f, pending, &tracked)
		s.h.release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (cl *cleaning) headersOf(s *segment, f io.ReaderAt, pending map[int64][]int64, tracked *int) error {
	// Sequential 1 MiB reads: cheaper than a pread per header when batches
	// are small.
	size := s.size.Load()
	sc := scanner{r: f, size: size}
	for pos := int64(0); pos < size; {
		if cl.stopped() {
			return ErrCompactAborted
		}
		h, err := sc.batchHeader(s, pos)
		if err != nil {
			return err
		}
		if h.ProducerID >= 0 && !h.IsControl() {
			cl.lastByPid[h.ProducerID] = h.LastOffset()
		}
		switch {
		case h.IsTransactional() && h.IsControl():
			b, err := sc.window(pos, h.Size())
			if err != nil {
				return &CorruptionError{File: s.h.getPath(), Pos: pos, Err: err}
			}
			commit, ok := markerType(b)
			if ok {
				for _, off := range pending[h.ProducerID] {
					cl.txn[off] = commit
				}
			}
			delete(pending, h.ProducerID)
		case h.IsTransactional() && *tracked < maxTxnBatches:
			pending[h.ProducerID] = append(pending[h.ProducerID], h.BaseOffset)
			*tracked++
		}
		pos += int64(h.Size())
	}
	return nil
}

// markerType decodes a control batch's first record key (int16 version,
// int16 type: 0 abort, 1 commit).
func markerType(b []byte) (commit, ok bool) {
	if _, err := records.ValidateStored(b); err != nil {
		return false, false
	}
	found := false
	records.ForEachStored(b, 1<<20, nil, func(r *records.Record, _ []byte) error {
		if !found && len(r.Key) >= 4 {
			found = true
			switch binary.BigEndian.Uint16(r.Key[2:]) {
			case 0:
				ok = true
			case 1:
				commit, ok = true, true
			}
		}
		return nil
	})
	return commit, ok
}

// cleanedSegment is a rewritten group on disk as base.log.cleaned (plus
// index files), not yet swapped in.
type cleanedSegment struct {
	olds    []*segment
	seg     *segment // in-memory indexes; h set at swap
	changed bool     // differs from the group it replaces
}

// removeCleaned deletes the .cleaned files of an abandoned group.
func (l *Log) removeCleaned(base int64) {
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		l.fs.Remove(l.path(base, ext+cleanedSuffix))
	}
}

// groupWriter writes one cleaned segment from consecutive old ones.
type groupWriter struct {
	cl       *cleaning
	out      *cleanedSegment
	f        vfs.File
	pos      int64
	interval int64
}

func (cl *cleaning) startGroup(base int64) (*groupWriter, error) {
	l := cl.l
	f, err := l.fs.OpenFile(l.path(base, ".log"+cleanedSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	cl.out = cl.out[:0]
	return &groupWriter{cl: cl, f: f, interval: int64(l.config().IndexIntervalBytes),
		out: &cleanedSegment{seg: newSegment(base, nil)}}, nil
}

func (w *groupWriter) flush() error {
	if len(w.cl.out) == 0 {
		return nil
	}
	_, err := w.f.Write(w.cl.out)
	w.cl.out = w.cl.out[:0]
	return err
}

func (w *groupWriter) emit(b []byte) error {
	w.cl.emitted++
	h, _ := records.ParseHeader(b)
	w.out.seg.noteBatch(w.pos, h.BaseOffset, int64(len(b)), h.MaxTimestamp, w.interval)
	w.pos += int64(len(b))
	w.cl.out = append(w.cl.out, b...)
	if len(w.cl.out) >= 1<<20 {
		return w.flush()
	}
	return nil
}

// add cleans old segment s into the group.
func (w *groupWriter) add(s *segment) error {
	w.out.olds = append(w.out.olds, s)
	if len(w.out.olds) > 1 {
		w.out.changed = true
	}
	return w.cl.forBatches(s, func(_ int64, h *records.BatchHeader, b []byte) (bool, error) {
		return true, w.cl.cleanBatch(s, h, b, w.emit, &w.out.changed)
	})
}

func (w *groupWriter) abandon() { w.f.Close() }

// finish makes the cleaned segment durable: log, then index files, each
// fsynced (the caller fsyncs the directory before the swap).
func (w *groupWriter) finish() error {
	l := w.cl.l
	err := w.flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	ns := w.out.seg
	olds := w.out.olds
	ns.size.Store(w.pos)
	ns.next.Store(olds[len(olds)-1].next.Load())
	hdr := indexHeader{logSize: w.pos, next: ns.next.Load()}
	// No rename: the .cleaned suffix already marks them uncommitted.
	if err := vfs.WriteFileSync(l.fs, l.path(ns.base, ".index"+cleanedSuffix), encodeOffsetIndex(hdr, ns.idx), 0o644); err != nil {
		return err
	}
	if err := vfs.WriteFileSync(l.fs, l.path(ns.base, ".timeindex"+cleanedSuffix), encodeTimeIndex(hdr, ns.timeIndexForDisk()), 0o644); err != nil {
		return err
	}
	ns.diskIndex.Store(w.pos)
	return nil
}

// emptied handles a data batch left with no records: dropped, unless it is
// its producer's last data batch, whose header is kept (Kafka writes the
// same empty batch) so the producer's sequence state survives.
func (cl *cleaning) emptied(h *records.BatchHeader, b []byte, emit func([]byte) error, changed *bool) error {
	last, ok := cl.lastByPid[h.ProducerID]
	expired := cl.o.ProducerExpiry > 0 && h.MaxTimestamp < cl.o.Now.Add(-cl.o.ProducerExpiry).UnixMilli()
	if h.ProducerID < 0 || !ok || last != h.LastOffset() || expired {
		*changed = true
		return nil
	}
	if h.NumRecords == 0 {
		return emit(b) // already the empty batch
	}
	*changed = true
	var err error
	cl.nb, err = records.AppendRewritten(cl.nb[:0], *h, 0, nil, nil)
	if err != nil {
		return err
	}
	return emit(cl.nb)
}

// Bits of cleaning.txnBatches.
const (
	txnRead uint8 = 1 << iota // a data batch of the transaction was read
	txnKept                   // and one was written out (possibly emptied)
)

// cleanBatch decides the fate of one batch and emits what is kept.
func (cl *cleaning) cleanBatch(s *segment, h *records.BatchHeader, b []byte, emit func([]byte) error, changed *bool) error {
	if h.IsControl() {
		return cl.cleanMarker(s, h, b, emit, changed)
	}
	if !h.IsTransactional() || h.ProducerID < 0 {
		return cl.cleanData(s, h, b, emit, changed)
	}
	before := cl.emitted
	err := cl.cleanData(s, h, b, emit, changed)
	st := cl.txnBatches[h.ProducerID] | txnRead
	if cl.emitted > before {
		st |= txnKept
	}
	cl.txnBatches[h.ProducerID] = st
	return err
}

// cleanMarker decides the fate of a control batch, as Kafka's cleaner
// does (see doc.go): a transaction marker goes once no batch of its
// transaction is left and its delete horizon has passed. The horizon is
// set by the first pass that leaves no batch of the transaction.
func (cl *cleaning) cleanMarker(s *segment, h *records.BatchHeader, b []byte, emit func([]byte) error, changed *bool) error {
	cl.records += int64(h.NumRecords)
	if !h.IsTransactional() || h.ProducerID < 0 {
		return emit(b)
	}
	st := cl.txnBatches[h.ProducerID]
	delete(cl.txnBatches, h.ProducerID) // the marker ends the transaction
	commit, ok := markerType(b)
	if !ok || st&txnKept != 0 {
		// Not a marker we know, or its transaction still has data
		// (the data's outcome needs the marker).
		return emit(b)
	}
	nowMs := cl.o.Now.UnixMilli()
	if h.HasDeleteHorizon() {
		if st&txnRead == 0 && nowMs >= h.FirstTimestamp {
			*changed = true
			cl.markers = append(cl.markers, TxnMarker{ProducerID: h.ProducerID, Offset: h.BaseOffset, Commit: commit})
			return nil
		}
		cl.horizon = min(cl.horizon, max(h.FirstTimestamp, nowMs))
		return emit(b)
	}
	// The transaction's last batch is gone (or goes in this pass): the
	// marker's delete horizon starts now (KIP-534, as for tombstones),
	// so a consumer that read its data still has delete.retention.ms to
	// reach it.
	hz := nowMs + cl.o.DeleteRetention.Milliseconds()
	cl.horizon = min(cl.horizon, hz)
	*changed = true
	nh := *h
	nh.Attributes |= records.AttrDeleteHorizon
	nh.FirstTimestamp = hz
	raw := cl.raw[:0]
	var err error
	cl.scratch, err = records.ForEachStored(b, compactMaxRecordBytes, cl.scratch, func(r *records.Record, _ []byte) error {
		rr := *r
		rr.TimestampDelta = h.FirstTimestamp + r.TimestampDelta - hz
		raw = records.AppendRecord(raw, &rr)
		return nil
	})
	if err != nil {
		return fmt.Errorf("logstore: compacting %s: marker at offset %d: %w", s.h.getPath(), h.BaseOffset, err)
	}
	cl.raw = raw
	cl.nb, err = records.AppendRewritten(cl.nb[:0], nh, h.NumRecords, raw, b[records.BatchHeaderLen:])
	if err != nil {
		return err
	}
	return emit(cl.nb)
}

// cleanData decides the fate of a data batch and emits what is kept.
func (cl *cleaning) cleanData(s *segment, h *records.BatchHeader, b []byte, emit func([]byte) error, changed *bool) error {
	if h.IsTransactional() {
		committed, known := cl.txn[h.BaseOffset]
		if !known {
			cl.records += int64(h.NumRecords)
			return emit(b)
		}
		if !committed {
			// An aborted transaction's records go.
			cl.records += int64(h.NumRecords)
			cl.removed += int64(h.NumRecords)
			cl.aborted += int64(h.NumRecords)
			return cl.emptied(h, b, emit, changed)
		}
	}
	if _, err := records.ValidateStored(b); err != nil {
		return &CorruptionError{File: s.h.getPath(), Pos: 0, Err: err}
	}
	nowMs := cl.o.Now.UnixMilli()
	mapped := h.LastOffset() < cl.mappedTo
	horizonPassed := h.HasDeleteHorizon() && nowMs >= h.FirstTimestamp
	base := h.BaseOffset
	cl.keep = cl.keep[:0]
	cl.raw = cl.raw[:0]
	kept, tombs := 0, 0
	maxTs := int64(-1)
	var err error
	cl.scratch, err = records.ForEachStored(b, compactMaxRecordBytes, cl.scratch, func(r *records.Record, raw []byte) error {
		cl.records++
		off := base + int64(r.OffsetDelta)
		keep := true
		if r.Key != nil {
			if latest, ok := cl.m.get(r.Key); ok && off < latest {
				keep = false
			} else if r.Value == nil {
				if mapped && horizonPassed {
					keep = false
					cl.tombstones++
				} else {
					tombs++
				}
			}
		}
		cl.keep = append(cl.keep, keep)
		if keep {
			kept++
			cl.raw = append(cl.raw, raw...)
			maxTs = max(maxTs, h.FirstTimestamp+r.TimestampDelta)
		} else {
			cl.removed++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("logstore: compacting %s: batch at offset %d: %w", s.h.getPath(), base, err)
	}
	setHorizon := tombs > 0 && mapped && !h.HasDeleteHorizon()
	if mapped && tombs > 0 {
		hz := h.FirstTimestamp
		if setHorizon {
			hz = nowMs + cl.o.DeleteRetention.Milliseconds()
		}
		cl.horizon = min(cl.horizon, hz)
	}
	if kept > 0 && kept == int(h.NumRecords) && !setHorizon {
		return emit(b)
	}
	if kept == 0 {
		return cl.emptied(h, b, emit, changed)
	}
	*changed = true
	nh := *h
	if !h.HasLogAppendTime() {
		nh.MaxTimestamp = maxTs
	}
	raw := cl.raw
	if setHorizon {
		// KIP-534: the horizon goes in FirstTimestamp, so the kept
		// records' timestamp deltas are re-based on it.
		hz := nowMs + cl.o.DeleteRetention.Milliseconds()
		nh.Attributes |= records.AttrDeleteHorizon
		nh.FirstTimestamp = hz
		raw = raw[:0:0]
		i := 0
		cl.scratch, err = records.ForEachStored(b, compactMaxRecordBytes, cl.scratch, func(r *records.Record, _ []byte) error {
			if cl.keep[i] {
				rr := *r
				rr.TimestampDelta = h.FirstTimestamp + r.TimestampDelta - hz
				raw = records.AppendRecord(raw, &rr)
			}
			i++
			return nil
		})
		if err != nil {
			return err
		}
	}
	cl.nb, err = records.AppendRewritten(cl.nb[:0], nh, int32(kept), raw, b[records.BatchHeaderLen:])
	if err != nil {
		return err
	}
	return emit(cl.nb)
}
