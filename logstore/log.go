package logstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Log is one partition's log. Append, Truncate, DeleteRecords, retention and
// Close serialize on mu (one writer); readers work from an immutable
// snapshot of the segment list and the published high watermark and never
// take mu.
type Log struct {
	fs     vfs.FS
	dir    string
	logger *slog.Logger
	// smallActive is Options.SmallActiveBytes, checkpointBytes
	// Options.RecoveryCheckpointBytes (defaulted).
	smallActive     int64
	checkpointBytes int64
	now             func() time.Time
	files           *FileCache
	sync            SyncPolicy

	cfg atomic.Pointer[Config]

	mu     sync.Mutex // the writer lock
	active *segment   // guarded by mu
	segs   atomic.Pointer[[]*segment]

	dirty bool // guarded by mu: the active segment has writes not yet fsynced

	logStartUnsaved bool // guarded by mu: DeleteRecords could not write logstart (retention.go)
	leo             atomic.Int64
	logStart        atomic.Int64
	hw              atomic.Pointer[hwMark]
	closed          atomic.Bool
	sticky          atomic.Pointer[WriteError]

	// A write failed for want of space and was undone (transient); until
	// noSpaceRetry, appends get noSpace again without touching the disk,
	// so producers retrying against a full disk do not each write and
	// truncate (guarded by mu).
	noSpace      *WriteError
	noSpaceRetry time.Time
	noSpaceWait  time.Duration

	// Group commit (SyncAlways) and the interval flusher.
	syncMu     sync.Mutex
	syncing    bool
	syncDone   chan struct{}
	timerArmed bool
	kicked     bool // a background sync goroutine is running (SyncAlways)
	timer      *time.Timer
	gen        atomic.Uint64 // bumped by Truncate so a stale sync cannot raise the HW
	appending  atomic.Int32  // Append calls in progress (group commit waits for them)
	fsyncs     atomic.Int64  // group commit rounds that fsynced (for tests and benchmarks)

	notifyMu sync.Mutex
	changed  chan struct{}

	cleaner cleanerState // compaction (compact*.go)

	// Recovery checkpoints run in the background (checkpointLoop), so
	// produce never waits for their fsyncs. ckRunning and ckAgain are
	// guarded by mu; ckMu orders a checkpoint's renames of index files
	// against every writer-side change to the active segment's index
	// files (fenceCheckpoint), and ckEpoch counts those changes.
	ckRunning bool
	ckAgain   bool
	ckMu      sync.Mutex
	ckEpoch   atomic.Uint64
	ckDone    chan struct{} // closed when the running checkpointLoop exits
	ckRuns    atomic.Int64  // checkpoints whose index files were renamed into place (tests)

	// Sealing a rolled segment (fsync, index files, directory fsync) runs
	// in the background too (sealLoop). sealMu guards sealQ (rolled
	// segments whose seal has not finished, oldest first), sealRunning
	// and sealDone; it is taken under mu or alone. sealFenceMu orders a
	// seal's renames of index files against everything that removes or
	// changes sealed segments (fenceSeal), sealEpoch counts those.
	// dirCreated counts segment files created by rolls, dirSynced the
	// count a directory fsync is known to cover: a segment's data is
	// durable only once its directory entry is.
	sealMu      sync.Mutex
	sealQ       []*segment
	sealRunning bool
	sealDone    chan struct{}
	sealFenceMu sync.Mutex
	sealEpoch   atomic.Uint64
	sealAbort   atomic.Bool  // Destroy: abandon queued seals
	seals       atomic.Int64 // seals finished (tests)
	dirCreated  atomic.Uint64
	dirSynced   atomic.Uint64
}

// hwMark is the published high watermark: offsets below off are visible, and
// their bytes end at pos in seg (segments before seg are wholly visible).
type hwMark struct {
	off int64
	seg *segment
	pos int64
}

// AppendResult describes a successful Append.
type AppendResult struct {
	BaseOffset     int64
	LastOffset     int64
	AppendTimeMs   int64 // -1 unless the log uses LogAppendTime
	LogStartOffset int64
}

func (l *Log) config() Config { return *l.cfg.Load() }

// SetConfig changes the per-topic settings; they apply from the next append
// or retention pass.
func (l *Log) SetConfig(c Config) {
	c = c.normalized()
	l.cfg.Store(&c)
}

func (l *Log) segments() []*segment { return *l.segs.Load() }

func (l *Log) path(base int64, ext string) string { return filepath.Join(l.dir, segName(base, ext)) }

func (l *Log) setSticky(op string, err error) error {
	we := &WriteError{Op: op, Err: err}
	if l.sticky.CompareAndSwap(nil, we) {
		l.logger.Error("logstore: write failure, log now refuses writes", "dir", l.dir, "op", op, "err", err)
		l.notify()
	}
	return l.sticky.Load()
}

// The wait between write attempts on a full disk doubles from the first
// to the last: short enough that writes resume soon after space is freed
// elsewhere (a deleted topic, another process), long enough that a flood
// of retried produces does not hammer a full disk. Space this log frees
// itself (retention, DeleteRecords) ends the wait at once.
const (
	firstNoSpaceWait = 10 * time.Millisecond
	lastNoSpaceWait  = 500 * time.Millisecond
)

// transient reports an operation that failed for want of space and left
// the log unchanged (any other failure is sticky); the log says so once
// per episode, and again when writes resume. Called with mu held.
func (l *Log) transient(op string, err error) error {
	if !vfs.IsNoSpace(err) {
		return l.setSticky(op, err)
	}
	if l.noSpace == nil {
		l.logger.Error("logstore: disk full: the log refuses writes until there is space (nothing lost; retried with backoff)", "dir", l.dir, "op", op, "err", err)
		l.noSpaceWait = firstNoSpaceWait
	} else {
		l.noSpaceWait = min(2*l.noSpaceWait, lastNoSpaceWait)
	}
	l.noSpace = &WriteError{Op: op, Err: err, Transient: true}
	l.noSpaceRetry = l.now().Add(l.noSpaceWait)
	return l.noSpace
}

// spaceFreed ends a full-disk wait early: the log just deleted files.
// Called with mu held.
func (l *Log) spaceFreed() { l.noSpaceRetry = time.Time{} }

// SpaceFreed tells a log that space was freed on its disk elsewhere (a
// deleted topic): a log waiting to retry after a full disk tries again on
// the next append.
func (l *Log) SpaceFreed() {
	l.mu.Lock()
	l.spaceFreed()
	l.mu.Unlock()
}

func (l *Log) stickyErr() error {
	if e := l.sticky.Load(); e != nil {
		return e
	}
	return nil
}

// Append validates every batch in batches (a concatenation of v2
// RecordBatches), then assigns offsets by rewriting base offsets in place
// (and stamps LogAppendTime if configured) and writes all of it with one
// write. On a validation error nothing is written and the error is a
// *BatchError. Under SyncAlways the data becomes visible only after
// WaitDurable (or another appender's fsync) covers it.
func (l *Log) Append(batches []byte) (AppendResult, error) { return l.append(batches, true) }

// AppendValidated is Append for batches the caller has already checked,
// each with records.Validate (the broker does, to answer per-partition
// errors): it skips the second CRC pass over the bytes on the produce path.
// Bytes that would not pass records.Split must never reach it.
func (l *Log) AppendValidated(batches []byte) (AppendResult, error) {
	return l.append(batches, false)
}

func (l *Log) append(batches []byte, validate bool) (AppendResult, error) {
	if len(batches) == 0 {
		return AppendResult{}, ErrEmptyAppend
	}
	l.appending.Add(1)
	defer l.appending.Add(-1)
	// Validation (CRC) runs before the lock so appenders overlap.
	if validate {
		if err := records.Split(batches, func(int, records.BatchHeader, []byte) error { return nil }); err != nil {
			return AppendResult{}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return AppendResult{}, ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return AppendResult{}, err
	}
	cfg := l.config()
	now := l.now()
	if l.noSpace != nil && now.Before(l.noSpaceRetry) {
		return AppendResult{}, l.noSpace
	}
	seg := l.active
	size := seg.size.Load()
	n := int64(len(batches))
	if size > 0 && (size+n > cfg.SegmentBytes || (cfg.SegmentMs > 0 && now.Sub(seg.created) >= cfg.SegmentMs)) {
		if err := l.rollLocked(); err != nil {
			return AppendResult{}, err
		}
		seg, size = l.active, 0
	}
	if size+n > maxSegmentBytes {
		return AppendResult{}, &BatchError{Index: 0, Err: fmt.Errorf("%w: %d bytes do not fit in a segment", records.ErrCorrupt, n)}
	}
	base := l.leo.Load()
	appendTime := int64(-1)
	if cfg.LogAppendTime {
		appendTime = now.UnixMilli()
	}
	off := base
	for p := batches; len(p) > 0; {
		bsize := int(int32(binary.BigEndian.Uint32(p[8:]))) + 12
		records.SetBaseOffset(p, off)
		if appendTime >= 0 {
			records.SetLogAppendTime(p[:bsize], appendTime)
		}
		off += int64(int32(binary.BigEndian.Uint32(p[23:]))) + 1
		p = p[bsize:]
	}
	f, err := seg.h.acquire()
	if err != nil {
		return AppendResult{}, l.setSticky("open", err)
	}
	wn, err := f.WriteAt(batches, size)
	seg.h.release()
	if err == nil && wn != len(batches) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if !vfs.IsNoSpace(err) {
			return AppendResult{}, l.setSticky("write", err)
		}
		// Out of space: cut off whatever part of the write landed, so
		// the segment ends where it did and the next append (once there
		// is space) writes as if this one never was. Only if that fails
		// too is the tail unknown.
		if terr := l.truncateActive(seg, size); terr != nil {
			l.logger.Error("logstore: undoing a failed write failed", "dir", l.dir, "write_err", err, "err", terr)
			return AppendResult{}, l.setSticky("write", err)
		}
		return AppendResult{}, l.transient("write", err)
	}
	if l.noSpace != nil {
		l.noSpace, l.noSpaceRetry, l.noSpaceWait = nil, time.Time{}, 0
		l.logger.Info("logstore: there is space again; the log takes writes", "dir", l.dir)
	}
	l.dirty = true
	if size == 0 {
		seg.created = now
	}
	interval := int64(cfg.IndexIntervalBytes)
	seg.mu.Lock()
	pos := size
	for p := batches; len(p) > 0; {
		bsize := int64(int32(binary.BigEndian.Uint32(p[8:]))) + 12
		bbase := int64(binary.BigEndian.Uint64(p))
		maxTs := int64(binary.BigEndian.Uint64(p[35:]))
		seg.noteBatch(pos, bbase, bsize, maxTs, interval)
		pos += bsize
		p = p[bsize:]
	}
	seg.mu.Unlock()
	seg.size.Store(pos)
	seg.next.Store(off)
	l.leo.Store(off)
	if l.checkpointBytes > 0 && pos-max(seg.diskIndex.Load(), seg.checkpointAt) >= l.checkpointBytes {
		seg.checkpointAt = pos
		l.startCheckpointLocked()
	}
	switch l.sync.Mode {
	case SyncAlways:
		// Visible once fsynced: make sure a round runs even if nobody
		// waits (acks=1 producers), see kick.
		l.kick()
	case SyncInterval:
		l.publish(&hwMark{off: off, seg: seg, pos: pos})
		l.armTimer()
	default:
		l.publish(&hwMark{off: off, seg: seg, pos: pos})
	}
	return AppendResult{BaseOffset: base, LastOffset: off - 1, AppendTimeMs: appendTime, LogStartOffset: l.logStart.Load()}, nil
}

// truncateActive cuts seg's file back to size after a failed write.
func (l *Log) truncateActive(seg *segment, size int64) error {
	f, err := seg.h.acquire()
	if err != nil {
		return err
	}
	defer seg.h.release()
	return f.Truncate(size)
}

// publish raises the high watermark and wakes waiters.
func (l *Log) publish(m *hwMark) {
	l.hw.Store(m)
	l.notify()
}

// Changed returns a channel closed when the high watermark moves, on
// truncation, deletion, a write failure or close. Call it again after it
// fires to get the next one.
func (l *Log) Changed() <-chan struct{} {
	l.notifyMu.Lock()
	defer l.notifyMu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
		if l.closed.Load() {
			close(l.changed)
			ch := l.changed
			l.changed = nil
			return ch
		}
	}
	return l.changed
}

func (l *Log) notify() {
	l.notifyMu.Lock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	l.notifyMu.Unlock()
}

// armTimer schedules an fsync Interval after the first unsynced append.
func (l *Log) armTimer() {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.timerArmed || l.closed.Load() {
		return
	}
	l.timerArmed = true
	if l.timer == nil {
		l.timer = time.AfterFunc(l.sync.Interval, l.timerFired)
	} else {
		l.timer.Reset(l.sync.Interval)
	}
}

func (l *Log) timerFired() {
	l.syncMu.Lock()
	l.timerArmed = false
	l.syncMu.Unlock()
	if l.closed.Load() {
		return
	}
	if err := l.Sync(); err != nil && err != ErrClosed {
		l.logger.Error("logstore: interval fsync failed", "dir", l.dir, "err", err)
	}
}

// kick starts a background goroutine that runs group-commit rounds until the
// high watermark reaches the log end, unless one is already running. It
// joins WaitDurable callers' rounds rather than adding fsyncs.
func (l *Log) kick() {
	l.syncMu.Lock()
	if l.kicked || l.closed.Load() {
		l.syncMu.Unlock()
		return
	}
	l.kicked = true
	l.syncMu.Unlock()
	go func() {
		for {
			err := l.WaitDurable(context.Background(), l.leo.Load())
			l.syncMu.Lock()
			// Appends after our target saw kicked set and did not start a
			// goroutine: cover them before leaving.
			if err != nil || l.HighWatermark() >= l.leo.Load() || l.closed.Load() {
				l.kicked = false
				l.syncMu.Unlock()
				return
			}
			l.syncMu.Unlock()
		}
	}()
}

// WaitDurable blocks until every offset below end is fsynced (SyncAlways) and
// returns the sticky error if the log failed. Concurrent callers share one
// fsync: the first becomes the leader and syncs everything written so far,
// the others wait for its round and re-check. ctx bounds the wait for
// another caller's round; a caller leading a round finishes its fsync.
// Under SyncAlways, Append also starts a background round if none runs, so
// data appended by callers that never wait still becomes visible. Under
// other policies WaitDurable returns at once.
func (l *Log) WaitDurable(ctx context.Context, end int64) error {
	if l.sync.Mode != SyncAlways {
		return l.stickyErr()
	}
	for {
		if err := l.stickyErr(); err != nil {
			return err
		}
		if l.HighWatermark() >= end {
			return nil
		}
		if end > l.leo.Load() {
			return ErrTruncated
		}
		if l.closed.Load() {
			return ErrClosed
		}
		l.syncMu.Lock()
		if l.syncing {
			ch := l.syncDone
			l.syncMu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		l.syncing = true
		l.syncDone = make(chan struct{})
		l.syncMu.Unlock()
		// Appenders the previous round just released are about to append
		// again; let them, so this fsync covers their data too instead of
		// leaving it for the next round (commit_delay in PostgreSQL terms,
		// but costing a yield, not a sleep).
		for i := 0; i < 4 && l.appending.Load() > 0 || i < 1; i++ {
			runtime.Gosched()
		}
		err := l.syncRound()
		l.syncMu.Lock()
		l.syncing = false
		close(l.syncDone)
		l.syncMu.Unlock()
		if err != nil {
			return err
		}
	}
}

// syncRound fsyncs the active segment up to what has been written and
// publishes that as the high watermark.
func (l *Log) syncRound() error {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return ErrClosed
	}
	seg := l.active
	target := l.leo.Load()
	pos := seg.size.Load()
	gen := l.gen.Load()
	// Rolled segments whose seal has not fsynced them yet hold data below
	// target too, and new segments' directory entries may not be durable.
	pend := l.unsyncedSealsLocked()
	created := l.dirCreated.Load()
	l.mu.Unlock()
	if cur := l.hw.Load(); cur != nil && cur.off >= target {
		return nil
	}
	if err := l.syncSealed(pend, created); err != nil {
		return err
	}
	f, err := seg.h.acquire()
	if err != nil {
		return l.setSticky("open", err)
	}
	err = f.Sync()
	seg.h.release()
	if err != nil {
		return l.setSticky("fsync", err)
	}
	l.fsyncs.Add(1)
	l.mu.Lock()
	if l.leo.Load() == target && l.active == seg {
		l.dirty = false
	}
	if l.gen.Load() == gen {
		if cur := l.hw.Load(); cur == nil || cur.off < target {
			l.publish(&hwMark{off: target, seg: seg, pos: pos})
		}
	}
	l.mu.Unlock()
	return nil
}

// Sync fsyncs everything appended so far (under any policy).
func (l *Log) Sync() error {
	if err := l.stickyErr(); err != nil {
		return err
	}
	if l.sync.Mode == SyncAlways {
		return l.WaitDurable(context.Background(), l.leo.Load())
	}
	l.mu.Lock()
	pend := l.unsyncedSealsLocked()
	created := l.dirCreated.Load()
	l.mu.Unlock()
	if err := l.syncSealed(pend, created); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	return l.syncActiveLocked()
}

// unsyncedSealsLocked lists the rolled segments not fsynced since they were
// rolled (their seal has not got that far). Called with mu held.
func (l *Log) unsyncedSealsLocked() []*segment {
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	var pend []*segment
	for _, s := range l.sealQ {
		if !s.synced.Load() {
			pend = append(pend, s)
		}
	}
	return pend
}

// syncSealed fsyncs pend (rolled segments not yet fsynced by their seal)
// and, unless a directory fsync already covered them, the directory entries
// of the created segments, without any lock: what group commit or Sync
// then declares durable includes everything written before it, in every
// segment. A failed fsync is sticky.
func (l *Log) syncSealed(pend []*segment, created uint64) error {
	for _, s := range pend {
		if s.synced.Load() || !s.tryRef() {
			continue // removed meanwhile (Truncate): nothing to keep of it
		}
		err := l.syncSegment(s)
		s.unref()
		if err != nil {
			if s.dead.Load() {
				continue
			}
			return l.setSticky("fsync", err)
		}
		s.synced.Store(true)
	}
	return l.syncDirFor(created)
}

// syncDirFor fsyncs the directory unless a directory fsync already covered
// the first created segment creations.
func (l *Log) syncDirFor(created uint64) error {
	if l.dirSynced.Load() >= created {
		return nil
	}
	return l.syncDirNow(created)
}

func (l *Log) syncActiveLocked() error {
	f, err := l.active.h.acquire()
	if err != nil {
		return l.setSticky("open", err)
	}
	err = f.Sync()
	l.active.h.release()
	if err != nil {
		return l.setSticky("fsync", err)
	}
	l.dirty = false
	return nil
}

// rollLocked starts a new segment at the log end and adopts it as the
// active one; the old one is sealed in the background (sealLoop: fsync,
// index files, directory fsync), so an append that rolls waits for no fsync
// and no index write. Only the new file's creation happens here: should it
// fail (a full disk) the log is as it was and the next append tries again.
// Called with mu held.
func (l *Log) rollLocked() error {
	old := l.active
	l.fenceCheckpoint()
	leo := l.leo.Load()
	seg, err := l.createSegment(leo)
	if err != nil {
		return l.transient("create segment", err)
	}
	l.dirCreated.Add(1)
	// Group commit (or Sync) may already have fsynced all of it.
	old.synced.Store(!l.dirty)
	old.unsealed.Store(true)
	segs := append(append([]*segment(nil), l.segments()...), seg)
	l.segs.Store(&segs)
	l.active = seg
	l.dirty = false
	l.sealMu.Lock()
	l.sealQ = append(l.sealQ, old)
	l.startSealLocked()
	l.sealMu.Unlock()
	if l.sync.Mode == SyncAlways {
		// The old segment's tail becomes visible when a group-commit
		// round has fsynced it (syncRound covers rolled segments).
		l.kick()
	}
	return nil
}

// Roll seals the active segment now if it holds data (as segment.ms would).
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.stickyErr(); err != nil {
		return err
	}
	if l.active.size.Load() == 0 {
		return nil
	}
	return l.rollLocked()
}

func (l *Log) createSegment(base int64) (*segment, error) {
	f, err := l.fs.OpenFile(l.path(base, ".log"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if !errors.Is(err, os.ErrExist) {
			// A create that failed half way must not block the retry
			// (O_EXCL); an empty segment file is nothing to keep.
			_ = l.fs.Remove(l.path(base, ".log"))
		}
		return nil, err
	}
	h := l.files.handle(l.fs, l.path(base, ".log"))
	h.setFile(f)
	s := newSegment(base, h)
	s.onFinal = l.finalSegment
	return s, nil
}

// defaultRecoveryCheckpointBytes bounds how much of the active segment an
// open after a crash rescans: each time the segment has grown this much
// since its index files were last written, they are written again. Index
// files are about 0.6 % of the data they describe and rewritten whole, so
// a 1 GiB segment writes about 3 % more this way.
const defaultRecoveryCheckpointBytes = 128 << 20

// checkpointSlots bounds the recovery checkpoints of a process that run at
// once: many partitions written at the same rate cross their checkpoint
// sizes together, and their fsyncs need not all reach the disk together.
var checkpointSlots = make(chan struct{}, 2)

// startCheckpointLocked asks for a recovery checkpoint of the active
// segment; it runs in a goroutine of the log's own (one at a time, started
// on demand), never on the appender's time. Called with mu held.
func (l *Log) startCheckpointLocked() {
	if l.closed.Load() {
		return
	}
	if l.ckRunning {
		l.ckAgain = true
		return
	}
	l.ckRunning = true
	l.ckDone = make(chan struct{})
	go l.checkpointLoop(l.ckDone)
}

// checkpointLoop runs checkpoints until none is asked for.
func (l *Log) checkpointLoop(done chan struct{}) {
	defer close(done)
	for {
		l.checkpoint()
		l.mu.Lock()
		if !l.ckAgain || l.closed.Load() {
			l.ckRunning = false
			l.mu.Unlock()
			return
		}
		l.ckAgain = false
		l.mu.Unlock()
	}
}

// fenceCheckpoint is called, with mu held, by everything that writes or
// removes the active segment's index files or changes its bytes other than
// by appending (roll, Truncate, reset, Close): a checkpoint that took its
// snapshot before it does not rename its index files into place after it.
// It waits at most for a checkpoint's two renames, never for its fsyncs.
func (l *Log) fenceCheckpoint() {
	l.ckMu.Lock()
	l.ckEpoch.Add(1)
	l.ckMu.Unlock()
}

// checkpoint is a recovery checkpoint of the active segment (Kafka's
// recovery point), off the append path:
//
//  1. under mu, for a moment: the active segment's size S, next offset and
//     the in-memory index entries for [0, S) (a snapshot: appends only
//     add entries after it), and the fence epoch;
//  2. with no lock: fsync the segment, which makes [0, S) durable (its
//     bytes were written before S was published), then write both index
//     files for [0, S) to *.ckpt.tmp and fsync them;
//  3. under ckMu: if no fence happened since 1, rename them over the
//     index files; then fsync the directory (no lock).
//
// So index files on disk only ever describe a prefix that was fsynced
// before they were written, and that prefix still holds the same bytes: a
// Truncate, roll, reset or Close fences first, so a checkpoint that
// snapshotted before it gives up. An open after a crash trusts that
// prefix and rescans only what follows (see Recovery in doc.go). A failed
// fsync of the segment makes the log refuse writes (sticky, as any failed
// fsync; under SyncAlways WaitDurable reports it); a failed index write
// only costs a longer rescan: the files are a cache.
func (l *Log) checkpoint() {
	l.mu.Lock()
	if l.closed.Load() || l.stickyErr() != nil {
		l.mu.Unlock()
		return
	}
	seg := l.active
	epoch := l.ckEpoch.Load()
	seg.mu.RLock()
	hdr := indexHeader{logSize: seg.size.Load(), next: seg.next.Load(), snapshot: true}
	idx := seg.idx[:len(seg.idx):len(seg.idx)]
	tidx := seg.timeIndexForDisk()
	seg.mu.RUnlock()
	synced := false
	if m := l.hw.Load(); l.sync.Mode == SyncAlways && m != nil && m.seg == seg && m.pos >= hdr.logSize {
		synced = true // group commit already fsynced the prefix
	}
	l.mu.Unlock()
	if hdr.logSize == 0 || hdr.logSize <= seg.diskIndex.Load() {
		return
	}
	checkpointSlots <- struct{}{}
	defer func() { <-checkpointSlots }()
	if l.ckEpoch.Load() != epoch {
		return // fenced while waiting for a slot
	}
	if !synced {
		err := l.syncSegment(seg)
		if err != nil {
			l.mu.Lock()
			// A fenced segment (closed, rolled, truncated) may fail to
			// sync for that reason alone; the fence did its own sync.
			if !l.closed.Load() && l.ckEpoch.Load() == epoch {
				l.setSticky("fsync", err)
			}
			l.mu.Unlock()
			return
		}
	}
	oi := encodeOffsetIndex(hdr, idx)
	ti := encodeTimeIndex(hdr, tidx)
	oPath, tPath := l.path(seg.base, ".index"), l.path(seg.base, ".timeindex")
	const tmp = ".ckpt.tmp"
	err := vfs.WriteFileSync(l.fs, oPath+tmp, oi, 0o644)
	if err == nil {
		err = vfs.WriteFileSync(l.fs, tPath+tmp, ti, 0o644)
	}
	renamed := false
	if err == nil {
		l.ckMu.Lock()
		if l.ckEpoch.Load() == epoch {
			if err = l.fs.Rename(oPath+tmp, oPath); err == nil {
				err = l.fs.Rename(tPath+tmp, tPath)
			}
			if err == nil {
				seg.diskIndex.Store(hdr.logSize)
				renamed = true
			}
		}
		l.ckMu.Unlock()
	}
	if !renamed {
		_ = l.fs.Remove(oPath + tmp)
		_ = l.fs.Remove(tPath + tmp)
	}
	if err == nil && renamed {
		err = l.fs.SyncDir(l.dir)
		l.ckRuns.Add(1)
	}
	if err != nil {
		l.logger.Debug("logstore: recovery checkpoint not written", "dir", l.dir, "err", err)
	}
}

// syncSegment fsyncs seg's file without any of the log's locks.
func (l *Log) syncSegment(seg *segment) error {
	f, err := seg.h.acquire()
	if err != nil {
		return err
	}
	err = f.Sync()
	seg.h.release()
	return err
}

// waitCheckpoint waits for a running checkpoint to finish (Close, tests).
func (l *Log) waitCheckpoint() {
	l.mu.Lock()
	done := l.ckDone
	l.mu.Unlock()
	if done != nil {
		<-done
	}
}

// writeIndexes replaces s's offset and time index files (vfs.ReplaceFile);
// the caller fsyncs the directory once for both, and for whatever else it
// changed there.
// s must be sealed and fsynced: the files prove it (see Recovery).
func (l *Log) writeIndexes(s *segment) error { return l.replaceIndexes(s, vfs.ReplaceFile, false) }

// writeIndexesUnsynced is writeIndexes without fsyncs, for the active
// segment at Close: the files are a snapshot, not a seal's proof.
func (l *Log) writeIndexesUnsynced(s *segment) error {
	return l.replaceIndexes(s, vfs.ReplaceFileUnsynced, true)
}

func (l *Log) replaceIndexes(s *segment, replace func(vfs.FS, string, []byte, os.FileMode) error, snapshot bool) error {
	s.mu.RLock()
	hdr := indexHeader{logSize: s.size.Load(), next: s.next.Load(), snapshot: snapshot}
	oi := encodeOffsetIndex(hdr, s.idx)
	ti := encodeTimeIndex(hdr, s.timeIndexForDisk())
	s.mu.RUnlock()
	s.diskIndex.Store(-1)
	if err := replace(l.fs, l.path(s.base, ".index"), oi, 0o644); err != nil {
		return err
	}
	if err := replace(l.fs, l.path(s.base, ".timeindex"), ti, 0o644); err != nil {
		return err
	}
	s.diskIndex.Store(hdr.logSize)
	return nil
}

// HighWatermark is the end of the visible log: the fsynced end under
// SyncAlways, else the log end.
func (l *Log) HighWatermark() int64 {
	if m := l.hw.Load(); m != nil {
		return m.off
	}
	return 0
}

// LogStartOffset is the first offset that can be read.
func (l *Log) LogStartOffset() int64 { return l.logStart.Load() }

// LogEndOffset is the offset the next appended record will get.
func (l *Log) LogEndOffset() int64 { return l.leo.Load() }

// Size is the total size of the segment files in bytes.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segments() {
		n += s.size.Load()
	}
	return n
}

// Dir returns the partition directory.
func (l *Log) Dir() string { return l.dir }

// Close syncs the active segment, writes its indexes (so the next open need
// not rescan it) and releases the files. Readers holding ranges keep their
// files open until they Release them.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed.Swap(true) {
		l.mu.Unlock()
		return nil
	}
	l.fenceCheckpoint()
	l.mu.Unlock()
	// Rolled segments still being sealed get their seals finished, so the
	// next open trusts them (nothing but seals takes mu from here on:
	// every writer sees closed).
	l.drainSeals()
	ck, err := l.close()
	if ck != nil {
		// A checkpoint that was running touches no file after the fence
		// but may still be in its fsync or writing its tmp files.
		<-ck
	}
	return err
}

func (l *Log) close() (chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ck := l.ckDone
	l.syncMu.Lock()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.syncMu.Unlock()
	// An idle log costs no I/O to close: nothing to sync, indexes current.
	var err error
	if l.stickyErr() == nil {
		// A seal that could not finish (a full disk) has at least its
		// segment fsynced here; the next open rescans it.
		err = l.syncSealed(l.unsyncedSealsLocked(), l.dirCreated.Load())
		if err == nil && l.dirty {
			err = l.syncActiveLocked()
		}
		if err == nil && l.logStartUnsaved {
			err = vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, logStartFile), encodeLogStart(l.logStart.Load()), 0o644)
		}
		// The active segment's indexes, so the next open need not
		// rescan it. They are a cache with a checksum, checked against
		// the segment at open: no fsync (of them or the directory),
		// which with thousands of partitions made shutdown take seconds.
		// A small one gets none (Options.SmallActiveBytes): rescanning
		// it at open costs less than two files created now and opened
		// then.
		if a := l.active; err == nil && a.diskIndex.Load() != a.size.Load() && a.size.Load() >= l.smallActive {
			err = l.writeIndexesUnsynced(a)
		}
	}
	if l.sync.Mode == SyncAlways && err == nil && l.stickyErr() == nil {
		// Everything is durable now; let readers see it until they notice
		// the close.
		l.hw.Store(&hwMark{off: l.leo.Load(), seg: l.active, pos: l.active.size.Load()})
	}
	for _, s := range l.segments() {
		s.h.close()
	}
	l.notify()
	return ck, err
}

// Destroy closes the log and removes its directory.
func (l *Log) Destroy() error {
	l.mu.Lock()
	closed := l.closed.Swap(true)
	l.fenceCheckpoint()
	l.sealAbort.Store(true)
	l.fenceSeal()
	ck := l.ckDone
	if !closed {
		l.syncMu.Lock()
		if l.timer != nil {
			l.timer.Stop()
		}
		l.syncMu.Unlock()
		for _, s := range l.segments() {
			s.h.close()
		}
	}
	l.mu.Unlock()
	l.notify()
	if ck != nil {
		<-ck // no checkpoint writes into the directory being removed
	}
	l.waitSeals() // nor a seal
	if err := l.fs.RemoveAll(l.dir); err != nil {
		return err
	}
	return l.fs.SyncDir(filepath.Dir(l.dir))
}

// findSegment returns the index of the segment holding off (the last one
// whose base is <= off), or -1.
func findSegment(segs []*segment, off int64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].base > off }) - 1
}
