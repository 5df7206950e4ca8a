package logstore

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// finalSegment runs when a deleted segment's last reader is gone: close the
// file and unlink it (it was renamed to *.deleted when it left the log, so
// a new segment may reuse its name meanwhile).
func (l *Log) finalSegment(s *segment) {
	s.h.close()
	p := s.h.getPath()
	for _, q := range []string{p, trimLog(p) + ".index.deleted", trimLog(p) + ".timeindex.deleted"} {
		if err := l.fs.Remove(q); err != nil {
			l.logger.Debug("logstore: removing deleted segment", "file", q, "err", err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		l.logger.Warn("logstore: syncing dir after delete", "dir", l.dir, "err", err)
	}
}

func trimLog(p string) string {
	return p[:len(p)-len(".log.deleted")]
}

// removeSegmentsLocked takes segs[from:to] out of the log: renamed to
// *.deleted at once (durable with one directory fsync), unlinked when their
// readers are done.
func (l *Log) removeSegmentsLocked(from, to int) error {
	segs := l.segments()
	if from >= to {
		return nil
	}
	l.fenceSeal()
	victims := segs[from:to]
	for _, s := range victims {
		old := l.path(s.base, ".log")
		if err := l.fs.Rename(old, old+".deleted"); err != nil {
			return l.setSticky("rename", err)
		}
		s.h.setPath(old + ".deleted")
		for _, ext := range []string{".index", ".timeindex"} {
			p := l.path(s.base, ext)
			if err := l.fs.Rename(p, p+".deleted"); err != nil {
				l.fs.Remove(p)
			}
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.setSticky("sync dir", err)
	}
	rest := append(append([]*segment(nil), segs[:from]...), segs[to:]...)
	l.segs.Store(&rest)
	for _, s := range victims {
		s.kill()
	}
	l.pruneSealsLocked()
	l.spaceFreed()
	return nil
}

// DeleteRecords advances the log start offset to before (-1: the high
// watermark), persists it, and deletes segments wholly below it. Offsets
// above the high watermark are ErrOffsetOutOfRange.
func (l *Log) DeleteRecords(before int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return 0, ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return 0, err
	}
	hw := l.HighWatermark()
	if before < 0 {
		before = hw
	}
	if before > hw {
		return 0, fmt.Errorf("%w: %d is above the high watermark %d", ErrOffsetOutOfRange, before, hw)
	}
	if before <= l.logStart.Load() {
		return l.logStart.Load(), nil
	}
	if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, logStartFile), encodeLogStart(before), 0o644); err != nil {
		if !vfs.IsNoSpace(err) {
			return 0, l.setSticky("write log start", err)
		}
		// WriteFileAtomic leaves the old file when it fails. On a full
		// disk, deleting the segments wholly below the new start is
		// what frees the space, so do that first and write again:
		// should a crash come between, recovery starts the log at its
		// first segment, which is at most before — deleted records do
		// not come back beyond the segments kept.
		old := l.logStart.Load()
		l.logStart.Store(before)
		if derr := l.dropBelowStartLocked(); derr != nil {
			l.logStart.Store(old)
			return 0, l.transient("write log start", err)
		}
		if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, logStartFile), encodeLogStart(before), 0o644); err != nil {
			// The segments are gone and the start moved; only the
			// offsets inside the first kept segment would reappear
			// after a crash. Close writes it again.
			l.logStartUnsaved = true
			l.logger.Warn("logstore: log start offset not saved; segments below it deleted, saving again on close", "dir", l.dir, "log_start", before, "err", err)
		}
		l.notify()
		return before, nil
	}
	l.logStartUnsaved = false
	l.logStart.Store(before)
	if err := l.dropBelowStartLocked(); err != nil {
		return 0, err
	}
	l.notify()
	return before, nil
}

// dropBelowStartLocked deletes segments that hold only offsets below the log
// start, rolling the active segment first if it is one of them.
func (l *Log) dropBelowStartLocked() error {
	ls := l.logStart.Load()
	if a := l.active; a.size.Load() > 0 && a.next.Load() <= ls {
		if err := l.rollLocked(); err != nil {
			return err
		}
	}
	segs := l.segments()
	n := 0
	for n < len(segs)-1 && segs[n].next.Load() <= ls {
		n++
	}
	return l.removeSegmentsLocked(0, n)
}

// EnforceRetention deletes sealed segments beyond retention.ms (by their
// newest batch timestamp) or retention.bytes (oldest first), and segments
// below the log start offset. The log start moves to the first kept segment.
func (l *Log) EnforceRetention(now time.Time) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return 0, ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return 0, err
	}
	cfg := l.config()
	segs := l.segments()
	n := 0
	if cfg.RetentionMs >= 0 {
		limit := now.Add(-cfg.RetentionMs).UnixMilli()
		for n < len(segs)-1 {
			s := segs[n]
			s.mu.RLock()
			ts := s.maxTs
			s.mu.RUnlock()
			if ts < 0 || ts >= limit {
				break
			}
			n++
		}
	}
	if cfg.RetentionBytes >= 0 {
		total := int64(0)
		for _, s := range segs {
			total += s.size.Load()
		}
		for _, s := range segs[:n] {
			total -= s.size.Load()
		}
		for n < len(segs)-1 && total-segs[n].size.Load() >= cfg.RetentionBytes {
			total -= segs[n].size.Load()
			n++
		}
	}
	ls := l.logStart.Load()
	for n < len(segs)-1 && segs[n].next.Load() <= ls {
		n++
	}
	// Under SyncAlways a rolled segment may hold data not yet fsynced,
	// so not yet visible: retention deletes only what readers could see.
	hw := l.HighWatermark()
	for i := range n {
		if segs[i].next.Load() > hw {
			n = i
			break
		}
	}
	if n == 0 {
		return 0, nil
	}
	// Move the log start first so readers never see it below the first
	// segment.
	if first := segs[n].base; first > l.logStart.Load() {
		l.logStart.Store(first)
	}
	if err := l.removeSegmentsLocked(0, n); err != nil {
		return 0, err
	}
	l.notify()
	return n, nil
}

// Truncate removes every batch that contains an offset >= offset (a batch
// straddling offset goes whole, as in Kafka), making the log end the base
// of the first removed batch. Truncating below the first segment empties the
// log and restarts it at offset.
func (l *Log) Truncate(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return err
	}
	if offset >= l.leo.Load() {
		return nil
	}
	l.gen.Add(1)
	l.fenceCheckpoint()
	l.fenceSeal()
	segs := l.segments()
	if offset < segs[0].base {
		return l.resetLocked(offset)
	}
	j := findSegment(segs, offset)
	s := segs[j]
	if err := l.removeSegmentsLocked(j+1, len(segs)); err != nil {
		return err
	}
	f, err := s.h.acquire()
	if err != nil {
		return l.setSticky("open", err)
	}
	defer s.h.release()
	pos, err := s.findPos(f, offset, s.size.Load())
	if err != nil {
		return l.setSticky("read", err)
	}
	// The index files no longer describe the file; remove them first so a
	// crash mid-way leaves a segment that is rescanned.
	l.removeIndexes(s.base)
	s.diskIndex.Store(-1)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.setSticky("sync dir", err)
	}
	if err := f.Truncate(pos); err != nil {
		return l.setSticky("truncate", err)
	}
	if err := f.Sync(); err != nil {
		return l.setSticky("fsync", err)
	}
	l.dirty = false
	// Rebuild the in-memory indexes of the shortened segment from its
	// headers (its data was verified when written or recovered).
	cfg := l.config()
	s.mu.Lock()
	s.idx, s.tidx = nil, nil
	s.maxTs, s.maxTsBase, s.maxTsPos = -1, -1, -1
	s.sinceIdx, s.sinceTidx = 0, 0
	res := scanBatches(f, pos, s.base, false, func(b batchInfo) {
		s.noteBatch(b.pos, b.base, b.size, b.maxTs, int64(cfg.IndexIntervalBytes))
	})
	s.mu.Unlock()
	if res.err != nil {
		return l.setSticky("rescan", res.err)
	}
	s.size.Store(pos)
	s.next.Store(res.next)
	l.active = s
	l.pruneSealsLocked() // s is active again: not one to seal
	l.leo.Store(res.next)
	if l.logStart.Load() > res.next {
		if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, logStartFile), encodeLogStart(res.next), 0o644); err != nil {
			return l.setSticky("write log start", err)
		}
		l.logStart.Store(res.next)
	}
	if cur := l.hw.Load(); cur.off > res.next || cur.seg.base > s.base {
		l.hw.Store(&hwMark{off: res.next, seg: s, pos: pos})
	}
	l.notify()
	return nil
}

// resetLocked deletes every segment and starts an empty log at offset.
func (l *Log) resetLocked(offset int64) error {
	segs := l.segments()
	if err := l.removeSegmentsLocked(0, len(segs)); err != nil {
		return err
	}
	seg, err := l.createSegment(offset)
	if err != nil {
		return l.setSticky("create segment", err)
	}
	if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, logStartFile), encodeLogStart(offset), 0o644); err != nil {
		return l.setSticky("write log start", err)
	}
	ns := []*segment{seg}
	l.segs.Store(&ns)
	l.active = seg
	l.leo.Store(offset)
	l.logStart.Store(offset)
	l.hw.Store(&hwMark{off: offset, seg: seg, pos: 0})
	l.notify()
	return nil
}
