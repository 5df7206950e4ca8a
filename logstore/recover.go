package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// RecoveryReport says what Open found and repaired.
type RecoveryReport struct {
	Segments       int
	Rescanned      []string     // segment files whose batches were rescanned
	Checkpointed   []string     // of those, active segments rescanned only after their recovery checkpoint
	IndexesRebuilt []string     // segment files whose index files were missing or stale
	Truncated      []Truncation // torn or damaged tails cut off the log (see Unsealed)
	// Unsealed lists the segments before the last, after the last one
	// whose seal is proven, that have no index files proving their seal
	// finished: they were recovered as the log's tail (see doc.go).
	Unsealed       []string
	RemovedFiles   []string // leftover *.tmp, *.deleted and orphan index files
	LogStartOffset int64
	LogEndOffset   int64
}

// Truncation describes data dropped from the end of the log: a segment cut
// at Pos, or (Pos 0, Dropped its size) a whole segment after such a cut.
type Truncation struct {
	File    string
	Pos     int64 // where the file was cut
	Dropped int64 // bytes removed
	Reason  string
}

// Clean reports whether recovery changed nothing that held data.
func (r *RecoveryReport) Clean() bool { return len(r.Truncated) == 0 }

const logStartFile = "logstart"

// Open opens (creating if needed) the log in opts.Dir and recovers it:
// leftover temporary files are removed, index files are loaded or rebuilt,
// the active segment is rescanned unless its index proves it was closed
// cleanly, a torn or damaged tail of the active segment is truncated and
// reported, and damage anywhere else fails with a *CorruptionError.
func Open(opts Options) (*Log, *RecoveryReport, error) {
	l, rep, err := open(opts)
	if err != nil && opts.Listing != nil && errors.Is(err, fs.ErrNotExist) {
		// The listing was stale (a file removed since it was taken):
		// go by the directory.
		opts.Listing = nil
		return open(opts)
	}
	return l, rep, err
}

func open(opts Options) (*Log, *RecoveryReport, error) {
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Files == nil {
		opts.Files = NewFileCache(0)
	}
	if opts.Sync.Mode == SyncInterval && opts.Sync.Interval <= 0 {
		return nil, nil, fmt.Errorf("logstore: sync interval must be positive")
	}
	l := &Log{fs: opts.FS, dir: opts.Dir, logger: opts.Logger, now: opts.Now, files: opts.Files, sync: opts.Sync, smallActive: opts.SmallActiveBytes,
		checkpointBytes: opts.RecoveryCheckpointBytes}
	if l.checkpointBytes == 0 {
		l.checkpointBytes = defaultRecoveryCheckpointBytes
	}
	l.SetConfig(opts.Config)
	rep := &RecoveryReport{}
	if err := l.recover(rep, opts.VerifyAll, opts.CleanShutdown, opts.Listing); err != nil {
		for _, s := range l.segmentsOrNil() {
			s.h.close()
		}
		return nil, nil, err
	}
	rep.LogStartOffset = l.logStart.Load()
	rep.LogEndOffset = l.leo.Load()
	if !rep.Clean() {
		l.logger.Warn("logstore: recovered log with data loss at the tail", "dir", l.dir, "truncated", rep.Truncated)
	}
	return l, rep, nil
}

func (l *Log) segmentsOrNil() []*segment {
	if p := l.segs.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Log) recover(rep *RecoveryReport, verifyAll, clean bool, listing []string) error {
	fsys := l.fs
	// The listing is what recovery goes by: which files to open (a
	// failed open of a missing file costs as much as a good one, times
	// thousands of partitions at start).
	names, err := listing, error(nil)
	switch {
	case listing == nil:
		names, err = fsys.ReadDir(l.dir)
	case !slices.IsSorted(listing):
		names = slices.Sorted(slices.Values(listing)) // ReadDir's order
	}
	if errors.Is(err, fs.ErrNotExist) {
		// A new partition: its directory entry must be durable too.
		if err := fsys.MkdirAll(l.dir, 0o755); err != nil {
			return err
		}
		if err := fsys.SyncDir(filepath.Dir(l.dir)); err != nil {
			return err
		}
		names, err = nil, nil
	}
	if err != nil {
		return err
	}
	// A compaction interrupted by a crash is finished or discarded first
	// (compact_swap.go), so what follows sees plain segments.
	changed, swapped, err := l.finishCompaction(names, rep)
	if err != nil {
		return err
	} else if changed {
		if names, err = fsys.ReadDir(l.dir); err != nil {
			return err
		}
	}
	var bases []int64
	logs := map[int64]bool{}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	removed := false
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".deleted") {
			if err := fsys.Remove(filepath.Join(l.dir, n)); err != nil {
				return err
			}
			rep.RemovedFiles = append(rep.RemovedFiles, n)
			removed = true
			continue
		}
		if b, ok := parseSegName(n, ".log"); ok {
			bases = append(bases, b)
			logs[b] = true
		}
	}
	for _, n := range names {
		for _, ext := range []string{".index", ".timeindex"} {
			if b, ok := parseSegName(n, ext); ok && !logs[b] {
				if err := fsys.Remove(filepath.Join(l.dir, n)); err != nil {
					return err
				}
				rep.RemovedFiles = append(rep.RemovedFiles, n)
				removed = true
			}
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })

	var logStart int64
	if present[logStartFile] {
		if logStart, err = readLogStart(fsys, filepath.Join(l.dir, logStartFile)); err != nil {
			return err
		}
	}

	var segs []*segment
	l.segs.Store(&segs)
	// Every segment is loaded first; nothing on disk changes (but index
	// files of trusted segments rescanned) until the tail is known.
	lds := make([]segLoad, 0, len(bases))
	closeFrom := func(j int) {
		for _, ld := range lds[j:] {
			ld.s.h.close()
		}
	}
	for i, base := range bases {
		indexed := present[filepath.Base(l.path(base, ".index"))] && present[filepath.Base(l.path(base, ".timeindex"))]
		ld, err := l.loadSegment(base, i == len(bases)-1, swapped[base], verifyAll, indexed, rep)
		if err != nil {
			closeFrom(0)
			return err
		}
		lds = append(lds, ld)
	}
	// Seals run in roll order, each finished (its directory fsync too)
	// before the next starts, and recovery seals in order as well: a
	// segment before one whose seal is proven was sealed, fsynced whole,
	// even if its index files are missing or damaged now. Only the
	// unproven segments after the last proven one are the recoverable
	// tail (see Recovery in doc.go).
	lastProven := -1
	for i := range len(lds) - 1 {
		if !lds[i].tolerant {
			lastProven = i
		}
	}
	var toSeal []*segment // segments before the last to give index files, in order
	for i := range lastProven {
		ld := &lds[i]
		if !ld.tolerant {
			continue
		}
		if ld.cut != nil {
			closeFrom(0)
			return &CorruptionError{File: l.path(ld.s.base, ".log"), Pos: ld.s.size.Load(), Err: ld.cut}
		}
		ld.tolerant = false
		toSeal = append(toSeal, ld.s)
	}
	for i := lastProven + 1; i < len(lds)-1; i++ {
		rep.Unsealed = append(rep.Unsealed, filepath.Base(l.path(lds[i].s.base, ".log")))
	}
	for i, ld := range lds {
		s := ld.s
		if len(segs) > 0 {
			prev := segs[len(segs)-1]
			if lds[i-1].tolerant && prev.next.Load() < s.base {
				// An unproven segment that ends before the next one's
				// base lost its last batches whole (compaction cleans
				// only sealed segments): the log ends there.
				closeFrom(i)
				if err := l.dropSegments(bases[i:], "follows a segment that lost its end", rep); err != nil {
					closeFrom(0)
					return err
				}
				break
			}
			if n := prev.next.Load(); n < s.base {
				// Compaction removed the segment's last batches: it
				// covers the offsets up to the next segment.
				prev.next.Store(s.base)
			}
			if prev.next.Load() != s.base {
				closeFrom(0)
				return &CorruptionError{File: l.path(s.base, ".log"), Pos: 0,
					Err: fmt.Errorf("segment starts at offset %d but the previous one ends at %d", s.base, prev.next.Load())}
			}
		}
		segs = append(segs, s)
		if ld.cut != nil {
			// Later segments go first: a crash in between leaves this
			// segment, still damaged, the last one.
			closeFrom(i + 1)
			if err := l.dropSegments(bases[i+1:], "follows a cut in a segment whose seal did not finish", rep); err != nil {
				closeFrom(0)
				return err
			}
			if err := l.cutSegment(s, ld, rep); err != nil {
				closeFrom(0)
				return err
			}
			break
		}
		if ld.tolerant && i < len(lds)-1 {
			toSeal = append(toSeal, s)
		}
	}
	// Segments kept before the last that were not proven sealed now get
	// what their seal would have done: fsync, then the index files that
	// prove it.
	for _, s := range toSeal {
		if s == segs[len(segs)-1] {
			continue // the last one after a cut
		}
		err := l.syncSegment(s)
		if err == nil {
			err = l.writeIndexes(s)
		}
		if err != nil {
			closeFrom(0)
			return err
		}
		rep.IndexesRebuilt = append(rep.IndexesRebuilt, filepath.Base(l.path(s.base, ".log")))
	}
	if len(segs) == 0 {
		s, err := l.createSegment(max(logStart, 0))
		if err != nil {
			return err
		}
		segs = append(segs, s)
		removed = true
	}
	l.segs.Store(&segs)
	l.active = segs[len(segs)-1]
	rep.Segments = len(segs)
	leo := l.active.next.Load()
	if logStart < segs[0].base {
		logStart = segs[0].base
	}
	if logStart > leo {
		// The data DeleteRecords had cut up to was lost with an unsynced tail.
		logStart = leo
	}
	l.leo.Store(leo)
	l.logStart.Store(logStart)
	l.hw.Store(&hwMark{off: leo, seg: l.active, pos: l.active.size.Load()})
	if len(rep.Truncated) > 0 || len(rep.Rescanned) > 0 && !clean {
		// Make what recovery kept durable before exposing it as the high
		// watermark, which WaitDurable callers rely on (after a clean
		// shutdown it is durable already: Close synced it).
		f, err := l.active.h.acquire()
		if err != nil {
			return err
		}
		err = f.Sync()
		l.active.h.release()
		if err != nil {
			return err
		}
	}
	// After a crash the active segment's directory entry may not be
	// durable yet (its roll left that to the old segment's seal).
	if removed || len(rep.IndexesRebuilt) > 0 || len(rep.Rescanned) > 0 && !clean || len(rep.Unsealed) > 0 {
		if err := fsys.SyncDir(l.dir); err != nil {
			return err
		}
	}
	return nil
}

func parseSegName(name, ext string) (int64, bool) {
	if !strings.HasSuffix(name, ext) || len(name) != 20+len(ext) {
		return 0, false
	}
	b, err := strconv.ParseInt(name[:20], 10, 64)
	return b, err == nil && b >= 0
}

// segLoad is what loadSegment found.
type segLoad struct {
	s *segment
	// tolerant: not proven sealed, or the last segment: loaded as part of
	// the recoverable tail, a bad batch is a cut, not an error.
	tolerant bool
	// cut: a bad or incomplete batch at s.size ends the log; the file
	// (fileSize bytes) is not truncated yet (cutSegment).
	cut      error
	fileSize int64
}

// loadSegment opens one segment. A segment before the last whose index
// files prove its seal finished (no snapshot flag, size and next offset
// matching, checksums holding) is trusted and its index files loaded; with
// verifyAll, or if compaction's recovery just installed it (swapped), it is
// rescanned and a bad batch is a *CorruptionError. Any other segment is
// loaded tolerant (recover decides whether it is part of the tail): index
// files describing all of it or a prefix (written after the bytes they
// describe were fsynced) are trusted for what they describe, the rest is
// rescanned, and a bad batch is reported in segLoad.cut. Nothing on disk is
// changed except index files of a rescanned proven segment.
func (l *Log) loadSegment(base int64, last, swapped, verifyAll, indexed bool, rep *RecoveryReport) (segLoad, error) {
	name := l.path(base, ".log")
	f, err := l.fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return segLoad{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return segLoad{}, err
	}
	size := st.Size()
	h := l.files.handle(l.fs, name)
	h.setFile(f)
	s := newSegment(base, h)
	s.onFinal = l.finalSegment
	cfg := l.config()
	interval := int64(cfg.IndexIntervalBytes)
	ld := segLoad{s: s, tolerant: last, fileSize: size}
	trusted := func() (segLoad, error) {
		s.size.Store(size)
		s.diskIndex.Store(size)
		if last && size > 0 {
			s.created = l.now()
		}
		return ld, nil
	}

	if !last {
		proven := swapped
		if !proven && indexed {
			probe := s
			if verifyAll {
				probe = newSegment(base, nil) // only the proof; s is rescanned
			}
			if _, sealed, ok := l.loadIndexes(probe, size, false); ok {
				if sealed {
					if !verifyAll {
						return trusted()
					}
					proven = true
				} else if !verifyAll {
					// Snapshot files matching the whole file: its
					// bytes are durable, its seal is not proven.
					ld.tolerant = true
					return trusted()
				}
			}
		}
		ld.tolerant = !proven
	}

	// A tail segment may carry a recovery checkpoint: index files for a
	// prefix of it, written after that prefix was fsynced; only the rest
	// is rescanned.
	from, next := int64(0), base
	if ld.tolerant && !verifyAll && indexed {
		if described, _, ok := l.loadIndexes(s, size, true); ok {
			if described == size {
				return trusted()
			}
			from, next = described, s.next.Load()
			s.diskIndex.Store(described)
			rep.Checkpointed = append(rep.Checkpointed, filepath.Base(name))
		}
	}
	rep.Rescanned = append(rep.Rescanned, filepath.Base(name))
	rf, err := h.acquire()
	if err != nil {
		h.close()
		return segLoad{}, err
	}
	res := scanBatchesFrom(rf, from, size, next, true, func(b batchInfo) {
		s.noteBatch(b.pos, b.base, b.size, b.maxTs, interval)
	})
	h.release()
	if res.err != nil && !errors.Is(res.err, errTorn) && !errors.Is(res.err, errBadBatch) {
		h.close()
		return segLoad{}, fmt.Errorf("logstore: reading %s at %d: %w", name, res.end, res.err)
	}
	if res.err != nil && !ld.tolerant {
		// Sealed segments were fsynced before their seal wrote the
		// index files: damage there is not a torn write.
		h.close()
		return segLoad{}, &CorruptionError{File: name, Pos: res.end, Err: res.err}
	}
	s.size.Store(res.end)
	s.next.Store(res.next)
	if (last || res.err != nil) && res.end > 0 {
		s.created = l.now()
	}
	ld.cut = res.err
	if !ld.tolerant {
		if err := l.writeIndexes(s); err != nil {
			h.close()
			return segLoad{}, err
		}
		rep.IndexesRebuilt = append(rep.IndexesRebuilt, filepath.Base(name))
	}
	return ld, nil
}

// cutSegment truncates a tail segment at its first bad batch (s.size),
// its index files removed first, and fsyncs it.
func (l *Log) cutSegment(s *segment, ld segLoad, rep *RecoveryReport) error {
	name := l.path(s.base, ".log")
	end := s.size.Load()
	rep.Truncated = append(rep.Truncated, Truncation{File: filepath.Base(name), Pos: end, Dropped: ld.fileSize - end, Reason: ld.cut.Error()})
	l.logger.Warn("logstore: truncating damaged tail", "file", name, "pos", end, "dropped", ld.fileSize-end, "reason", ld.cut)
	// Stale index files must go before the log changes size.
	l.removeIndexes(s.base)
	s.diskIndex.Store(-1)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return err
	}
	wf, err := s.h.acquire()
	if err != nil {
		return err
	}
	err = wf.Truncate(end)
	if err == nil {
		err = wf.Sync()
	}
	s.h.release()
	return err
}

// dropSegments removes the files of the segments at bases (after a cut in
// the tail), last first, and fsyncs the directory.
func (l *Log) dropSegments(bases []int64, reason string, rep *RecoveryReport) error {
	if len(bases) == 0 {
		return nil
	}
	for i := len(bases) - 1; i >= 0; i-- {
		name := l.path(bases[i], ".log")
		var size int64
		if fi, err := l.fs.Stat(name); err == nil {
			size = fi.Size()
		}
		l.removeIndexes(bases[i])
		if err := l.fs.Remove(name); err != nil {
			return err
		}
		l.logger.Warn("logstore: removing a segment after a cut", "file", name, "dropped", size, "reason", reason)
		rep.Truncated = append(rep.Truncated, Truncation{File: filepath.Base(name), Pos: 0, Dropped: size, Reason: reason})
	}
	return l.fs.SyncDir(l.dir)
}

// loadIndexes loads s's index files if both are valid for a log of size
// bytes, or, with prefix, for its first bytes (a recovery checkpoint, or
// a snapshot written at Close); it returns the size they describe and
// whether they prove a finished seal (whole file, no snapshot flag). It
// restores the segment's next offset and timestamp maximum as of that size.
func (l *Log) loadIndexes(s *segment, size int64, prefix bool) (described int64, sealed, ok bool) {
	fileSize := size
	ob, err := readFile(l.fs, l.path(s.base, ".index"))
	if err != nil {
		return 0, false, false
	}
	oh, idx, err := decodeOffsetIndex(ob)
	// An empty segment ends at its base, unless compaction emptied it: then
	// it still covers the offsets up to the next segment.
	fits := oh.logSize == size || prefix && oh.logSize > 0 && oh.logSize < size
	if err != nil || !fits || oh.next < s.base || (oh.logSize > 0 && oh.next == s.base) {
		return 0, false, false
	}
	tb, err := readFile(l.fs, l.path(s.base, ".timeindex"))
	if err != nil {
		return 0, false, false
	}
	th, tidx, err := decodeTimeIndex(tb)
	if err != nil || th.logSize != oh.logSize || th.next != oh.next {
		return 0, false, false
	}
	size = oh.logSize
	s.idx = idx
	s.tidx = tidx
	if n := len(tidx); n > 0 {
		e := tidx[n-1]
		s.maxTs, s.maxTsBase, s.maxTsPos = e.ts, s.base+int64(e.rel), int64(e.pos)
	}
	s.next.Store(oh.next)
	// Appends continue the interval counting from the end of the file.
	if n := len(idx); n > 0 {
		s.sinceIdx = size - int64(idx[n-1].pos)
	} else {
		s.sinceIdx = size
	}
	if n := len(tidx); n > 0 {
		s.sinceTidx = size - int64(tidx[n-1].pos)
	} else {
		s.sinceTidx = size
	}
	return size, oh.logSize == fileSize && !oh.snapshot && !th.snapshot, true
}

func (l *Log) removeIndexes(base int64) {
	for _, ext := range []string{".index", ".timeindex"} {
		if err := l.fs.Remove(l.path(base, ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.logger.Warn("logstore: removing index", "file", l.path(base, ext), "err", err)
		}
	}
}

func readFile(fsys vfs.FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > 1<<30 {
		return nil, fmt.Errorf("logstore: %s is implausibly large", name)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// The logstart file: "MKLS", version 1, 3 zero bytes, int64 offset, CRC32C
// of the preceding 16 bytes. Written by atomic replace.
const logStartLen = 20

func encodeLogStart(off int64) []byte {
	b := make([]byte, logStartLen)
	copy(b, "MKLS")
	b[4] = 1
	binary.BigEndian.PutUint64(b[8:], uint64(off))
	binary.BigEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	return b
}

func readLogStart(fsys vfs.FS, name string) (int64, error) {
	b, err := readFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(b) != logStartLen || string(b[:4]) != "MKLS" || b[4] != 1 || crc32.Checksum(b[:16], castagnoli) != binary.BigEndian.Uint32(b[16:]) {
		// Written by atomic replace, so damage is not a torn write.
		return 0, &CorruptionError{File: name, Pos: 0, Err: errors.New("bad log start offset file")}
	}
	return int64(binary.BigEndian.Uint64(b[8:])), nil
}
