package logstore

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"time"

	"github.com/minikafka/minikafka/internal/records"
)

// cleanerState is a log's compaction bookkeeping: mu serializes Compact
// calls; firstDirty and horizon mirror the cleanpoint file, read lazily.
type cleanerState struct {
	mu         sync.Mutex
	loaded     bool
	firstDirty int64 // offsets below were covered by a completed clean's offset map
	horizon    int64 // earliest delete horizon of a kept tombstone or marker; MaxInt64 if none
}

const cleanPointFile = "cleanpoint"

// The cleanpoint file: "MKCP", version 1, 3 zero bytes, int64 first dirty
// offset, int64 earliest delete horizon, CRC32C of the first 24 bytes.
const cleanPointLen = 28

func encodeCleanPoint(firstDirty, horizon int64) []byte {
	b := make([]byte, cleanPointLen)
	copy(b, "MKCP")
	b[4] = 1
	binary.BigEndian.PutUint64(b[8:], uint64(firstDirty))
	binary.BigEndian.PutUint64(b[16:], uint64(horizon))
	binary.BigEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	return b
}

// loadCleanPoint reads the cleanpoint file once. A missing or damaged file
// means "nothing cleaned yet": the next clean maps the whole log again,
// which costs time but loses nothing. Callers hold c.mu.
func (l *Log) loadCleanPoint() {
	c := &l.cleaner
	if c.loaded {
		return
	}
	c.loaded = true
	c.firstDirty, c.horizon = 0, math.MaxInt64
	b, err := readFile(l.fs, filepath.Join(l.dir, cleanPointFile))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil || len(b) != cleanPointLen || string(b[:4]) != "MKCP" || b[4] != 1 ||
		crc32.Checksum(b[:24], castagnoli) != binary.BigEndian.Uint32(b[24:]) {
		l.logger.Warn("logstore: ignoring unreadable cleanpoint file; the log will be cleaned from its start", "dir", l.dir, "err", err)
		return
	}
	c.firstDirty = int64(binary.BigEndian.Uint64(b[8:]))
	c.horizon = int64(binary.BigEndian.Uint64(b[16:]))
}

// CleanState describes what a compaction of the log would work on, for
// choosing which log to clean (Kafka's cleanable ratio).
type CleanState struct {
	// FirstDirty is where the last clean's offset map stopped: records
	// below it have been deduplicated against everything up to it.
	FirstDirty int64
	// FirstUncleanable bounds cleaning: the active segment's base, the
	// high watermark (the base of a segment reaching past it),
	// CompactOptions.MaxOffset (the last stable offset), the first segment
	// whose seal has not finished and the first segment newer than
	// min.compaction.lag.ms.
	FirstUncleanable int64
	// CleanBytes and DirtyBytes sum the sealed segments below
	// FirstUncleanable that end at or below FirstDirty, and the rest.
	CleanBytes, DirtyBytes int64
	// FirstDirtyTimestamp is the max timestamp of the first dirty batch
	// (for max.compaction.lag.ms), -1 if nothing is dirty.
	FirstDirtyTimestamp int64
	// DeleteHorizon is the earliest time (Unix ms) at which a kept
	// tombstone or transaction marker becomes removable, MaxInt64 if none.
	DeleteHorizon int64
}

// DirtyRatio is DirtyBytes / (CleanBytes + DirtyBytes), 0 for an empty log.
func (s CleanState) DirtyRatio() float64 {
	if s.CleanBytes+s.DirtyBytes == 0 {
		return 0
	}
	return float64(s.DirtyBytes) / float64(s.CleanBytes+s.DirtyBytes)
}

// CleanState reports the log's cleanable state at now. It first waits for
// a running seal, as Compact does: a segment rolled just before is
// cleanable once sealed, and the cleaner (its only caller, off the produce
// path) should judge the log it is about to compact, not skip a round
// because a seal's fsync had not finished yet.
func (l *Log) CleanState(now time.Time, minLag time.Duration, maxOffset int64) CleanState {
	l.waitSeals()
	l.cleaner.mu.Lock()
	l.loadCleanPoint()
	fd, hz := l.cleaner.firstDirty, l.cleaner.horizon
	l.cleaner.mu.Unlock()
	segs := l.segments()
	fd = l.clampDirty(segs, fd)
	st := CleanState{FirstDirty: fd, DeleteHorizon: hz, FirstDirtyTimestamp: -1}
	st.FirstUncleanable = l.firstUncleanable(segs, fd, now, minLag, maxOffset)
	for _, s := range segs[:len(segs)-1] {
		if s.base >= st.FirstUncleanable {
			break
		}
		if s.next.Load() <= fd {
			st.CleanBytes += s.size.Load()
			continue
		}
		st.DirtyBytes += s.size.Load()
		if st.FirstDirtyTimestamp < 0 {
			st.FirstDirtyTimestamp = l.firstBatchMaxTs(s, fd)
		}
	}
	return st
}

// clampDirty keeps a first dirty offset inside the log (DeleteRecords,
// retention or truncation may have moved the log's ends).
func (l *Log) clampDirty(segs []*segment, fd int64) int64 {
	fd = max(fd, segs[0].base, l.logStart.Load())
	return min(fd, l.leo.Load())
}

// firstUncleanable is the first offset compaction must not touch.
func (l *Log) firstUncleanable(segs []*segment, fd int64, now time.Time, minLag time.Duration, maxOffset int64) int64 {
	hw := l.HighWatermark()
	u := min(segs[len(segs)-1].base, hw)
	// A rolled segment is cleanable once its seal finished (compaction
	// never touches a segment a seal may still write index files for, nor
	// one recovery could still cut) and it lies wholly below the high
	// watermark (under SyncAlways its tail may not be durable yet).
	for _, s := range segs[:len(segs)-1] {
		if s.base >= u {
			break
		}
		if s.unsealed.Load() || s.next.Load() > hw {
			u = s.base
			break
		}
	}
	if maxOffset > 0 {
		u = min(u, maxOffset)
	}
	if minLag > 0 {
		limit := now.Add(-minLag).UnixMilli()
		for _, s := range segs[:len(segs)-1] {
			if s.base >= u {
				break
			}
			if s.next.Load() <= fd {
				continue
			}
			s.mu.RLock()
			ts := s.maxTs
			s.mu.RUnlock()
			if ts > limit {
				u = min(u, s.base)
				break
			}
		}
	}
	return u
}

// firstBatchMaxTs returns the max timestamp of the first batch of s whose
// last offset is >= off, or -1.
func (l *Log) firstBatchMaxTs(s *segment, off int64) int64 {
	if !s.tryRef() {
		return -1
	}
	defer s.unref()
	f, err := s.h.acquire()
	if err != nil {
		return -1
	}
	defer s.h.release()
	size := s.size.Load()
	pos, err := s.findPos(f, off, size)
	if err != nil || pos >= size {
		return -1
	}
	var hb [records.BatchHeaderLen]byte
	h, err := readHeader(f, pos, &hb)
	if err != nil {
		return -1
	}
	return h.MaxTimestamp
}
