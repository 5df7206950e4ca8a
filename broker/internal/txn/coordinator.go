package txn

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/records"
)

// State is a transactional ID's state, numbered as the transaction log
// stores it.
type State int8

const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
)

// String is Kafka's name of the state (DescribeTransactions,
// ListTransactions).
func (k State) String() string {
	switch k {
	case Empty:
		return "Empty"
	case Ongoing:
		return "Ongoing"
	case PrepareCommit:
		return "PrepareCommit"
	case PrepareAbort:
		return "PrepareAbort"
	case CompleteCommit:
		return "CompleteCommit"
	case CompleteAbort:
		return "CompleteAbort"
	}
	return "Dead"
}

const (
	// maxTimeout is Kafka's transaction.max.timeout.ms.
	maxTimeout = 15 * time.Minute
	// IDExpiry is Kafka's transactional.id.expiration.ms.
	IDExpiry = 7 * 24 * time.Hour
	// CheckInterval is how often timed-out transactions are looked
	// for (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms
	// is 10 s; a shorter one costs little here).
	CheckInterval = 500 * time.Millisecond
)

// Partition is one partition as the coordinator sees it: where a
// transaction's data and markers live. The broker's partitions implement
// it; the coordinator keys its per-partition state by the value, so it
// must be comparable and stay the same for the partition's lifetime (a
// pointer).
type Partition interface {
	TopicID() [16]byte
	Topic() string
	Index() int32
	// LogStart and LogEnd are the partition's log start and end offsets.
	LogStart() int64
	LogEnd() int64
	// CurrentLogStart is LogStart without side effects (a forwarded
	// partition's spool is not opened for it): the timeout loop asks.
	CurrentLogStart() int64
	// EachBatchHeader calls fn with each batch header from the one
	// holding offset from on, until fn returns false; an offset outside
	// the log is logstore.ErrOffsetOutOfRange.
	EachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error
	// AppendMarker appends a control batch of producer pid at epoch,
	// written by a coordinator at coordinatorEpoch, as a partition leader
	// appends one. Under the partition's lock it first calls check (when
	// not nil) with what the partition knows of the producer, which
	// refuses the marker by returning an error; after the append the
	// producer's state there takes the marker's epoch and coordinator
	// epoch (a newer epoch fences the older ones), and written is called
	// with the marker's offset, so that no produce sees the partition
	// between the marker and the coordinator's bookkeeping. It returns
	// the offset after the marker.
	AppendMarker(batch []byte, pid int64, epoch int16, coordinatorEpoch int32, check func(MarkerProducer) error, written func(marker int64)) (end int64, err error)
	// WaitDurable returns once everything before end is durable under
	// the broker's sync policy.
	WaitDurable(ctx context.Context, end int64) error
	// KeepsAborted reports whether an aborted transaction the
	// transaction log holds must stay indexed at a restart (compaction
	// may have removed its marker and data).
	KeepsAborted(a Aborted) bool
	// Forwarded reports whether the partition's committed data goes
	// upstream through the uplink.
	Forwarded() bool
}

// MarkerProducer is what a partition knows of a producer when a marker
// for it arrives.
type MarkerProducer struct {
	// Known: the partition has state for the producer; Epoch and
	// CoordinatorEpoch are meaningful only then.
	Known bool
	Epoch int16
	// CoordinatorEpoch is the coordinator epoch of the producer's last
	// marker there, -1 if none.
	CoordinatorEpoch int32
}

// Partitions finds partitions. The methods return a nil Partition when
// there is none (a deleted topic).
type Partitions interface {
	ByID(topicID [16]byte, index int32) Partition
	ByName(topic string, index int32) Partition
	TopicName(id [16]byte) (string, bool)
	// Internal reports whether a topic is one of the broker's own, which
	// no transaction may write.
	Internal(topic string) bool
}

// ProducerIDs issues producer IDs (the broker's durable block allocator).
type ProducerIDs interface {
	Allocate() (int64, error)
}

// Groups is the group coordinator, which TxnOffsetCommit consults and a
// committing transaction hands its offsets to.
type Groups interface {
	// ValidateTxnCommit checks the committer as OffsetCommit checks a
	// member; 0 when it may commit.
	ValidateTxnCommit(r *kmsg.TxnOffsetCommitRequest, version int16) int16
	// CommitTopic resolves a committed topic by name, or by id when byID.
	CommitTopic(byID bool, name string, id [16]byte) CommitTopic
	// CommitTransactionalOffsets writes a committed transaction's
	// offsets to the group store.
	CommitTransactionalOffsets(group string, commits []groupstore.Commit) error
}

// CommitTopic is one topic of a TxnOffsetCommit as the group coordinator
// resolved it.
type CommitTopic interface {
	Name() string
	// PartitionError is one partition's error given the request-wide
	// code; 0 to stage the offset.
	PartitionError(requestCode int16, partition int32, metadata *string) int16
}

// Uplink learns, before any marker releases them, which forwarded
// partitions hold data of a committing transaction; every marker of that
// transaction carries the time at.
type Uplink interface {
	NoteCommit(pid int64, at time.Time, forwarded []Partition)
}

// Config is the coordinator's dependencies.
type Config struct {
	// Log is the opened transaction log; the coordinator owns it from
	// New on (even when New fails, the caller closes it then).
	Log         *Log
	Partitions  Partitions
	ProducerIDs ProducerIDs
	Groups      Groups
	// Uplink is nil when nothing is forwarded upstream.
	Uplink Uplink
	Now    func() time.Time
	Logger *slog.Logger
}

type tpKey struct {
	id   [16]byte
	part int32
}

type tpName struct {
	topic string
	part  int32
}

// txnState is one transactional ID.
type txnState struct {
	mu sync.Mutex // serializes every request of this ID, and its produces

	id        string
	pid       int64
	epoch     int16
	lastEpoch int16 // the epoch before the coordinator's last bump, -1 if none
	// prevPID is the producer ID an EndTxn v5 replaced when the epochs
	// ran out (-1 if none): its retry names it.
	prevPID int64
	// endBumped: the last bump was an EndTxn v5's (KIP-890), which an
	// older EndTxn version never retries.
	endBumped bool
	timeout   time.Duration
	state     State
	start     time.Time
	updated   time.Time
	// lastPrepare is the last Prepare time this run; markers are stamped
	// with it (complete).
	lastPrepare time.Time
	parts       map[tpKey]int64 // partitions of the open txn → LEO when added
	groups      map[string]bool // groups added by AddOffsetsToTxn
	offsets     map[string]map[tpName]groupstore.Offset
}

// Coordinator is the transaction coordinator of one broker.
type Coordinator struct {
	cfg   Config
	log   *Log
	parts Partitions
	now   func() time.Time
	slog  *slog.Logger

	mu    sync.Mutex
	txns  map[string]*txnState
	byPID map[int64]*txnState
	// pending: group → partition → IDs of open transactions holding a
	// staged offset for it.
	pending map[string]map[tpName]map[string]bool

	partTxns sync.Map // Partition → *partTxn

	// txnVersion is the finalized transaction.version (KIP-890): 2 lets
	// clients use the epoch bump per transaction and implicit adds.
	txnVersion    atomic.Int32
	featuresEpoch atomic.Int64
	tvMu          sync.Mutex

	closing chan struct{}
	wg      sync.WaitGroup
}

// New replays cfg.Log against the partitions, finishes what a crash
// interrupted and starts the timeout loop. On error the caller still owns
// cfg.Log.
func New(cfg Config) (*Coordinator, error) {
	c := &Coordinator{cfg: cfg, log: cfg.Log, parts: cfg.Partitions, now: cfg.Now, slog: cfg.Logger,
		txns: map[string]*txnState{}, byPID: map[int64]*txnState{},
		pending: map[string]map[tpName]map[string]bool{}, closing: make(chan struct{})}
	if err := c.recover(); err != nil {
		return nil, err
	}
	c.txnVersion.Store(DefaultTxnVersion)
	c.featuresEpoch.Store(1)
	if cfg.Log.txnVersion >= 0 {
		c.txnVersion.Store(int32(cfg.Log.txnVersion))
		c.featuresEpoch.Store(max(cfg.Log.featuresEpoch, 1))
	}
	c.wg.Add(1)
	go c.timeoutLoop()
	return c, nil
}

// Close stops the timeout loop and closes the transaction log.
func (c *Coordinator) Close() error {
	close(c.closing)
	c.wg.Wait()
	return c.log.Close()
}

func (c *Coordinator) get(id string) *txnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txns[id]
}

func (c *Coordinator) getPID(pid int64) *txnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPID[pid]
}

// snapshot is ts's persisted form. The caller holds ts.mu.
func (ts *txnState) snapshot() *snapshot {
	s := &snapshot{ID: ts.id, PID: ts.pid, Epoch: ts.epoch, LastEpoch: ts.lastEpoch, TimeoutMs: ts.timeout.Milliseconds(),
		State: ts.state, StartMs: ts.start.UnixMilli(), UpdateMs: ts.updated.UnixMilli()}
	for k, start := range ts.parts {
		s.Parts = append(s.Parts, partRecord{Topic: hex.EncodeToString(k.id[:]), Partition: k.part, Start: start})
	}
	sort.Slice(s.Parts, func(i, j int) bool {
		if s.Parts[i].Topic != s.Parts[j].Topic {
			return s.Parts[i].Topic < s.Parts[j].Topic
		}
		return s.Parts[i].Partition < s.Parts[j].Partition
	})
	for g := range ts.groups {
		s.Groups = append(s.Groups, g)
	}
	sort.Strings(s.Groups)
	if ts.prevPID >= 0 {
		prev := ts.prevPID
		s.PrevPID = &prev
	}
	s.EndBumped = ts.endBumped
	for g, offs := range ts.offsets {
		for tp, o := range offs {
			s.Offsets = append(s.Offsets, offsetsRecord{Group: g, Topic: tp.topic, Partition: tp.part, Offset: o.Offset, Epoch: o.LeaderEpoch, Metadata: o.Metadata})
		}
	}
	return s
}

// persist writes ts's state; durable asks for an fsync (policy permitting).
// The caller holds ts.mu.
func (c *Coordinator) persist(ts *txnState, durable bool, aborted ...abortedRecord) error {
	return c.log.append(durable, record{Txn: ts.snapshot(), Aborted: aborted})
}

func parseTopicID(s string) ([16]byte, bool) {
	var id [16]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, false
	}
	copy(id[:], b)
	return id, true
}

// recover rebuilds state from the log's live content and finishes what a
// crash interrupted.
func (c *Coordinator) recover() error {
	for _, a := range c.log.aborted {
		id, ok := parseTopicID(a.Topic)
		if !ok {
			continue
		}
		p := c.parts.ByID(id, a.Partition)
		if p == nil {
			continue
		}
		pt := c.partState(p)
		pt.aborted = append(pt.aborted, Aborted{PID: a.PID, First: a.First, Last: a.Last})
	}
	c.partTxns.Range(func(k, v any) bool {
		pt := v.(*partTxn)
		sort.Slice(pt.aborted, func(i, j int) bool { return pt.aborted[i].Last < pt.aborted[j].Last })
		// Compaction may have removed markers of entries the
		// transaction log still holds (the broker's cleaner).
		c.pruneAborted(k.(Partition), pt)
		return true
	})
	for _, s := range c.log.live {
		ts := &txnState{id: s.ID, pid: s.PID, epoch: s.Epoch, lastEpoch: s.LastEpoch, timeout: time.Duration(s.TimeoutMs) * time.Millisecond,
			state: s.State, start: time.UnixMilli(s.StartMs), updated: time.UnixMilli(s.UpdateMs), lastPrepare: time.UnixMilli(s.UpdateMs),
			parts: map[tpKey]int64{}, groups: map[string]bool{}, offsets: map[string]map[tpName]groupstore.Offset{},
			prevPID: -1, endBumped: s.EndBumped}
		if s.PrevPID != nil {
			ts.prevPID = *s.PrevPID
		}
		for _, pr := range s.Parts {
			if id, ok := parseTopicID(pr.Topic); ok {
				ts.parts[tpKey{id, pr.Partition}] = pr.Start
			}
		}
		for _, g := range s.Groups {
			ts.groups[g] = true
		}
		for _, o := range s.Offsets {
			if ts.offsets[o.Group] == nil {
				ts.offsets[o.Group] = map[tpName]groupstore.Offset{}
			}
			ts.offsets[o.Group][tpName{o.Topic, o.Partition}] = groupstore.Offset{Offset: o.Offset, LeaderEpoch: o.Epoch, Metadata: o.Metadata, ExpireMs: -1}
		}
		c.txns[ts.id] = ts
		c.byPID[ts.pid] = ts
		if ts.state == Ongoing || ts.state == PrepareCommit {
			c.setPending(ts, true)
		}
	}
	for _, ts := range c.txns {
		ts.mu.Lock()
		var err error
		switch ts.state {
		case Ongoing:
			for k, start := range ts.parts {
				p := c.parts.ByID(k.id, k.part)
				if p == nil {
					continue
				}
				// Data closed by a marker (a WriteTxnMarkers abort) is not
				// open; data after that marker is.
				first, marker, err := scanTxn(p, ts.pid, start)
				for err == nil && marker >= 0 {
					first, marker, err = scanTxn(p, ts.pid, marker+1)
				}
				if err != nil {
					ts.mu.Unlock()
					return err
				}
				if first >= 0 {
					pt := c.partState(p)
					pt.open[ts.pid] = first
				}
			}
		case PrepareCommit, PrepareAbort:
			err = c.complete(ts, ts.state == PrepareCommit, true)
		}
		ts.mu.Unlock()
		if err != nil {
			return fmt.Errorf("broker: completing transaction %q: %w", ts.id, err)
		}
	}
	return nil
}

// pendingEnd is a partition and the offset after a marker written to it,
// whose durability the answer waits for.
type pendingEnd struct {
	p   Partition
	end int64
}

// complete finishes a transaction whose Prepare state is durable: markers,
// offsets, then the Complete state. recovering: markers may already be in
// some partitions. The caller holds ts.mu.
func (c *Coordinator) complete(ts *txnState, commit, recovering bool) error {
	var waits []pendingEnd
	var aborted []abortedRecord
	// Every marker carries the Prepare time (endTxn keeps it increasing per
	// producer); the uplink learns the forwarded partitions holding data of
	// a committed transaction before any marker releases them.
	at := ts.updated
	var forwarded []Partition
	if commit && !recovering && c.cfg.Uplink != nil {
		for k := range ts.parts {
			if p := c.parts.ByID(k.id, k.part); p != nil && p.Forwarded() && c.HoldsOpen(p, ts.pid) {
				forwarded = append(forwarded, p)
			}
		}
		c.cfg.Uplink.NoteCommit(ts.pid, at, forwarded)
	}
	for k, start := range ts.parts {
		p := c.parts.ByID(k.id, k.part)
		if p == nil {
			continue // topic deleted meanwhile
		}
		if recovering {
			first, marker, err := scanTxn(p, ts.pid, start)
			if err != nil {
				return err
			}
			if commit && first >= 0 && c.cfg.Uplink != nil && p.Forwarded() {
				forwarded = append(forwarded, p)
			}
			if marker >= 0 {
				if !commit && first >= 0 {
					aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(k.id[:]), Partition: k.part, PID: ts.pid, First: first, Last: marker})
					pt := c.partState(p)
					pt.mu.Lock()
					pt.aborted = append(pt.aborted, Aborted{ts.pid, first, marker})
					sort.Slice(pt.aborted, func(i, j int) bool { return pt.aborted[i].Last < pt.aborted[j].Last })
					pt.mu.Unlock()
				}
				continue
			}
			if first >= 0 {
				pt := c.partState(p)
				pt.mu.Lock()
				pt.open[ts.pid] = first
				pt.mu.Unlock()
			}
		}
		pt := c.partState(p)
		pt.mu.Lock()
		first, open := pt.open[ts.pid]
		pt.mu.Unlock()
		end, err := c.writeMarker(p, ts.pid, ts.epoch, commit, at)
		if err != nil {
			return fmt.Errorf("writing marker to %s-%d: %w", p.Topic(), p.Index(), err)
		}
		if open && !commit {
			aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(k.id[:]), Partition: k.part, PID: ts.pid, First: first, Last: end - 1})
		}
		waits = append(waits, pendingEnd{p, end})
	}
	if commit && recovering && c.cfg.Uplink != nil {
		c.cfg.Uplink.NoteCommit(ts.pid, at, forwarded)
	}
	if commit {
		for g, offs := range ts.offsets {
			commits := make([]groupstore.Commit, 0, len(offs))
			for tp, o := range offs {
				o.CommitMs = c.now().UnixMilli()
				commits = append(commits, groupstore.Commit{Topic: tp.topic, Partition: tp.part, Offset: o})
			}
			if err := c.cfg.Groups.CommitTransactionalOffsets(g, commits); err != nil {
				return fmt.Errorf("committing offsets of group %s: %w", g, err)
			}
		}
	}
	for _, w := range waits {
		if err := w.p.WaitDurable(context.Background(), w.end); err != nil {
			return err
		}
	}
	c.setPending(ts, false)
	if commit {
		ts.state = CompleteCommit
	} else {
		ts.state = CompleteAbort
	}
	ts.parts = map[tpKey]int64{}
	ts.groups = map[string]bool{}
	ts.offsets = map[string]map[tpName]groupstore.Offset{}
	ts.updated = c.now()
	// Not fsynced: were it lost, recovery would find the markers and
	// write it again; the next durable write of this ID syncs it anyway.
	return c.persist(ts, false, aborted...)
}

// endTxn moves an Ongoing (or, for an abort, Empty/Complete with data)
// transaction to Prepare*, durably, then completes it. The caller holds
// ts.mu.
func (c *Coordinator) endTxn(ts *txnState, commit bool) error {
	prevState, prevUpdated := ts.state, ts.updated // back if the prepare is not written
	if commit {
		ts.state = PrepareCommit
	} else {
		ts.state = PrepareAbort
	}
	// Strictly later than the last Prepare time of this producer, to the
	// millisecond: it stamps the markers (complete).
	now := c.now().Truncate(time.Millisecond)
	if !now.After(ts.lastPrepare) {
		now = ts.lastPrepare.Add(time.Millisecond)
	}
	ts.updated, ts.lastPrepare = now, now
	if err := c.persist(ts, true); err != nil {
		ts.state, ts.updated = prevState, prevUpdated
		return err
	}
	return c.complete(ts, commit, false)
}

// addPartitions adds partitions to ts's transaction (starting it), durably.
// The caller holds ts.mu.
func (c *Coordinator) addPartitions(ts *txnState, ps []Partition) error {
	changed := false
	state, start, updated := ts.state, ts.start, ts.updated
	var added []tpKey
	if ts.state != Ongoing {
		ts.state = Ongoing
		ts.start = c.now()
		changed = true
	}
	for _, p := range ps {
		k := tpKey{p.TopicID(), p.Index()}
		if _, ok := ts.parts[k]; ok {
			continue
		}
		ts.parts[k] = p.LogEnd()
		added = append(added, k)
		changed = true
	}
	if !changed {
		return nil
	}
	ts.updated = c.now()
	if err := c.persist(ts, true); err != nil {
		// Not written (a full disk): as if never asked, so that the
		// retry writes it rather than finding nothing changed.
		for _, k := range added {
			delete(ts.parts, k)
		}
		ts.state, ts.start, ts.updated = state, start, updated
		return err
	}
	return nil
}

// OffsetPending reports whether an open transaction holds an offset for
// the group's partition (OffsetFetch with require_stable answers
// UNSTABLE_OFFSET_COMMIT then).
func (c *Coordinator) OffsetPending(group, topic string, part int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending[group][tpName{topic, part}]) > 0
}

// setPending records (or, with on false, clears) ts's staged offsets in
// the pending index. The caller holds ts.mu.
func (c *Coordinator) setPending(ts *txnState, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for g, offs := range ts.offsets {
		for tp := range offs {
			m := c.pending[g]
			if m == nil {
				if !on {
					continue
				}
				m = map[tpName]map[string]bool{}
				c.pending[g] = m
			}
			if on {
				if m[tp] == nil {
					m[tp] = map[string]bool{}
				}
				m[tp][ts.id] = true
				continue
			}
			delete(m[tp], ts.id)
			if len(m[tp]) == 0 {
				delete(m, tp)
			}
			if len(m) == 0 {
				delete(c.pending, g)
			}
		}
	}
}

// timeoutLoop aborts transactions that outlive their timeout, bumping the
// epoch so the producer that let it lapse is fenced, and expires idle IDs.
func (c *Coordinator) timeoutLoop() {
	defer c.wg.Done()
	tk := time.NewTicker(CheckInterval)
	defer tk.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-tk.C:
		}
		c.abortTimedOut()
		if err := c.log.maybeCompact(c.keepAborted); err != nil {
			c.slog.Error("compacting txn log", "err", err)
		}
	}
}

func (c *Coordinator) keepAborted(a abortedRecord) bool {
	id, ok := parseTopicID(a.Topic)
	if !ok {
		return false
	}
	p := c.parts.ByID(id, a.Partition)
	// An entry the cleaner dropped (its marker compacted away) goes too.
	return p != nil && a.Last >= p.CurrentLogStart() && c.abortedIndexed(p, a.PID, a.Last)
}

func (c *Coordinator) abortTimedOut() {
	now := c.now()
	c.mu.Lock()
	all := make([]*txnState, 0, len(c.txns))
	for _, ts := range c.txns {
		all = append(all, ts)
	}
	c.mu.Unlock()
	for _, ts := range all {
		ts.mu.Lock()
		switch {
		case ts.state == Ongoing && now.Sub(ts.start) > ts.timeout:
			c.slog.Info("aborting timed-out transaction", "transactional_id", ts.id, "producer_id", ts.pid, "epoch", ts.epoch)
			c.bump(ts)
			if err := c.endTxn(ts, false); err != nil {
				c.slog.Error("aborting timed-out transaction", "transactional_id", ts.id, "err", err)
			}
		case (ts.state == Empty || ts.state == CompleteCommit || ts.state == CompleteAbort) && now.Sub(ts.updated) > IDExpiry:
			ts.state = Dead
			if err := c.log.append(false, record{Removed: ts.id}); err == nil {
				c.mu.Lock()
				delete(c.txns, ts.id)
				delete(c.byPID, ts.pid)
				c.mu.Unlock()
			}
		}
		ts.mu.Unlock()
	}
}

// maxEpoch is the largest producer epoch; at it, a new producer ID is
// issued instead of a bump.
const maxEpoch = 32767

// bump raises ts's epoch (the caller checked it is below maxEpoch or
// accepts staying there). The caller holds ts.mu.
func (c *Coordinator) bump(ts *txnState) {
	if ts.epoch < maxEpoch {
		ts.lastEpoch = ts.epoch
		ts.epoch++
	}
	ts.endBumped = false
}

// bumpOrRenew bumps the epoch, or issues a new producer ID at epoch 0 when
// the epoch is exhausted. The caller holds ts.mu.
func (c *Coordinator) bumpOrRenew(ts *txnState) error {
	if ts.epoch < maxEpoch-1 {
		c.bump(ts)
		return nil
	}
	newPID, err := c.cfg.ProducerIDs.Allocate()
	if err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.byPID, ts.pid)
	c.byPID[newPID] = ts
	c.mu.Unlock()
	ts.pid, ts.epoch, ts.lastEpoch, ts.endBumped = newPID, 0, -1, false
	return nil
}

// DefaultTxnVersion is transaction.version on a broker whose level was
// never set: 2, as a new Kafka 4.x cluster finalizes it.
const DefaultTxnVersion = 2

// MaxTxnVersion is the highest transaction.version this coordinator
// implements.
const MaxTxnVersion = 2

// TxnVersion is the finalized transaction.version.
func (c *Coordinator) TxnVersion() int16 { return int16(c.txnVersion.Load()) }

// SetTxnVersion finalizes transaction.version at level (0 to
// MaxTxnVersion), durably. Transactions in flight keep the rules they
// started with; requests from then on are judged by the new level.
func (c *Coordinator) SetTxnVersion(level int16) error {
	if level < 0 || level > MaxTxnVersion {
		return fmt.Errorf("transaction.version %d outside [0, %d]", level, MaxTxnVersion)
	}
	c.tvMu.Lock() // orders the log record and the level alike
	defer c.tvMu.Unlock()
	epoch := c.featuresEpoch.Load() + 1
	if err := c.log.append(true, record{TxnVersion: &level, FeaturesEpoch: epoch}); err != nil {
		return err
	}
	c.txnVersion.Store(int32(level))
	c.featuresEpoch.Store(epoch)
	return nil
}

// FeaturesEpoch is the finalized features' epoch: 1, plus one per change
// of transaction.version (the only feature whose level changes).
func (c *Coordinator) FeaturesEpoch() int64 { return c.featuresEpoch.Load() }
