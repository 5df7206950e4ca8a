package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// Codec selects how segment payloads are compressed. The zero value is zstd.
type Codec int

const (
	CodecZstd Codec = iota // zstd, fastest level (default)
	CodecNone              // store records uncompressed
)

// Options configure a Spool. Zero values take the defaults noted.
type Options struct {
	FS  vfs.FS // nil: vfs.Default
	Dir string // required; created if missing

	// MaxBytes bounds the spool: bytes on disk plus bytes reserved by records
	// not yet flushed. Append fails with ErrFull rather than exceed it
	// (AppendPastLimit may, by its record's size). Default 1 GiB.
	MaxBytes int64
	// A batch is sealed into one segment when it holds BatchRecords records
	// (default 16384) or BatchBytes bytes of framed records (default 4 MiB),
	// when FlushInterval (default 100 ms; negative: never) has passed since
	// its first record, on Flush, or when WaitDurable asks for one of its
	// records.
	BatchRecords  int
	BatchBytes    int
	FlushInterval time.Duration
	// MaxBufferedBytes bounds the records sealed in memory and waiting for
	// the flusher (default 4 × BatchBytes). When appends outrun the disk,
	// Append waits for the flusher rather than buffer without limit: memory
	// stays bounded and flushed buffers are reused.
	MaxBufferedBytes int
	// MaxRecordBytes bounds one record (default 16 MiB).
	MaxRecordBytes int
	// MaxDecodedBytes bounds the decoded payload of one segment: reading a
	// segment that claims more is refused before allocating. Default (and
	// minimum) BatchBytes + MaxRecordBytes + 32, the most a batch can hold.
	MaxDecodedBytes int

	Compression Codec
	// Precompressed, when set, reports whether a record's bytes are
	// already compressed (a Kafka batch compressed by its producer). A
	// segment whose records are at least 90 % precompressed bytes is
	// stored without zstd: compressing it again costs CPU and saves
	// little.
	Precompressed func(record []byte) bool
	Cipher        Cipher // nil: segments are not encrypted
	// Encoders is how many batches may be compressed and encrypted at
	// once (default min(2, GOMAXPROCS)); each has its own zstd encoder.
	Encoders int

	// StartSeq is the first sequence number of a spool that has never held
	// a record. Ignored once the directory has state.
	StartSeq int64
	Logger   *slog.Logger // nil: discard
}

func (o *Options) setDefaults() error {
	if o.Dir == "" {
		return errors.New("spool: Options.Dir is required")
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 1 << 30
	}
	if o.BatchRecords == 0 {
		o.BatchRecords = 16384
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = 4 << 20
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = 100 * time.Millisecond
	}
	if o.MaxBufferedBytes == 0 {
		o.MaxBufferedBytes = 4 * o.BatchBytes
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = 16 << 20
	}
	if minDec := o.BatchBytes + o.MaxRecordBytes + 32; o.MaxDecodedBytes < minDec {
		o.MaxDecodedBytes = minDec
	}
	if o.Encoders == 0 {
		o.Encoders = min(2, runtime.GOMAXPROCS(0))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.MaxBytes < 0 || o.BatchRecords < 0 || o.BatchBytes < 0 || o.MaxRecordBytes < 0 || o.MaxBufferedBytes < 0 || o.Encoders < 0:
		return errors.New("spool: negative size option")
	case o.StartSeq < 0:
		return errors.New("spool: negative StartSeq")
	case o.Compression != CodecZstd && o.Compression != CodecNone:
		return fmt.Errorf("spool: unknown codec %d", o.Compression)
	case int64(o.MaxDecodedBytes) > math.MaxUint32:
		return errors.New("spool: batches must stay below 4 GiB")
	}
	return nil
}

// Record is one spooled record. It occupies sequence numbers
// [Seq, Seq+Span-1]; Data must not be modified (it may be shared with other
// readers).
type Record struct {
	Seq  int64
	Span int
	Data []byte
}

// Last is the last sequence number the record occupies.
func (r Record) Last() int64 { return r.Seq + int64(r.Span) - 1 }

// segment is a durable segment file.
type segment struct {
	first, last int64
	count       int64
	size        int64 // file bytes
	encrypted   bool
	name        string // base name
}

// batch is an in-memory run of records that becomes one segment. Its
// buffers are reused once it is flushed, so nothing may keep slices of them.
type batch struct {
	first, next int64    // sequence range [first, next)
	buf         []byte   // framed records, exactly the segment's raw payload
	seqs        []int64  // first sequence of each record
	offs        []uint32 // offset of each record's frame in buf
	reserved    int64    // bytes reserved against MaxBytes
	packed      int      // bytes of records Options.Precompressed reported
	started     time.Time
}

// Spool is a bounded, durable queue of byte records; see the package doc.
type Spool struct {
	opts Options
	fs   vfs.FS
	dir  string
	log  *slog.Logger
	dec  *segDecoder
	// segOverhead is reserved per batch on top of its records: header plus
	// cipher overhead, the most a segment adds to its raw payload.
	segOverhead int64

	// ackMu serialises DeleteAcked (marker file, removals) without holding mu
	// across that I/O. Lock order: ackMu before mu.
	ackMu     sync.Mutex
	markerSeq int64 // acked sequence recorded by the newest marker file; -1 none

	cacheMu sync.Mutex // guards the one decoded segment kept for sequential readers
	cache   struct {
		name string
		recs []Record
	}

	kick chan struct{} // wakes the encoder stage; capacity 1
	done chan struct{} // closed when the writer stage exits
	work chan work     // encodeLoop → encoders
	jobs chan chan job // encodeLoop → writer: one future per batch, in sequence order
	bufs chan []byte   // file buffers; bounds the batches in flight

	mu          sync.Mutex
	open        *batch   // batch taking appends; nil when empty
	sealed      []*batch // handed to the flusher, oldest first; still readable
	inPipe      int      // sealed[:inPipe] are being encoded or written
	sealedBytes int      // bytes of records in sealed batches
	segs        []segment
	nextSeq     int64
	durable     int64 // every sequence < durable is in a durable segment or acknowledged
	acked       int64 // highest acknowledged sequence; Head() == acked+1
	used        int64 // disk + reserved
	disk        int64
	diskRecs    int64
	err         error // sticky: the first flush failure
	closing     bool
	wantFlush   bool // a WaitDurable is waiting on the open batch
	hintBytes   int  // size of the last sealed batch, to size the next
	hintRecords int
	free        []batch       // buffers of flushed batches, for reuse
	durableCh   chan struct{} // closed and replaced whenever durable, err or closing change
	appendCh    chan struct{} // closed and replaced on append, if someone is watching
	watched     bool          // Changed was called since appendCh was last closed
	corrupt     []CorruptSegment
}

// Open recovers the spool in opts.Dir (see recover.go) and starts its
// flusher. The report says what recovery removed and set aside.
func Open(opts Options) (*Spool, *RecoveryReport, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, nil, err
	}
	s := &Spool{
		opts:      opts,
		fs:        opts.FS,
		dir:       opts.Dir,
		log:       opts.Logger,
		kick:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		durableCh: make(chan struct{}),
		appendCh:  make(chan struct{}),
		markerSeq: -1,
	}
	s.segOverhead = headerLen
	if opts.Cipher != nil {
		s.segOverhead += int64(opts.Cipher.Overhead())
	}
	var err error
	if s.dec, err = newSegDecoder(opts.Cipher, opts.MaxDecodedBytes); err != nil {
		return nil, nil, err
	}
	encs := make([]*segEncoder, opts.Encoders)
	for i := range encs {
		if encs[i], err = newSegEncoder(opts.Compression, opts.Cipher); err != nil {
			return nil, nil, err
		}
	}
	rep, err := s.recover()
	if err != nil {
		return nil, rep, err
	}
	s.jobs = make(chan chan job, pipelineDepth)
	s.work = make(chan work, pipelineDepth)
	s.bufs = make(chan []byte, pipelineDepth)
	for range pipelineDepth {
		s.bufs <- nil
	}
	for _, enc := range encs {
		go s.encoder(enc)
	}
	go s.encodeLoop()
	go s.writeLoop()
	return s, rep, nil
}

// Append adds a record occupying one sequence number and returns it.
// See AppendSpan.
func (s *Spool) Append(data []byte) (int64, error) { return s.AppendSpan(data, 1) }

// AppendSpan adds a record occupying span consecutive sequence numbers (a
// Kafka batch of span records) and returns the first. The record is held in
// memory until its batch is flushed: it is readable at once but durable only
// once WaitDurable(seq) returns nil. data is copied. AppendSpan does not wait
// for the disk unless the flusher is MaxBufferedBytes behind; it fails at
// once with ErrFull when the spool is full.
func (s *Spool) AppendSpan(data []byte, span int) (int64, error) {
	return s.appendSpan(data, span, false)
}

// AppendPastLimit is Append for a small record the spool must take even
// when full: one whose refusal would keep the spool from ever draining
// (a Kafka transaction marker, without which the records before it can
// never be shipped). It may take the spool past MaxBytes by its size.
func (s *Spool) AppendPastLimit(data []byte) (int64, error) {
	return s.appendSpan(data, 1, true)
}

func (s *Spool) appendSpan(data []byte, span int, pastLimit bool) (int64, error) {
	if span < 1 || span > math.MaxInt32 {
		return 0, fmt.Errorf("spool: span %d out of range [1, 2^31)", span)
	}
	if len(data) > s.opts.MaxRecordBytes {
		return 0, fmt.Errorf("%w: %d bytes, MaxRecordBytes is %d", ErrTooLarge, len(data), s.opts.MaxRecordBytes)
	}
	need := int64(frameLen(span, len(data)))
	packed := s.opts.Precompressed != nil && s.opts.Precompressed(data)
	s.mu.Lock()
	for s.sealedBytes >= s.opts.MaxBufferedBytes && s.err == nil && !s.closing {
		// The flusher is behind: wait for it to commit a segment.
		ch := s.durableCh
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	if s.closing {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, err
	}
	if s.nextSeq > math.MaxInt64-int64(span) {
		s.mu.Unlock()
		return 0, errors.New("spool: sequence numbers exhausted")
	}
	b := s.open
	if b != nil && len(b.buf)+int(need) > s.opts.BatchBytes {
		s.sealLocked()
		b = nil
	}
	res := need
	if b == nil {
		res += s.segOverhead
	}
	if s.used+res > s.opts.MaxBytes && !pastLimit {
		used := s.used
		s.mu.Unlock()
		if need+s.segOverhead > s.opts.MaxBytes {
			return 0, fmt.Errorf("%w: %d bytes cannot fit in MaxBytes %d", ErrTooLarge, len(data), s.opts.MaxBytes)
		}
		return 0, &FullError{Need: res, Used: used, Max: s.opts.MaxBytes}
	}
	if b == nil {
		b = s.newBatchLocked()
		s.open = b
		if s.opts.FlushInterval > 0 {
			s.wake() // so the flusher arms the interval timer
		}
	}
	seq := s.nextSeq
	b.seqs = append(b.seqs, seq)
	b.offs = append(b.offs, uint32(len(b.buf)))
	b.buf = appendFrame(b.buf, span, data)
	if packed {
		b.packed += len(data)
	}
	s.nextSeq += int64(span)
	b.next = s.nextSeq
	b.reserved += res
	s.used += res
	if s.watched {
		close(s.appendCh)
		s.appendCh, s.watched = make(chan struct{}), false
	}
	if len(b.seqs) >= s.opts.BatchRecords || len(b.buf) >= s.opts.BatchBytes {
		s.sealLocked()
	}
	s.mu.Unlock()
	return seq, nil
}

// newBatchLocked starts a batch sized like the previous one: under load
// batches fill up and growing a multi-megabyte buffer by append would copy
// it several times over; a trickle of small batches stays small.
// REQUIRES: s.mu held.
func (s *Spool) newBatchLocked() *batch {
	bytes := min(max(s.hintBytes+s.hintBytes/8, 4<<10), s.opts.BatchBytes+(64<<10))
	n := min(max(s.hintRecords+s.hintRecords/8, 16), s.opts.BatchRecords)
	b := &batch{first: s.nextSeq, next: s.nextSeq, started: time.Now()}
	// Reuse a flushed batch's memory when it is big enough: fresh
	// multi-megabyte buffers cost a page fault every 4 KiB on first touch,
	// which at a million records a second is most of the append cost.
	// A buffer much larger than needed is dropped instead, so that a spool
	// whose load fell does not keep megabytes per batch alive.
	for k := len(s.free); k > 0; k = len(s.free) {
		f := s.free[k-1]
		s.free = s.free[:k-1]
		if c := cap(f.buf); c >= bytes && c <= 2*bytes+(64<<10) {
			b.buf, b.seqs, b.offs = f.buf[:0], f.seqs[:0], f.offs[:0]
			return b
		}
	}
	b.buf, b.seqs, b.offs = make([]byte, 0, bytes), make([]int64, 0, n), make([]uint32, 0, n)
	return b
}

// recycleLocked keeps a flushed batch's buffers for reuse. Safe because
// nothing outside the spool ever aliases them: Read copies records out of
// memory batches. REQUIRES: s.mu held.
func (s *Spool) recycleLocked(b *batch) {
	if len(s.free) < 2 {
		s.free = append(s.free, batch{buf: b.buf, seqs: b.seqs, offs: b.offs})
	}
	b.buf, b.seqs, b.offs = nil, nil, nil
}

// sealLocked hands the open batch to the flusher. REQUIRES: s.mu held.
func (s *Spool) sealLocked() {
	if s.open == nil {
		return
	}
	s.hintBytes, s.hintRecords = len(s.open.buf), len(s.open.seqs)
	s.sealedBytes += len(s.open.buf)
	s.sealed = append(s.sealed, s.open)
	s.open = nil
	s.wake()
}

func (s *Spool) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// broadcastLocked wakes every WaitDurable. REQUIRES: s.mu held.
func (s *Spool) broadcastLocked() {
	close(s.durableCh)
	s.durableCh = make(chan struct{})
}

// Flush seals the records appended so far and waits until they are durable.
func (s *Spool) Flush() error {
	s.mu.Lock()
	s.sealLocked()
	target := s.nextSeq - 1
	s.mu.Unlock()
	return s.WaitDurable(context.Background(), target)
}

// WaitDurable blocks until sequence seq is durable: written to a segment
// file that was fsynced and whose rename was fsynced (or acknowledged, which
// makes durability moot). It asks the flusher to seal the open batch if seq
// is in it; concurrent waiters share one segment write (group commit).
// Returns the spool's sticky write error if flushing failed, ErrClosed if the
// spool closed first.
func (s *Spool) WaitDurable(ctx context.Context, seq int64) error {
	for {
		s.mu.Lock()
		if seq < s.durable || seq <= s.acked {
			s.mu.Unlock()
			return nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if seq >= s.nextSeq {
			next := s.nextSeq
			s.mu.Unlock()
			return fmt.Errorf("spool: WaitDurable(%d): sequence not assigned yet (next is %d)", seq, next)
		}
		if s.closing && isClosed(s.done) {
			s.mu.Unlock()
			return ErrClosed
		}
		if s.open != nil && seq >= s.open.first {
			s.wantFlush = true
			s.wake()
		}
		ch := s.durableCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Err returns the spool's sticky write error: once a segment write or
// fsync failed, nothing after it becomes durable.
func (s *Spool) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func segName(first, last int64) string { return fmt.Sprintf("%020d-%020d.seg", first, last) }

// Changed returns a channel closed at the next append (or Close): a tailing
// reader (the forwarder, a long-poll fetch) reads until it is caught up,
// then waits on it, with no polling. Appends pay for the notification only
// while someone is watching.
func (s *Spool) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watched = true
	return s.appendCh
}

// Close flushes what was appended, stops the flusher and returns the sticky
// error if any flush failed. Records appended but never flushed because of
// such an error are lost with the process; they were never reported durable.
func (s *Spool) Close() error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.appendCh) // wake watchers; no appends follow
	}
	s.mu.Unlock()
	s.wake()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked()
	return s.err
}

// Destroy closes the spool and removes its directory with everything in it
// (for a deleted topic).
func (s *Spool) Destroy() error {
	err := s.Close()
	if rerr := s.fs.RemoveAll(s.dir); rerr != nil {
		return rerr
	}
	if errors.Is(err, ErrClosed) {
		err = nil
	}
	return err
}

// Read returns records from sequence seq on: the record containing seq (if
// not yet acknowledged) and those after it, up to maxRecords records and
// maxBytes of data (at least one record when any is available). Sealed
// segments are read first, then the in-memory tail. Sequences below Head()
// are skipped. Gaps appear only where a corrupt segment was set aside.
//
// When Read meets a corrupt segment it sets it aside and returns a
// *SegmentError wrapping ErrCorrupt (with the records before it, if any, on
// the next call), so the loss is always reported; the call after continues
// past it.
func (s *Spool) Read(seq int64, maxRecords, maxBytes int) ([]Record, error) {
	var out []Record
	size := 0
	full := func() bool { return len(out) >= maxRecords || (len(out) > 0 && size >= maxBytes) }
	add := func(r Record) bool {
		if len(out) > 0 && size+len(r.Data) > maxBytes {
			return false
		}
		out = append(out, r)
		size += len(r.Data)
		return true
	}
	for maxRecords > 0 && !full() {
		s.mu.Lock()
		if seq <= s.acked {
			seq = s.acked + 1
		}
		if seq >= s.nextSeq {
			s.mu.Unlock()
			break
		}
		i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].last >= seq })
		if i < len(s.segs) {
			seg := s.segs[i]
			s.mu.Unlock()
			recs, err := s.readSegment(seg)
			if err != nil {
				if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooBig) || errors.Is(err, ErrUnsupported) {
					if len(out) > 0 {
						return out, nil // report it on the next call
					}
					s.setAside(seg, err)
					return nil, &SegmentError{Path: filepath.Join(s.dir, seg.name), First: seg.first, Last: seg.last, Err: err}
				}
				if errors.Is(err, os.ErrNotExist) && s.Head() > seg.last {
					seq = seg.last + 1 // acknowledged and deleted under us
					continue
				}
				if len(out) > 0 {
					return out, nil
				}
				return nil, &SegmentError{Path: filepath.Join(s.dir, seg.name), First: seg.first, Last: seg.last, Err: err}
			}
			j := sort.Search(len(recs), func(j int) bool { return recs[j].Last() >= seq })
			for ; j < len(recs) && !full(); j++ {
				if !add(recs[j]) {
					return out, nil
				}
			}
			seq = seg.last + 1
			continue
		}
		// The rest is in memory. mu is held so the batches cannot be
		// flushed (and vanish from view, their buffers reused) while we
		// copy records out.
		var arena []byte
		batches := s.sealed
		if s.open != nil {
			batches = append(batches[:len(batches):len(batches)], s.open)
		}
		for _, b := range batches {
			if b.next <= seq {
				continue
			}
			j := sort.Search(len(b.seqs), func(j int) bool {
				end := b.next
				if j+1 < len(b.seqs) {
					end = b.seqs[j+1]
				}
				return end-1 >= seq
			})
			for ; j < len(b.seqs) && !full(); j++ {
				span, data, _, err := readFrame(b.buf, int(b.offs[j]))
				if err != nil {
					s.mu.Unlock()
					panic("spool: in-memory batch framing broken: " + err.Error())
				}
				// Copy: the batch's buffer is reused once it is flushed.
				if len(data) > cap(arena)-len(arena) {
					// Chunks grow with the read, so a small read stays small.
					arena = make([]byte, 0, max(len(data), min(2*cap(arena), 1<<20), 1<<10))
				}
				arena = append(arena, data...)
				data = arena[len(arena)-len(data) : len(arena) : len(arena)]
				if !add(Record{Seq: b.seqs[j], Span: int(span), Data: data}) {
					s.mu.Unlock()
					return out, nil
				}
			}
		}
		s.mu.Unlock()
		break
	}
	return out, nil
}

// ReadFrom is Read without a byte limit.
func (s *Spool) ReadFrom(seq int64, limit int) ([]Record, error) {
	return s.Read(seq, limit, math.MaxInt)
}

// readSegment returns a segment's records, from the cache when the same
// segment was read last (the forwarding pattern: many reads walking one
// segment).
func (s *Spool) readSegment(seg segment) ([]Record, error) {
	s.cacheMu.Lock()
	if s.cache.name == seg.name {
		recs := s.cache.recs
		s.cacheMu.Unlock()
		return recs, nil
	}
	s.cacheMu.Unlock()
	data, err := s.readFile(seg.name)
	if err != nil {
		return nil, err
	}
	h, recs, err := s.dec.decode(data)
	if err != nil {
		return nil, err
	}
	if h.First != seg.first || h.Last != seg.last {
		return nil, corruptf("header range [%d..%d] does not match file name", h.First, h.Last)
	}
	s.cacheMu.Lock()
	s.cache.name, s.cache.recs = seg.name, recs
	s.cacheMu.Unlock()
	return recs, nil
}

func (s *Spool) readFile(name string) ([]byte, error) {
	f, err := s.fs.OpenFile(filepath.Join(s.dir, name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Bound the read by what a valid segment can be before allocating.
	if limit := headerLen + int64(maxStored(s.opts.MaxDecodedBytes, s.opts.Cipher)); fi.Size() > limit {
		return nil, fmt.Errorf("%w: file is %d bytes, limit %d", ErrTooBig, fi.Size(), limit)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, fi.Size()), data); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, corruptf("file shrank while read: %v", err)
		}
		// An I/O error says nothing about the bytes: report it, do not set
		// the segment aside.
		return nil, fmt.Errorf("spool: reading segment: %w", err)
	}
	return data, nil
}

// setAside renames a corrupt segment to *.corrupt, drops it from the live
// set and records it for Corrupt().
func (s *Spool) setAside(seg segment, cause error) {
	path := filepath.Join(s.dir, seg.name)
	rerr := s.fs.Rename(path, path+".corrupt")
	if rerr == nil {
		rerr = s.fs.SyncDir(s.dir)
	}
	s.log.Error("spool: corrupt segment set aside", "file", path, "first", seg.first, "last", seg.last, "err", cause, "rename_err", rerr)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.segs {
		if s.segs[i].name == seg.name {
			segs := make([]segment, 0, len(s.segs)-1)
			segs = append(append(segs, s.segs[:i]...), s.segs[i+1:]...)
			s.segs = segs // copy: readers may hold the old slice
			s.disk -= seg.size
			s.used -= seg.size
			s.diskRecs -= seg.count
			s.corrupt = append(s.corrupt, CorruptSegment{Name: seg.name, First: seg.first, Last: seg.last, Err: cause})
			break
		}
	}
}

// DeleteAcked acknowledges every sequence ≤ seq and removes every segment
// whose last sequence is ≤ seq; it returns how many were removed. Records of
// a partially acknowledged segment stay on disk until the rest is acked but
// are no longer returned by Read. The acknowledged sequence is recorded in a
// marker file (made durable before any segment is removed) so Head and
// NextSeq survive a restart even when the spool is empty.
func (s *Spool) DeleteAcked(seq int64) (int, error) {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	s.mu.Lock()
	if seq >= s.nextSeq {
		seq = s.nextSeq - 1 // sequences not handed out cannot be acknowledged
	}
	if seq < s.acked {
		// Never move backwards, but still remove segments a flush registered
		// after the previous call (the flusher calls us for exactly that).
		seq = s.acked
	}
	closing := s.closing && isClosed(s.done)
	s.mu.Unlock()
	if closing {
		return 0, ErrClosed
	}
	if seq > s.markerSeq && seq >= 0 {
		if err := s.writeMarker(seq); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	if seq > s.acked {
		s.acked = seq
	}
	n := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].last > seq })
	victims := append([]segment(nil), s.segs[:n]...)
	s.segs = s.segs[n:]
	s.broadcastLocked() // WaitDurable treats acknowledged as done
	s.mu.Unlock()

	if len(victims) > 0 {
		s.cacheMu.Lock()
		if s.cache.name != "" && s.cache.name <= victims[len(victims)-1].name {
			s.cache.name, s.cache.recs = "", nil // do not pin a deleted segment's records
		}
		s.cacheMu.Unlock()
	}
	var firstErr error
	removed := 0
	for _, v := range victims {
		err := s.fs.Remove(filepath.Join(s.dir, v.name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			// Leave it: recovery deletes segments at or below the marker.
			if firstErr == nil {
				firstErr = err
			}
		} else {
			removed++
		}
		s.mu.Lock()
		s.disk -= v.size
		s.used -= v.size
		s.diskRecs -= v.count
		s.mu.Unlock()
	}
	// No directory fsync for the removals: a segment that reappears after a
	// crash is at or below the durable marker and recovery removes it.
	return removed, firstErr
}

// writeMarker records acked sequence seq as the empty file acked-<seq>, made
// durable with a directory fsync, then drops the previous marker.
// REQUIRES: s.ackMu held.
func (s *Spool) writeMarker(seq int64) error {
	f, err := s.fs.OpenFile(filepath.Join(s.dir, markerName(seq)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("spool: ack marker: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("spool: ack marker: %w", err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("spool: ack marker: %w", err)
	}
	if s.markerSeq >= 0 {
		_ = s.fs.Remove(filepath.Join(s.dir, markerName(s.markerSeq)))
	}
	s.markerSeq = seq
	return nil
}

func markerName(seq int64) string { return fmt.Sprintf("acked-%020d", seq) }

// Head is the first unacknowledged sequence number (what a consumer resumes
// from).
func (s *Spool) Head() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked + 1
}

// NextSeq is the sequence number the next Append gets.
func (s *Spool) NextSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextSeq
}

// Stats is a snapshot of the spool's state.
type Stats struct {
	Head           int64 // first unacknowledged sequence
	NextSeq        int64 // sequence of the next append
	DurableSeq     int64 // every sequence below it is durable or acknowledged
	PendingRecords int   // records in memory, not yet durable
	PendingBytes   int64 // bytes reserved by them
	DiskRecords    int64 // records in segment files (including acknowledged ones of a partly acknowledged segment)
	DiskSegments   int
	DiskBytes      int64
	UsedBytes      int64 // DiskBytes + PendingBytes, what MaxBytes bounds
	MaxBytes       int64
	Corrupt        int   // segments set aside since Open, including by Open
	Err            error // sticky flush error, if any
}

// Stats returns a snapshot.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Head: s.acked + 1, NextSeq: s.nextSeq, DurableSeq: s.durable,
		DiskRecords: s.diskRecs, DiskSegments: len(s.segs), DiskBytes: s.disk,
		UsedBytes: s.used, MaxBytes: s.opts.MaxBytes, Corrupt: len(s.corrupt), Err: s.err,
	}
	for _, b := range s.sealed {
		st.PendingRecords += len(b.seqs)
		st.PendingBytes += b.reserved
	}
	if s.open != nil {
		st.PendingRecords += len(s.open.seqs)
		st.PendingBytes += s.open.reserved
	}
	return st
}

// Pressure is the fraction of MaxBytes in use, in [0, 1]: bytes on disk
// plus bytes reserved by records not yet flushed (they are on their way to
// disk and count against the same bound Append enforces, so Pressure reaches
// 1 exactly when Append starts failing with ErrFull).
func (s *Spool) Pressure() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(1, max(0, float64(s.used)/float64(s.opts.MaxBytes)))
}

// IsOverloaded reports Pressure() > 0.9.
func (s *Spool) IsOverloaded() bool { return s.Pressure() > 0.9 }

// Corrupt lists the segments set aside since Open (including by Open).
func (s *Spool) Corrupt() []CorruptSegment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CorruptSegment(nil), s.corrupt...)
}
