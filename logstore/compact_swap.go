package logstore

import (
	"fmt"
	"os"
	"strings"
)

// File suffixes of a compaction in progress (see doc.go, "Compaction").
const (
	cleanedSuffix = ".cleaned" // written and fsynced, not yet committed
	swapSuffix    = ".swap"    // committed, old segments not yet all gone
)

// swapCleaned replaces each group of old segments by its cleaned segment,
// in offset order, each group atomically: rename base.log.cleaned to
// base.log.swap and fsync the directory (the commit point), rename the old
// segments' files to *.deleted and fsync, then move the new index files
// and base.log.swap to their final names and fsync. Recovery completes a
// group found as .swap and discards .cleaned files, so a crash leaves every
// group either old or new; since groups go in offset order, the log is
// always a cleaned prefix followed by an uncleaned rest, which loses no
// record that is not superseded (a tombstone is only dropped together with,
// or after, the older records of its key). Readers holding old segments
// keep reading them until they release them.
func (l *Log) swapCleaned(outs []*cleanedSegment, gen uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return err
	}
	if l.gen.Load() != gen {
		return ErrCompactAborted
	}
	// Retention, DeleteRecords or Truncate may have changed the segments
	// since they were read: then give up and let the next pass redo it.
	segs := l.segments()
	for _, out := range outs {
		i := indexOfSegment(segs, out.olds[0])
		if i < 0 || i+len(out.olds) > len(segs)-1 {
			return ErrCompactAborted
		}
		for j, s := range out.olds {
			if segs[i+j] != s || s.dead.Load() || s.unsealed.Load() {
				return ErrCompactAborted
			}
		}
	}
	for _, out := range outs {
		if err := l.swapOne(out); err != nil {
			return err
		}
	}
	return nil
}

func indexOfSegment(segs []*segment, s *segment) int {
	for i, x := range segs {
		if x == s {
			return i
		}
	}
	return -1
}

func (l *Log) swapOne(out *cleanedSegment) error {
	fsys := l.fs
	base := out.seg.base
	logPath := l.path(base, ".log")
	if err := fsys.Rename(logPath+cleanedSuffix, logPath+swapSuffix); err != nil {
		return err // nothing changed yet
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		return l.setSticky("compact: sync dir", err)
	}
	for _, s := range out.olds {
		old := l.path(s.base, ".log")
		if err := fsys.Rename(old, old+".deleted"); err != nil {
			return l.setSticky("compact: rename", err)
		}
		s.h.setPath(old + ".deleted")
		for _, ext := range []string{".index", ".timeindex"} {
			p := l.path(s.base, ext)
			if err := fsys.Rename(p, p+".deleted"); err != nil {
				fsys.Remove(p)
			}
		}
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		return l.setSticky("compact: sync dir", err)
	}
	for _, ext := range []string{".index", ".timeindex"} {
		p := l.path(base, ext)
		if err := fsys.Rename(p+cleanedSuffix, p); err != nil {
			return l.setSticky("compact: rename", err)
		}
	}
	if err := fsys.Rename(logPath+swapSuffix, logPath); err != nil {
		return l.setSticky("compact: rename", err)
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		return l.setSticky("compact: sync dir", err)
	}
	ns := out.seg
	ns.h = l.files.handle(fsys, logPath)
	ns.onFinal = l.finalSegment
	segs := l.segments()
	i := indexOfSegment(segs, out.olds[0])
	next := make([]*segment, 0, len(segs)-len(out.olds)+1)
	next = append(append(append(next, segs[:i]...), ns), segs[i+len(out.olds):]...)
	l.segs.Store(&next)
	if m := l.hw.Load(); m != nil && indexOfSegment(out.olds, m.seg) >= 0 {
		// Sealed segments lie wholly below the high watermark.
		l.hw.Store(&hwMark{off: m.off, seg: ns, pos: ns.size.Load()})
	}
	for _, s := range out.olds {
		s.kill()
	}
	return nil
}

// finishCompaction runs at Open before segments are loaded: .cleaned files
// (a clean that never committed) are removed; a base.log.swap (committed)
// replaces the old segments it covers, from its base to its last offset,
// and loses its index files so the segment is rescanned.
// names is the directory listing; it reports whether it changed the
// directory (the caller must list it again), and the bases of the segments
// it completed: fsynced before they were committed, they are sealed
// segments although they have no index files now.
func (l *Log) finishCompaction(names []string, rep *RecoveryReport) (changed bool, swapped map[int64]bool, err error) {
	fsys := l.fs
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) {
			if err := fsys.Remove(l.dir + "/" + n); err != nil {
				return changed, swapped, err
			}
			rep.RemovedFiles = append(rep.RemovedFiles, n)
			changed = true
		}
	}
	for _, n := range names {
		if !strings.HasSuffix(n, ".log"+swapSuffix) {
			continue
		}
		base, ok := parseSegName(strings.TrimSuffix(n, swapSuffix), ".log")
		if !ok {
			continue
		}
		swapPath := l.path(base, ".log"+swapSuffix)
		f, err := fsys.OpenFile(swapPath, os.O_RDONLY, 0)
		if err != nil {
			return changed, swapped, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return changed, swapped, err
		}
		res := scanBatches(f, st.Size(), base, true, nil)
		f.Close()
		if res.err != nil {
			// It was fsynced before it was committed.
			return changed, swapped, &CorruptionError{File: swapPath, Pos: res.end, Err: res.err}
		}
		for _, m := range names {
			b, ok := parseSegName(m, ".log")
			if !ok || b < base || (b >= res.next && b != base) {
				continue
			}
			if err := fsys.Remove(l.path(b, ".log")); err != nil {
				return changed, swapped, err
			}
			l.removeIndexes(b)
			rep.RemovedFiles = append(rep.RemovedFiles, m)
		}
		l.removeIndexes(base)
		if err := fsys.Rename(swapPath, l.path(base, ".log")); err != nil {
			return changed, swapped, fmt.Errorf("logstore: completing compaction of %s: %w", swapPath, err)
		}
		if swapped == nil {
			swapped = map[int64]bool{}
		}
		swapped[base] = true
		changed = true
	}
	if changed {
		return true, swapped, fsys.SyncDir(l.dir)
	}
	return false, nil, nil
}
