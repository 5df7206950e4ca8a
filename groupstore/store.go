package groupstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minikafka/minikafka/internal/durability"
	"github.com/minikafka/minikafka/internal/vfs"
)

// SyncMode says when committed offsets are fsynced: the broker-wide
// durability mode (internal/durability). Under SyncNever and SyncInterval a
// commit is written to the file before it returns, so a process crash loses
// nothing and a machine crash may; SyncInterval fsyncs every
// Options.Interval (Kafka's flush.ms); SyncAlways answers a commit only
// after it is fsynced, concurrent commits sharing one fsync.
type SyncMode = durability.Mode

const (
	SyncNever    = durability.Never
	SyncInterval = durability.Interval
	SyncAlways   = durability.Always
)

// Options configure a Store.
type Options struct {
	FS       vfs.FS // nil: the OS
	Dir      string // directory owned by the store
	Sync     SyncMode
	Interval time.Duration // for SyncInterval; 0 means 1s
	// CompactBytes is the log size above which the store rewrites the live
	// state into a fresh file, provided the log is also at least four times
	// the size of the live state. 0 means 4 MiB.
	CompactBytes int64
	Logger       *slog.Logger
}

// Offset is one committed position.
type Offset struct {
	Offset      int64
	LeaderEpoch int32  // -1 when unknown
	Metadata    string // client metadata; Kafka's null reads back as ""
	CommitMs    int64  // commit timestamp, Unix milliseconds
	ExpireMs    int64  // explicit expiry (OffsetCommit v1-v4 retention), -1 none
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Commit is one partition's offset within a commit.
type Commit struct {
	Topic     string
	Partition int32
	Offset    Offset
}

// Damage describes bytes that failed their checks at open. Their frames are
// treated as never committed.
type Damage struct {
	File   string
	Pos    int64 // byte position in File
	Length int64
	Reason string
}

// RecoveryReport says what Open found.
type RecoveryReport struct {
	File      string // the log that was replayed ("" if none)
	Frames    int    // frames replayed
	Offsets   int    // live offsets after replay
	TornBytes int64  // incomplete tail dropped (an interrupted write)
	Damaged   []Damage
	Removed   []string // leftover temp files and superseded generations
}

// Clean reports whether nothing was dropped.
func (r *RecoveryReport) Clean() bool { return r.TornBytes == 0 && len(r.Damaged) == 0 }

var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("groupstore: closed")
	// ErrTooLarge is returned for a topic name or metadata string over
	// MaxStringBytes (the broker enforces Kafka's smaller
	// offset.metadata.max.bytes before it gets here).
	ErrTooLarge = errors.New("groupstore: string too large")
)

type groupOffsets map[TopicPartition]Offset

// Store holds committed offsets for every group. It is safe for concurrent
// use. The in-memory map is the truth for reads; the log on disk makes it
// durable.
type Store struct {
	opts Options
	fs   vfs.FS
	log  *slog.Logger

	mu     sync.Mutex
	cond   *sync.Cond // signalled when a flush completes
	groups map[string]groupOffsets
	live   int // number of offsets in groups

	f        vfs.File
	gen      uint64
	size     int64  // bytes in f
	pending  []byte // frames appended but not yet written
	spare    []byte
	seq      uint64        // last change appended to pending
	written  uint64        // changes up to here are in the file
	synced   uint64        // changes up to here are fsynced
	flushing bool          // one goroutine at a time writes; others wait on cond
	err      error         // sticky: after a failed fsync (or undo) nothing more is accepted
	failed   []failedRange // changes whose write failed and was undone (undoLocked)
	noSpace  bool          // in a disk-full episode (logged once)
	closed   bool

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// MaxStringBytes caps group, topic and metadata strings so that one commit
// always fits in a frame.
const MaxStringBytes = 1 << 20

func logName(gen uint64) string { return fmt.Sprintf("offsets-%020d.log", gen) }

func parseLogName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "offsets-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".log")
	if !ok || len(s) != 20 {
		return 0, false
	}
	g, err := strconv.ParseUint(s, 10, 64)
	return g, err == nil
}

// Open recovers the store in opts.Dir, creating it if needed. Damaged or
// torn bytes never fail Open: they are reported and their changes treated as
// uncommitted. Only I/O errors that prevent writing a usable log fail.
func Open(opts Options) (*Store, *RecoveryReport, error) {
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.CompactBytes <= 0 {
		opts.CompactBytes = 4 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{opts: opts, fs: opts.FS, log: opts.Logger, groups: map[string]groupOffsets{}}
	s.cond = sync.NewCond(&s.mu)
	rep := &RecoveryReport{}
	if err := s.fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("groupstore: %w", err)
	}
	names, err := s.fs.ReadDir(opts.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("groupstore: %w", err)
	}
	var gens []uint64
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			if err := s.fs.Remove(filepath.Join(opts.Dir, n)); err == nil {
				rep.Removed = append(rep.Removed, n)
			}
			continue
		}
		if g, ok := parseLogName(n); ok {
			gens = append(gens, g)
		}
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] > gens[j] })

	// Replay the newest generation whose header is intact. A newer file is
	// only ever created by atomic rename after an fsync, so a bad header is
	// media damage; an older generation, if still present, is the next best.
	loaded := -1
	var validEnd int64
	rewrite := false
	for i, g := range gens {
		name := filepath.Join(opts.Dir, logName(g))
		data, err := readAll(s.fs, name)
		if err != nil {
			rep.Damaged = append(rep.Damaged, Damage{File: name, Reason: "unreadable: " + err.Error()})
			rewrite = true
			continue
		}
		hg, err := decodeFileHeader(data)
		if err == nil && hg != g {
			err = fmt.Errorf("header generation %d does not match name", hg)
		}
		if err != nil {
			rep.Damaged = append(rep.Damaged, Damage{File: name, Length: int64(len(data)), Reason: "file header: " + err.Error()})
			rewrite = true
			continue
		}
		rep.File = name
		validEnd, rewrite = s.replay(name, data, rep, rewrite)
		loaded = i
		s.gen = g
		break
	}
	for i, g := range gens {
		if i == loaded {
			continue
		}
		n := logName(g)
		if err := s.fs.Remove(filepath.Join(opts.Dir, n)); err == nil {
			rep.Removed = append(rep.Removed, n)
		}
	}
	rep.Offsets = s.live

	if loaded < 0 || rewrite {
		// No usable log, or damage inside it: write the recovered state as
		// a fresh generation so the damage is not replayed (and reported)
		// again at the next open.
		if err := s.rewrite(); err != nil {
			return nil, nil, err
		}
	} else {
		name := filepath.Join(opts.Dir, logName(s.gen))
		f, err := s.fs.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("groupstore: %w", err)
		}
		if rep.TornBytes > 0 {
			err := f.Truncate(validEnd)
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("groupstore: truncate torn tail of %s: %w", name, err)
			}
		}
		s.f, s.size = f, validEnd
	}
	if len(rep.Removed) > 0 || rep.TornBytes > 0 {
		_ = s.fs.SyncDir(opts.Dir)
	}
	for _, d := range rep.Damaged {
		s.log.Warn("groupstore: damaged bytes treated as uncommitted", "file", d.File, "pos", d.Pos, "len", d.Length, "reason", d.Reason)
	}
	if rep.TornBytes > 0 {
		s.log.Warn("groupstore: dropped torn tail", "file", rep.File, "bytes", rep.TornBytes)
	}
	if opts.Sync == SyncInterval {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.syncLoop()
	}
	return s, rep, nil
}

func readAll(fs vfs.FS, name string) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// replay applies every valid frame of data. A frame that fails its checks
// starts a damaged region, which ends at the next valid frame; if there is
// none, the region is a torn tail. A frame whose header is intact but whose
// payload is not is skipped by its length (so bytes inside a payload are
// never mistaken for frames). It returns the end of the last valid
// frame and whether the file must be rewritten (damage before the tail).
func (s *Store) replay(name string, data []byte, rep *RecoveryReport, rewrite bool) (int64, bool) {
	pos := fileHeaderLen
	end := pos
	for pos < len(data) {
		payload, n, ok := frameAt(data[pos:])
		if ok {
			o, _ := decodeOp(payload) // frameAt already decoded it successfully
			s.apply(&o)
			rep.Frames++
			pos += n
			end = pos
			continue
		}
		if l, ok := frameLen(data[pos:]); ok {
			// The header is intact, so its length can be trusted: the
			// payload is damaged, or cut short by a crash at the tail.
			if pos+frameHeaderLen+l > len(data) {
				rep.TornBytes = int64(len(data) - pos)
				break
			}
			rep.Damaged = append(rep.Damaged, Damage{File: name, Pos: int64(pos), Length: int64(frameHeaderLen + l), Reason: "frame payload failed its checksum or decoding"})
			rewrite = true
			pos += frameHeaderLen + l
			continue
		}
		next := -1
		for q := pos + 1; q+frameHeaderLen <= len(data); q++ {
			if _, _, ok := frameAt(data[q:]); ok {
				next = q
				break
			}
		}
		if next < 0 {
			rep.TornBytes = int64(len(data) - pos)
			break
		}
		rep.Damaged = append(rep.Damaged, Damage{File: name, Pos: int64(pos), Length: int64(next - pos), Reason: "frame header failed its checksum"})
		rewrite = true
		pos = next
	}
	return int64(end), rewrite
}

func (s *Store) apply(o *op) {
	switch o.kind {
	case opCommit:
		g := s.groups[o.group]
		if g == nil {
			g = groupOffsets{}
			s.groups[o.group] = g
		}
		for _, c := range o.commits {
			tp := TopicPartition{c.Topic, c.Partition}
			if _, ok := g[tp]; !ok {
				s.live++
			}
			g[tp] = c.Offset
		}
	case opDeleteOffsets:
		g := s.groups[o.group]
		for _, tp := range o.parts {
			if _, ok := g[tp]; ok {
				delete(g, tp)
				s.live--
			}
		}
		if g != nil && len(g) == 0 {
			delete(s.groups, o.group)
		}
	case opDeleteGroup:
		s.live -= len(s.groups[o.group])
		delete(s.groups, o.group)
	case opDeleteTopic:
		for name, g := range s.groups {
			for tp := range g {
				if tp.Topic == o.topic {
					delete(g, tp)
					s.live--
				}
			}
			if len(g) == 0 {
				delete(s.groups, name)
			}
		}
	}
}

// appendOp frames o into pending and applies it to memory. REQUIRES: s.mu.
func (s *Store) appendOpLocked(o *op) {
	start := len(s.pending)
	s.pending = append(s.pending, make([]byte, frameHeaderLen)...)
	s.pending = append(s.pending, o.kind)
	switch o.kind {
	case opCommit:
		s.pending = appendString(s.pending, o.group)
		// Split so that no frame exceeds maxFrame; each frame is atomic.
		i := 0
		for i < len(o.commits) {
			hdr := len(s.pending)
			s.pending = append(s.pending, make([]byte, 10)...) // count placeholder
			j := i
			body := len(s.pending)
			for j < len(o.commits) && (j == i || len(s.pending)-start < maxFrame-64-len(o.commits[j].Topic)-len(o.commits[j].Offset.Metadata)) {
				s.pending = appendCommit(s.pending, &o.commits[j])
				j++
			}
			s.pending = fixCount(s.pending, hdr, body, j-i)
			sealFrame(s.pending, start)
			i = j
			if i < len(o.commits) {
				start = len(s.pending)
				s.pending = append(s.pending, make([]byte, frameHeaderLen)...)
				s.pending = append(s.pending, o.kind)
				s.pending = appendString(s.pending, o.group)
			}
		}
		if len(o.commits) == 0 {
			s.pending = append(s.pending, 0)
			sealFrame(s.pending, start)
		}
	case opDeleteOffsets:
		s.pending = appendString(s.pending, o.group)
		s.pending = binaryAppendUvarint(s.pending, len(o.parts))
		for _, tp := range o.parts {
			s.pending = appendString(s.pending, tp.Topic)
			s.pending = binaryAppendVarint(s.pending, int64(tp.Partition))
		}
		sealFrame(s.pending, start)
	case opDeleteGroup:
		s.pending = appendString(s.pending, o.group)
		sealFrame(s.pending, start)
	case opDeleteTopic:
		s.pending = appendString(s.pending, o.topic)
		sealFrame(s.pending, start)
	}
	s.apply(o)
	s.seq++
}

// fixCount replaces the 10-byte placeholder at hdr with the uvarint n,
// shifting the body [body:] left.
func fixCount(b []byte, hdr, body, n int) []byte {
	var tmp [10]byte
	enc := binaryAppendUvarint(tmp[:0], n)
	copy(b[hdr:], enc)
	m := copy(b[hdr+len(enc):], b[body:])
	return b[:hdr+len(enc)+m]
}

// do appends o and waits until it is written, and fsynced under SyncAlways.
func (s *Store) do(o *op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	s.appendOpLocked(o)
	return s.waitLocked(s.seq, s.opts.Sync == SyncAlways)
}

func (s *Store) usableLocked() error {
	if s.closed {
		return ErrClosed
	}
	return s.err
}

// waitLocked makes changes up to seq written (and fsynced if sync). The first
// waiter that finds no flush running becomes the flusher and writes every
// pending frame in one write and one fsync; the others wait for it, so
// concurrent commits share the fsync (group commit). REQUIRES: s.mu.
func (s *Store) waitLocked(seq uint64, sync bool) error {
	for {
		if s.err != nil {
			return s.err
		}
		if len(s.failed) > 0 {
			if err := s.failedErr(seq); err != nil {
				return err
			}
		}
		if s.synced >= seq || (!sync && s.written >= seq) {
			return nil
		}
		if s.flushing {
			s.cond.Wait()
			continue
		}
		s.flushLocked(sync)
	}
}

// flushLocked writes pending frames (and fsyncs if sync) with s.mu released
// during the I/O. REQUIRES: s.mu, !s.flushing.
func (s *Store) flushLocked(sync bool) {
	if s.size >= s.opts.CompactBytes && s.size >= 4*s.liveBytesLocked() {
		s.compactLocked()
		return
	}
	s.flushing = true
	buf, seq, f, pos := s.pending, s.seq, s.f, s.size
	s.pending = s.spare[:0]
	s.mu.Unlock()
	var err, serr error
	if len(buf) > 0 {
		_, err = f.WriteAt(buf, pos)
	}
	if err == nil && sync {
		serr = f.Sync()
	}
	s.mu.Lock()
	s.flushing = false
	s.cond.Broadcast()
	if serr != nil {
		s.failLocked(fmt.Errorf("groupstore: fsync %s: %w", f.Name(), serr))
		return
	}
	if err != nil {
		s.undoLocked(seq, fmt.Errorf("groupstore: write %s: %w", f.Name(), err))
		return
	}
	if s.noSpace {
		s.noSpace = false
		s.log.Info("groupstore: there is space again; offset commits are written")
	}
	s.size += int64(len(buf))
	s.written = seq
	if sync {
		s.synced = seq
	}
	if cap(buf) <= 1<<20 {
		s.spare = buf[:0]
	}
}

// undoLocked handles a failed write of the changes up to seq (a full disk,
// typically) without making the store refuse writes: the file is cut back
// to what was written before, memory is rebuilt from it plus the changes
// appended since (still pending), and the waiters of the failed changes
// get err. Only if the undo fails is the error sticky. REQUIRES: s.mu.
func (s *Store) undoLocked(seq uint64, err error) {
	if !vfs.IsNoSpace(err) {
		s.failLocked(err) // EIO and the like: what reached the disk is unknown
		return
	}
	if uerr := s.rebuildLocked(); uerr != nil {
		s.failLocked(fmt.Errorf("%w (undoing it failed: %v)", err, uerr))
		return
	}
	s.failed = append(s.failed, failedRange{after: s.written, upTo: seq, err: err})
	if len(s.failed) > maxFailedRanges {
		// Their waiters were woken at the failure; they are long gone.
		s.failed = s.failed[len(s.failed)-maxFailedRanges:]
	}
	if !s.noSpace {
		s.noSpace = true
		s.log.Error("groupstore: disk full: offset commits fail until there is space (nothing acknowledged lost)", "err", err)
	}
}

// failedRange is changes (after, upTo] whose write failed and was undone.
type failedRange struct {
	after, upTo uint64
	err         error
}

const maxFailedRanges = 1024

// failedErr is the error of change seq if its write failed.
func (s *Store) failedErr(seq uint64) error {
	for i := len(s.failed) - 1; i >= 0; i-- {
		if r := s.failed[i]; seq > r.after && seq <= r.upTo {
			return r.err
		}
	}
	return nil
}

// rebuildLocked truncates the file to the bytes known written and rebuilds
// the in-memory state from them and from the pending frames.
func (s *Store) rebuildLocked() error {
	if s.f == nil {
		return errors.New("no open generation")
	}
	if err := s.f.Truncate(s.size); err != nil {
		return err
	}
	data := make([]byte, s.size)
	if _, err := s.f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	s.groups, s.live = map[string]groupOffsets{}, 0
	var rep RecoveryReport
	if end, _ := s.replay(s.f.Name(), data, &rep, false); end != s.size || len(rep.Damaged) > 0 {
		return fmt.Errorf("the written part of %s does not replay cleanly (valid to %d of %d)", s.f.Name(), end, s.size)
	}
	for p := s.pending; len(p) > 0; {
		payload, n, ok := frameAt(p)
		if !ok {
			return errors.New("pending frames do not decode")
		}
		o, _ := decodeOp(payload)
		s.apply(&o)
		p = p[n:]
	}
	return nil
}

// Err is the write failure that made the store refuse writes, or nil.
// Changes are applied in memory before they are written, so after a
// failure the reads may show a change that was never made durable (and
// was answered with an error): callers must not serve them as committed.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Store) failLocked(err error) {
	if s.err == nil {
		s.err = err
		s.log.Error("groupstore: refusing further writes until reopened", "err", err)
	}
}

// liveBytesLocked estimates the size of the compacted state.
func (s *Store) liveBytesLocked() int64 { return int64(s.live)*48 + 512 }

// compactLocked writes the whole state (which includes pending changes) as a
// new generation and switches to it. REQUIRES: s.mu, !s.flushing.
func (s *Store) compactLocked() {
	s.flushing = true
	snap := s.snapshotLocked()
	seq, gen, old := s.seq, s.gen+1, s.f
	s.pending = s.pending[:0]
	s.mu.Unlock()
	f, size, err := s.writeGeneration(gen, snap)
	s.mu.Lock()
	s.flushing = false
	s.cond.Broadcast()
	if err != nil {
		// The old generation is untouched (the new one is written
		// atomically): the changes it did not take failed.
		s.undoLocked(seq, err)
		return
	}
	oldName := filepath.Join(s.opts.Dir, logName(s.gen))
	s.f, s.gen, s.size = f, gen, size
	s.written, s.synced = seq, seq
	if old != nil {
		old.Close()
	}
	// The new generation is durable; the old one is garbage even if this
	// removal is lost in a crash (Open removes older generations).
	_ = s.fs.Remove(oldName)
}

// snapshotLocked encodes the live state as frames. REQUIRES: s.mu.
func (s *Store) snapshotLocked() []byte {
	saved := s.pending
	s.pending = encodeFileHeader(s.gen + 1)
	names := make([]string, 0, len(s.groups))
	for g := range s.groups {
		names = append(names, g)
	}
	sort.Strings(names)
	seq := s.seq
	for _, name := range names {
		o := op{kind: opCommit, group: name, commits: sortedCommits(s.groups[name])}
		s.appendFramesOnlyLocked(&o)
	}
	s.seq = seq
	snap := s.pending
	s.pending = saved
	return snap
}

// appendFramesOnlyLocked frames o without applying it (it is already state).
func (s *Store) appendFramesOnlyLocked(o *op) {
	groups, live := s.groups, s.live
	s.groups = map[string]groupOffsets{} // apply into a throwaway map
	s.appendOpLocked(o)
	s.groups, s.live = groups, live
}

func sortedCommits(g groupOffsets) []Commit {
	cs := make([]Commit, 0, len(g))
	for tp, o := range g {
		cs = append(cs, Commit{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Topic != cs[j].Topic {
			return cs[i].Topic < cs[j].Topic
		}
		return cs[i].Partition < cs[j].Partition
	})
	return cs
}

// writeGeneration atomically creates generation gen holding data
// (vfs.WriteFileAtomic), then reopens it for appends.
func (s *Store) writeGeneration(gen uint64, data []byte) (vfs.File, int64, error) {
	name := filepath.Join(s.opts.Dir, logName(gen))
	if err := vfs.WriteFileAtomic(s.fs, name, data, 0o644); err != nil {
		return nil, 0, fmt.Errorf("groupstore: write %s: %w", name, err)
	}
	f, err := s.fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("groupstore: reopen %s: %w", name, err)
	}
	return f, int64(len(data)), nil
}

// rewrite replaces whatever is on disk with the in-memory state (used at
// open after damage, or to create the first generation).
func (s *Store) rewrite() error {
	s.mu.Lock()
	snap := s.snapshotLocked()
	s.mu.Unlock()
	oldGen := s.gen
	f, size, err := s.writeGeneration(s.gen+1, snap)
	if err != nil {
		return err
	}
	s.f, s.gen, s.size = f, s.gen+1, size
	if oldGen > 0 {
		_ = s.fs.Remove(filepath.Join(s.opts.Dir, logName(oldGen)))
	}
	return nil
}

func (s *Store) syncLoop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			_ = s.Sync()
		}
	}
}

// Commit records offsets for group as one durable change (split into
// several frames only if it exceeds the frame cap) and returns once it is
// written, and fsynced under SyncAlways.
func (s *Store) Commit(group string, commits []Commit) error {
	if len(commits) == 0 {
		return nil
	}
	for i := range commits {
		if len(commits[i].Topic) > MaxStringBytes || len(commits[i].Offset.Metadata) > MaxStringBytes || len(group) > MaxStringBytes {
			return ErrTooLarge
		}
	}
	return s.do(&op{kind: opCommit, group: group, commits: commits})
}

// DeleteOffsets removes the given partitions' offsets of group.
func (s *Store) DeleteOffsets(group string, parts []TopicPartition) error {
	if len(parts) == 0 {
		return nil
	}
	return s.do(&op{kind: opDeleteOffsets, group: group, parts: parts})
}

// DeleteGroup removes every offset of group.
func (s *Store) DeleteGroup(group string) error {
	return s.do(&op{kind: opDeleteGroup, group: group})
}

// DeleteTopic removes every group's offsets for topic.
func (s *Store) DeleteTopic(topic string) error {
	return s.do(&op{kind: opDeleteTopic, topic: topic})
}

// Get returns group's committed offset for one partition.
func (s *Store) Get(group, topic string, partition int32) (Offset, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.groups[group][TopicPartition{topic, partition}]
	return o, ok
}

// GroupOffsets returns a copy of group's offsets, sorted by topic and
// partition.
func (s *Store) GroupOffsets(group string) []Commit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedCommits(s.groups[group])
}

// Groups lists the groups that have offsets, sorted.
func (s *Store) Groups() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.groups))
	for g := range s.groups {
		names = append(names, g)
	}
	sort.Strings(names)
	return names
}

// GroupStatus tells Expire how to age a group's offsets.
type GroupStatus struct {
	// Active groups (members present) keep all their offsets.
	Active bool
	// EmptySinceMs is when the group last became empty; 0 if unknown (a
	// simple group that never had members), in which case each offset ages
	// from its own commit timestamp, as Kafka does.
	EmptySinceMs int64
}

// Expire removes the offsets of inactive groups older than retention, as
// Kafka's offsets.retention.minutes: an offset expires at its explicit
// ExpireMs if it has one, otherwise retention after the later of its commit
// and the moment its group became empty. It returns how many were removed.
func (s *Store) Expire(now time.Time, retention time.Duration, status func(group string) GroupStatus) (int, error) {
	nowMs := now.UnixMilli()
	// status is called without s.mu held, so that callers may take their
	// own locks in it (theirs come before ours in every lock order).
	statuses := map[string]GroupStatus{}
	for _, name := range s.Groups() {
		statuses[name] = status(name)
	}
	s.mu.Lock()
	var ops []op
	for name, g := range s.groups {
		st, ok := statuses[name]
		if !ok || st.Active {
			continue // committed to since we asked: not expired
		}
		var parts []TopicPartition
		for tp, o := range g {
			base := max(o.CommitMs, st.EmptySinceMs)
			if (o.ExpireMs >= 0 && nowMs >= o.ExpireMs) || (o.ExpireMs < 0 && nowMs-base >= retention.Milliseconds()) {
				parts = append(parts, tp)
			}
		}
		if len(parts) > 0 {
			sort.Slice(parts, func(i, j int) bool {
				if parts[i].Topic != parts[j].Topic {
					return parts[i].Topic < parts[j].Topic
				}
				return parts[i].Partition < parts[j].Partition
			})
			ops = append(ops, op{kind: opDeleteOffsets, group: name, parts: parts})
		}
	}
	n := 0
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	for i := range ops {
		s.appendOpLocked(&ops[i])
		n += len(ops[i].parts)
	}
	err := s.waitLocked(s.seq, s.opts.Sync == SyncAlways)
	s.mu.Unlock()
	return n, err
}

// Sync writes and fsyncs everything committed so far, whatever the policy.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.waitLocked(s.lastLiveLocked(), true)
}

// lastLiveLocked is the newest change not known to have failed: Sync and
// Close make it durable, and do not fail for a change whose write failed
// (on a full disk) and whose caller was told so. REQUIRES: s.mu.
func (s *Store) lastLiveLocked() uint64 {
	if n := len(s.failed); n > 0 {
		if r := s.failed[n-1]; s.seq <= r.upTo {
			return r.after
		}
	}
	return s.seq
}

// Stats is a snapshot of the store's counters.
type Stats struct {
	Groups, Offsets int
	LogBytes        int64
	Generation      uint64
}

// Stats returns current counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Groups: len(s.groups), Offsets: s.live, LogBytes: s.size, Generation: s.gen}
}

// Close flushes and fsyncs pending changes and closes the log.
func (s *Store) Close() error {
	if s.stop != nil {
		s.stopOnce.Do(func() {
			close(s.stop)
			<-s.done
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	err := s.waitLocked(s.lastLiveLocked(), true)
	for s.flushing {
		s.cond.Wait()
	}
	s.closed = true
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
