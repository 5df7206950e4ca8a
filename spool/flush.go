package spool

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// The flusher is a pipeline so that compressing and encrypting batches
// (on up to Options.Encoders goroutines at once) overlaps with writing and
// fsyncing earlier ones:
//
//	sealed batches ─► encodeLoop ─(work)─► encoders ─┐
//	                       └──(futures, in order)──► writeLoop ─► commit under mu
//
// encodeLoop hands out batches strictly in sequence order and queues one
// future per batch in the same order, so the writer writes and commits in
// sequence order whichever encoder finishes first. Nothing holds mu across
// encoding or I/O. The writer fsyncs each segment file but the directory
// once for all segments it has ready.
const pipelineDepth = 4

// job is one encoded batch on its way to disk.
type job struct {
	b       *batch
	seg     segment
	data    []byte // segment file bytes; nil when skipped or failed
	skipped bool   // entirely acknowledged before it was written
	err     error  // encoding failure
}

// encodeLoop seals batches on the interval and flush triggers and encodes
// sealed batches in order.
func (s *Spool) encodeLoop() {
	defer close(s.jobs)
	defer close(s.work)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		s.mu.Lock()
		// Seal on a trigger only when the pipeline is empty: while it is
		// busy, appends keep filling the open batch, so that waiters share
		// the next write (group commit).
		if s.open != nil && (s.closing || (len(s.sealed) == 0 &&
			(s.wantFlush || (s.opts.FlushInterval > 0 && time.Since(s.open.started) >= s.opts.FlushInterval)))) {
			s.wantFlush = false
			s.sealLocked()
		}
		if s.inPipe < len(s.sealed) && s.err == nil {
			b := s.sealed[s.inPipe]
			s.inPipe++
			acked := s.acked
			s.mu.Unlock()
			// bufs bounds the batches in flight; both channels have room
			// for that many, so neither send blocks for long.
			w := work{b: b, acked: acked, buf: <-s.bufs, out: make(chan job, 1)}
			s.work <- w
			s.jobs <- w.out
			continue
		}
		if s.closing && (s.err != nil || (s.open == nil && s.inPipe == len(s.sealed))) {
			s.mu.Unlock()
			return
		}
		if s.open == nil && len(s.sealed) == 0 {
			// Idle: do not hold batch or file buffers.
			s.free = nil
			for range len(s.bufs) {
				select {
				case <-s.bufs: // exchanged for nil; never blocks, there is room
					s.bufs <- nil
				default:
				}
			}
		}
		var deadline <-chan time.Time
		if s.open != nil && s.opts.FlushInterval > 0 && s.err == nil {
			timer.Reset(time.Until(s.open.started.Add(s.opts.FlushInterval)))
			deadline = timer.C
		}
		s.mu.Unlock()
		select {
		case <-s.kick:
		case <-deadline:
		}
		timer.Stop()
	}
}

// work is one batch to encode; the result goes to out.
type work struct {
	b     *batch
	acked int64
	buf   []byte
	out   chan job
}

// encoder compresses and encrypts batches with its own zstd encoder.
func (s *Spool) encoder(enc *segEncoder) {
	for w := range s.work {
		w.out <- s.encodeBatch(enc, w.b, w.acked, w.buf)
	}
}

// encodeBatch turns b into segment file bytes in buf. A batch entirely
// acknowledged already is skipped: nobody will read it again.
func (s *Spool) encodeBatch(enc *segEncoder, b *batch, acked int64, buf []byte) job {
	if b.next-1 <= acked {
		s.bufs <- buf
		return job{b: b, skipped: true}
	}
	seg := segment{first: b.first, last: b.next - 1, count: int64(len(b.seqs)), encrypted: s.opts.Cipher != nil}
	seg.name = segName(seg.first, seg.last)
	compress := b.packed*10 < len(b.buf)*9
	data, err := enc.encodeMode(buf, seg.first, seg.last, len(b.seqs), b.buf, compress)
	if err != nil {
		s.bufs <- buf
		return job{b: b, err: err}
	}
	seg.size = int64(len(data))
	return job{b: b, seg: seg, data: data}
}

// writeLoop writes encoded batches, grouping those that are ready under one
// directory fsync, and commits them in order.
func (s *Spool) writeLoop() {
	defer close(s.done)
	group := make([]job, 0, pipelineDepth)
	var queue []chan job // futures received, in sequence order
	open := true
	for {
		if len(queue) == 0 {
			out, ok := <-s.jobs
			if !ok {
				break
			}
			queue = append(queue, out)
		}
	drain:
		for open {
			select {
			case out, ok := <-s.jobs:
				if !ok {
					open = false
					break drain
				}
				queue = append(queue, out)
			default:
				break drain
			}
		}
		group = append(group[:0], <-queue[0])
		queue = queue[1:]
	ready: // and whatever else is already encoded, in order
		for len(queue) > 0 {
			select {
			case j := <-queue[0]:
				group = append(group, j)
				queue = queue[1:]
			default:
				break ready
			}
		}
		s.writeGroup(group)
		for i := range group {
			if group[i].data != nil {
				s.bufs <- group[i].data[:0]
			}
			group[i] = job{}
		}
	}
	s.mu.Lock()
	s.broadcastLocked()
	s.mu.Unlock()
}

// writeGroup writes each segment as .tmp, fsync, close, rename
// (vfs.ReplaceFile), then fsyncs the directory once, then commits: only then
// are the records durable.
func (s *Spool) writeGroup(group []job) {
	s.mu.Lock()
	failed := s.err != nil
	s.mu.Unlock()
	if failed {
		return // nothing may be written past a batch that failed
	}
	var err error
	n, renamed := 0, false // group[:n] are written (or skipped)
	for _, j := range group {
		if j.err != nil {
			err = j.err
			break
		}
		if !j.skipped {
			if err = vfs.ReplaceFile(s.fs, filepath.Join(s.dir, j.seg.name), j.data, 0o644); err != nil {
				break
			}
			renamed = true
		}
		n++
	}
	if renamed {
		if serr := s.fs.SyncDir(s.dir); serr != nil {
			// The renames may or may not survive a crash; the files are
			// whole either way, so leaving them is safe. Not reporting them
			// durable is what matters.
			err, n = serr, 0
		}
	}
	s.mu.Lock()
	var lastSeg int64 = -1
	for _, j := range group[:n] {
		s.commitLocked(j)
		if !j.skipped {
			lastSeg = j.seg.last
		}
	}
	if err != nil {
		b := group[n].b
		// Sticky: later batches must not be written past a hole, and after a
		// failed fsync the page cache cannot be trusted. The records stay
		// readable in memory; reopening the spool is the way out.
		s.err = fmt.Errorf("spool: flushing [%d..%d]: %w", b.first, b.next-1, err)
		s.log.Error("spool: flush failed; spool refuses writes until reopened", "err", err)
		s.broadcastLocked()
	}
	acked := s.acked
	s.mu.Unlock()
	s.wake() // the encoder may seal the open batch now that the pipeline drained
	if lastSeg >= 0 && lastSeg <= acked {
		// Acknowledged while being written: DeleteAcked could not see it.
		if _, err := s.DeleteAcked(acked); err != nil {
			s.log.Warn("spool: deleting acknowledged segment", "err", err)
		}
	}
}

// commitLocked registers the oldest sealed batch as durable.
// REQUIRES: s.mu held; j.b == s.sealed[0].
func (s *Spool) commitLocked(j job) {
	b := j.b
	s.sealed[0] = nil
	s.sealed = s.sealed[1:]
	s.inPipe--
	s.used -= b.reserved
	if !j.skipped {
		s.segs = append(s.segs, j.seg)
		s.used += j.seg.size
		s.disk += j.seg.size
		s.diskRecs += j.seg.count
	}
	s.durable = b.next
	s.sealedBytes -= len(b.buf)
	s.recycleLocked(b)
	s.broadcastLocked()
}
