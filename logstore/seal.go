package logstore

import (
	"fmt"

	"github.com/minikafka/minikafka/internal/vfs"
)

// sealSlots bounds the seals of a process that run their I/O at once: logs
// written at the same rate roll together, and their fsyncs need not all
// reach the disk together (as checkpointSlots for checkpoints).
var sealSlots = make(chan struct{}, 2)

// startSealLocked starts the log's seal goroutine unless it runs or there is
// nothing to seal. Called with sealMu held.
func (l *Log) startSealLocked() {
	if l.sealRunning || len(l.sealQ) == 0 || l.sealAbort.Load() {
		return
	}
	l.sealRunning = true
	l.sealDone = make(chan struct{})
	go l.sealLoop(l.sealDone)
}

// sealLoop seals the queued segments in roll order until none is left. A
// seal that fails without making the log refuse writes (an index file not
// written for want of space) stays queued, and the next roll or Close tries
// it again; until then an open after a crash rescans the segment and those
// after it (see Recovery in doc.go).
func (l *Log) sealLoop(done chan struct{}) {
	defer close(done)
	for {
		l.sealMu.Lock()
		if len(l.sealQ) == 0 || l.sealAbort.Load() || l.stickyErr() != nil {
			l.sealRunning = false
			l.sealMu.Unlock()
			return
		}
		seg := l.sealQ[0]
		l.sealMu.Unlock()
		err := l.sealOne(seg)
		l.sealMu.Lock()
		if err != nil {
			l.sealRunning = false
			l.sealMu.Unlock()
			l.logger.Warn("logstore: sealing a segment failed; retried at the next roll or close", "dir", l.dir, "segment", seg.base, "err", err)
			return
		}
		if len(l.sealQ) > 0 && l.sealQ[0] == seg {
			l.sealQ = append(l.sealQ[:0:0], l.sealQ[1:]...)
		}
		l.sealMu.Unlock()
	}
}

// sealOne seals one rolled segment, without the writer's mutex but for a
// snapshot:
//
//  1. under mu, for a moment: check that seg is still a sealed segment of
//     the log (not removed, not made active again by Truncate), pin it,
//     and take its size, next offset, index entries and the seal fence
//     epoch;
//  2. with no lock: fsync it (unless group commit or Sync did since the
//     roll), then write both index files as *.seal.tmp and fsync them;
//  3. under sealFenceMu: rename them into place unless the fence epoch
//     moved; then fsync the directory, which also makes the entries of
//     segments created before it durable.
//
// So index files without the snapshot flag whose size matches the .log
// file only ever exist after the segment was fsynced whole: they are the
// proof Open goes by. Everything that removes or changes sealed segments
// (retention, DeleteRecords, Truncate, Destroy) calls fenceSeal under mu
// first, so a seal whose snapshot predates it renames nothing after it; a
// fenced seal starts again from 1, where it finds whether the segment is
// still one to seal. It returns nil when the segment is sealed or no longer
// needs it.
func (l *Log) sealOne(seg *segment) error {
	for {
		l.mu.Lock()
		if l.sealAbort.Load() || !l.isSealedLocked(seg) || !seg.tryRef() {
			l.mu.Unlock()
			return nil
		}
		epoch := l.sealEpoch.Load()
		seg.mu.RLock()
		hdr := indexHeader{logSize: seg.size.Load(), next: seg.next.Load()}
		oi := encodeOffsetIndex(hdr, seg.idx)
		ti := encodeTimeIndex(hdr, seg.timeIndexForDisk())
		seg.mu.RUnlock()
		l.mu.Unlock()
		// The slot is taken after the snapshot, so a log whose writer
		// holds mu a while does not hold up other logs' seals.
		sealSlots <- struct{}{}
		fenced := l.sealEpoch.Load() != epoch // while waiting for the slot
		var err error
		if !fenced {
			fenced, err = l.sealFiles(seg, epoch, hdr, oi, ti)
		}
		<-sealSlots
		seg.unref()
		if fenced {
			continue
		}
		if err == nil {
			seg.unsealed.Store(false)
			l.seals.Add(1)
		}
		return err
	}
}

// sealFiles is steps 2 and 3 of sealOne for a pinned segment.
func (l *Log) sealFiles(seg *segment, epoch uint64, hdr indexHeader, oi, ti []byte) (fenced bool, err error) {
	if !seg.synced.Load() {
		if err := l.syncSegment(seg); err != nil {
			if l.sealEpoch.Load() != epoch || l.sealAbort.Load() {
				// Removed or cut meanwhile: whoever did it saw to
				// the file; start again and find out.
				return true, nil
			}
			return false, l.setSticky("fsync", err)
		}
		seg.synced.Store(true)
		if l.sealEpoch.Load() != epoch {
			return true, nil
		}
	}
	oPath, tPath := l.path(seg.base, ".index"), l.path(seg.base, ".timeindex")
	const tmp = ".seal.tmp"
	err = vfs.WriteFileSync(l.fs, oPath+tmp, oi, 0o644)
	if err == nil {
		err = vfs.WriteFileSync(l.fs, tPath+tmp, ti, 0o644)
	}
	if err == nil {
		l.sealFenceMu.Lock()
		if fenced = l.sealEpoch.Load() != epoch; !fenced {
			seg.diskIndex.Store(-1)
			if err = l.fs.Rename(oPath+tmp, oPath); err == nil {
				err = l.fs.Rename(tPath+tmp, tPath)
			}
			if err == nil {
				seg.diskIndex.Store(hdr.logSize)
			}
		}
		l.sealFenceMu.Unlock()
	}
	if err != nil || fenced {
		_ = l.fs.Remove(oPath + tmp)
		_ = l.fs.Remove(tPath + tmp)
		if err != nil {
			return false, fmt.Errorf("writing index files of %s: %w", l.path(seg.base, ".log"), err)
		}
		return true, nil
	}
	// Creations counted before this fsync are covered by it.
	return false, l.syncDirNow(l.dirCreated.Load())
}

// isSealedLocked reports whether seg is a segment of the log other than the
// active one. Called with mu held.
func (l *Log) isSealedLocked(seg *segment) bool {
	segs := l.segments()
	i := indexOfSegment(segs, seg)
	return i >= 0 && i < len(segs)-1 && !seg.dead.Load()
}

// fenceSeal is called, with mu held, by everything that removes or changes
// sealed segments: a seal that took its snapshot before it renames no index
// file after it. It waits at most for a seal's two renames.
func (l *Log) fenceSeal() {
	l.sealFenceMu.Lock()
	l.sealEpoch.Add(1)
	l.sealFenceMu.Unlock()
}

// pruneSealsLocked drops queued seals of segments that are no longer
// sealed segments of the log (removed, or made active by Truncate). Called
// with mu held, after fenceSeal.
func (l *Log) pruneSealsLocked() {
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	q := l.sealQ[:0:0]
	for _, s := range l.sealQ {
		if l.isSealedLocked(s) {
			q = append(q, s)
		} else {
			s.unsealed.Store(false)
		}
	}
	l.sealQ = q
}

// drainSeals waits for the running seals and, if one failed earlier and is
// still queued, tries once more (Close). Called without mu.
func (l *Log) drainSeals() {
	for try := 0; try < 2; try++ {
		l.sealMu.Lock()
		if try == 1 {
			l.startSealLocked()
		}
		running, done := l.sealRunning, l.sealDone
		l.sealMu.Unlock()
		if running {
			<-done
		}
	}
}

// waitSeals waits for the running seal goroutine to finish (tests,
// Destroy).
func (l *Log) waitSeals() {
	l.sealMu.Lock()
	running, done := l.sealRunning, l.sealDone
	l.sealMu.Unlock()
	if running {
		<-done
	}
}

// syncDirNow fsyncs the directory and records that it covers the first
// created segment creations. A failure is sticky.
func (l *Log) syncDirNow(created uint64) error {
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.setSticky("sync dir", err)
	}
	for {
		cur := l.dirSynced.Load()
		if cur >= created || l.dirSynced.CompareAndSwap(cur, created) {
			return nil
		}
	}
}
