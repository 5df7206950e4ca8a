package broker

// The transaction coordinator: transactional IDs, their producer IDs and
// epochs, the partitions and group offsets of each open transaction, commit
// and abort markers, and per partition the last stable offset (LSO) and the
// aborted-transactions index that read_committed fetches need.
//
// EndTxn is synchronous: the PrepareCommit/PrepareAbort state is fsynced to
// the transaction log (txnlog.go), a control batch is appended to every
// partition of the transaction, pending TxnOffsetCommit offsets are
// committed to the group store (on commit), the markers are made durable,
// and only then is the client answered and the state CompleteCommit /
// CompleteAbort. Requests for the same transactional ID that arrive
// meanwhile wait on its lock, so CONCURRENT_TRANSACTIONS is only answered
// when a state is found half-done (after a storage error).
//
// Restart: the transaction log gives each ID's last state. Prepare* states
// are completed (markers that already reached a partition are found by
// scanning its batch headers from the offset recorded when the partition
// joined the transaction, so none is written twice); Ongoing transactions
// stay open, their partitions' first offsets found by the same scan, and
// are aborted by the timeout loop unless their producer ends them. The
// aborted index is persisted in the transaction log with each completed
// abort and rebuilt from it.
//
// Lock order: txnState.mu → partition.mu → partTxn.mu; txnCoordinator.mu
// is a leaf; txnLog.mu is held across an fsync and takes nothing else,
// except that its compaction asks keepAborted, which takes partTxn.mu
// (never held while writing to the transaction log).

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

type txnStateKind int8

const (
	txnEmpty txnStateKind = iota
	txnOngoing
	txnPrepareCommit
	txnPrepareAbort
	txnCompleteCommit
	txnCompleteAbort
	txnDead
)

func (k txnStateKind) String() string {
	switch k {
	case txnEmpty:
		return "Empty"
	case txnOngoing:
		return "Ongoing"
	case txnPrepareCommit:
		return "PrepareCommit"
	case txnPrepareAbort:
		return "PrepareAbort"
	case txnCompleteCommit:
		return "CompleteCommit"
	case txnCompleteAbort:
		return "CompleteAbort"
	}
	return "Dead"
}

const (
	// txnMaxTimeout is Kafka's transaction.max.timeout.ms.
	txnMaxTimeout = 15 * time.Minute
	// txnIDExpiry is Kafka's transactional.id.expiration.ms.
	txnIDExpiry = 7 * 24 * time.Hour
	// txnCheckInterval is how often timed-out transactions are looked
	// for (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms
	// is 10 s; a shorter one costs little here).
	txnCheckInterval = 500 * time.Millisecond
)

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
	timeout   time.Duration
	state     txnStateKind
	start     time.Time
	updated   time.Time
	// lastPrepare is the last Prepare time this run; markers are stamped
	// with it (complete).
	lastPrepare time.Time
	parts       map[tpKey]int64 // partitions of the open txn → LEO when added
	groups      map[string]bool // groups added by AddOffsetsToTxn
	offsets     map[string]map[tpName]groupstore.Offset
}

// partTxn is the transactional state of one partition.
type partTxn struct {
	mu      sync.Mutex
	open    map[int64]int64 // producer ID → first offset of its open txn
	aborted []abortedTxn    // ordered by marker offset
}

type abortedTxn struct {
	pid         int64
	first, last int64
}

type txnCoordinator struct {
	b   *Broker
	log *txnLog

	mu    sync.Mutex
	txns  map[string]*txnState
	byPID map[int64]*txnState
	// pending: group → partition → IDs of open transactions holding a
	// staged offset for it.
	pending map[string]map[tpName]map[string]bool

	parts sync.Map // *partition → *partTxn

	closing chan struct{}
	wg      sync.WaitGroup
}

// newTxnCoordinator replays the opened transaction log tl (its records
// recs) against the loaded topics. On error the caller still owns tl.
func newTxnCoordinator(b *Broker, tl *txnLog, recs []txnRecord) (*txnCoordinator, error) {
	c := &txnCoordinator{b: b, log: tl, txns: map[string]*txnState{}, byPID: map[int64]*txnState{},
		pending: map[string]map[tpName]map[string]bool{}, closing: make(chan struct{})}
	if err := c.recover(recs); err != nil {
		return nil, err
	}
	c.wg.Add(1)
	go c.timeoutLoop()
	return c, nil
}

func (c *txnCoordinator) close() error {
	close(c.closing)
	c.wg.Wait()
	return c.log.close()
}

// partitionByKey finds a partition by topic ID.
func (c *txnCoordinator) partitionByKey(k tpKey) *partition {
	t := c.b.topics.Load().byID[k.id]
	if t == nil {
		return nil
	}
	return t.partition(k.part)
}

func (c *txnCoordinator) partState(p *partition) *partTxn {
	if v, ok := c.parts.Load(p); ok {
		return v.(*partTxn)
	}
	v, _ := c.parts.LoadOrStore(p, &partTxn{open: map[int64]int64{}})
	return v.(*partTxn)
}

// withPartTxn runs fn with p's transaction state locked; false (fn not
// run) when p never had a transactional batch.
func (c *txnCoordinator) withPartTxn(p *partition, fn func(pt *partTxn)) bool {
	v, ok := c.parts.Load(p)
	if !ok {
		return false
	}
	pt := v.(*partTxn)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	fn(pt)
	return true
}

// abortedFrom is the index of the first aborted entry whose marker is at
// or after off (pt.mu held).
func (pt *partTxn) abortedFrom(off int64) int {
	return sort.Search(len(pt.aborted), func(i int) bool { return pt.aborted[i].last >= off })
}

// lastStable is the partition's LSO: the first offset of its oldest open
// transaction, or hw, the high watermark of its store.
func (c *txnCoordinator) lastStable(p *partition, hw int64) int64 {
	c.withPartTxn(p, func(pt *partTxn) {
		for _, f := range pt.open {
			hw = min(hw, f)
		}
	})
	return hw
}

// abortedIn returns the aborted transactions overlapping [from, to).
func (c *txnCoordinator) abortedIn(p *partition, from, to int64) []abortedTxn {
	var out []abortedTxn
	c.withPartTxn(p, func(pt *partTxn) {
		for _, a := range pt.aborted[pt.abortedFrom(from):] {
			if a.first < to {
				out = append(out, a)
			}
		}
	})
	slices.SortFunc(out, func(a, b abortedTxn) int { return int(min(max(a.first-b.first, -1), 1)) })
	return out
}

// abortedHolds reports whether an aborted transaction of pid covers
// offset off: abortedIn's question for one batch, asked per batch by the
// shipper, so without abortedIn's slice and sort.
func (c *txnCoordinator) abortedHolds(p *partition, pid, off int64) bool {
	held := false
	c.withPartTxn(p, func(pt *partTxn) {
		held = slices.ContainsFunc(pt.aborted[pt.abortedFrom(off):], func(a abortedTxn) bool {
			return a.pid == pid && a.first <= off
		})
	})
	return held
}

func (c *txnCoordinator) get(id string) *txnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txns[id]
}

func (c *txnCoordinator) getPID(pid int64) *txnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byPID[pid]
}

// snapshot is ts's persisted form. The caller holds ts.mu.
func (ts *txnState) snapshot() *txnSnapshot {
	s := &txnSnapshot{ID: ts.id, PID: ts.pid, Epoch: ts.epoch, LastEpoch: ts.lastEpoch, TimeoutMs: ts.timeout.Milliseconds(),
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
	for g, offs := range ts.offsets {
		for tp, o := range offs {
			s.Offsets = append(s.Offsets, offsetsRecord{Group: g, Topic: tp.topic, Partition: tp.part, Offset: o.Offset, Epoch: o.LeaderEpoch, Metadata: o.Metadata})
		}
	}
	return s
}

// persist writes ts's state; durable asks for an fsync (policy permitting).
// The caller holds ts.mu.
func (c *txnCoordinator) persist(ts *txnState, durable bool, aborted ...abortedRecord) error {
	return c.log.append(durable, txnRecord{Txn: ts.snapshot(), Aborted: aborted})
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

// recover rebuilds state from the log's records and finishes what a crash
// interrupted.
func (c *txnCoordinator) recover(recs []txnRecord) error {
	for _, a := range c.log.aborted {
		id, ok := parseTopicID(a.Topic)
		if !ok {
			continue
		}
		p := c.partitionByKey(tpKey{id, a.Partition})
		if p == nil {
			continue
		}
		pt := c.partState(p)
		pt.aborted = append(pt.aborted, abortedTxn{pid: a.PID, first: a.First, last: a.Last})
	}
	c.parts.Range(func(k, v any) bool {
		pt := v.(*partTxn)
		sort.Slice(pt.aborted, func(i, j int) bool { return pt.aborted[i].last < pt.aborted[j].last })
		// Compaction may have removed markers of entries the
		// transaction log still holds (see cleaner.go).
		c.pruneAborted(k.(*partition), pt)
		return true
	})
	for _, s := range c.log.live {
		ts := &txnState{id: s.ID, pid: s.PID, epoch: s.Epoch, lastEpoch: s.LastEpoch, timeout: time.Duration(s.TimeoutMs) * time.Millisecond,
			state: s.State, start: time.UnixMilli(s.StartMs), updated: time.UnixMilli(s.UpdateMs), lastPrepare: time.UnixMilli(s.UpdateMs),
			parts: map[tpKey]int64{}, groups: map[string]bool{}, offsets: map[string]map[tpName]groupstore.Offset{}}
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
		if ts.state == txnOngoing || ts.state == txnPrepareCommit {
			c.setPending(ts, true)
		}
	}
	for _, ts := range c.txns {
		ts.mu.Lock()
		var err error
		switch ts.state {
		case txnOngoing:
			for k, start := range ts.parts {
				p := c.partitionByKey(k)
				if p == nil {
					continue
				}
				// Data closed by a marker (a WriteTxnMarkers abort) is not
				// open; data after that marker is.
				st := c.b.storeOf(p)
				first, marker, err := scanTxn(st, p, ts.pid, start)
				for err == nil && marker >= 0 {
					first, marker, err = scanTxn(st, p, ts.pid, marker+1)
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
		case txnPrepareCommit, txnPrepareAbort:
			err = c.complete(ts, ts.state == txnPrepareCommit, true)
		}
		ts.mu.Unlock()
		if err != nil {
			return fmt.Errorf("broker: completing transaction %q: %w", ts.id, err)
		}
	}
	return nil
}

// scanTxn reads the batch headers of p from start and returns the offset of
// the first transactional data batch of pid and of its first marker after
// that (-1 when absent).
func scanTxn(st partitionStore, p *partition, pid int64, start int64) (first, marker int64, err error) {
	first, marker = -1, -1
	start = max(start, st.logStart())
	if start >= st.logEnd() {
		return -1, -1, nil
	}
	err = st.eachBatchHeader(start, func(h *records.BatchHeader) bool {
		if h.ProducerID != pid || !h.IsTransactional() {
			return true
		}
		if h.IsControl() {
			marker = h.BaseOffset
			return false
		}
		if first < 0 {
			first = h.BaseOffset
		}
		return true
	})
	if errors.Is(err, logstore.ErrOffsetOutOfRange) {
		return -1, -1, nil
	}
	if err != nil {
		return -1, -1, fmt.Errorf("scanning %s-%d: %w", p.topic.name, p.index, err)
	}
	return first, marker, nil
}

// controlBatch builds a commit or abort marker of coordinator epoch 0.
func controlBatch(pid int64, epoch int16, commit bool, now time.Time) []byte {
	return controlBatchOf(pid, epoch, 0, commit, now)
}

// controlBatchOf builds a commit or abort marker.
func controlBatchOf(pid int64, epoch int16, coordinatorEpoch int32, commit bool, now time.Time) []byte {
	key := []byte{0, 0, 0, 0} // version 0, type 0 = abort
	if commit {
		key[3] = 1
	}
	value := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch)) // version 0, coordinator epoch
	b, err := records.AppendBatch(nil, records.BatchSpec{
		Transactional: true, Control: true, FirstTimestamp: now.UnixMilli(),
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1,
	}, []records.Record{{Key: key, Value: value}})
	if err != nil {
		panic(err) // a fixed one-record batch always encodes
	}
	return b
}

// writeMarker appends a marker for pid to p, stamped at (the coordinator
// stamps every marker of one transaction with the same time, which tells
// a transaction's markers apart from its producer's others;
// uplink_txn.go), and updates p's open and aborted sets. It returns the
// offset after the marker.
func (c *txnCoordinator) writeMarker(p *partition, pid int64, epoch int16, commit bool, at time.Time) (int64, error) {
	end, _, _, err := c.writeMarkerChecked(p, pid, epoch, 0, commit, false, at)
	return end, err
}

// errStaleMarkerEpoch: a WriteTxnMarkers marker older than the producer's
// epoch on the partition (INVALID_PRODUCER_EPOCH).
var errStaleMarkerEpoch = errors.New("marker epoch older than the producer's")

// writeMarkerChecked is writeMarker for a marker from outside the
// coordinator (WriteTxnMarkers): with checkEpoch it refuses one older than
// the producer's epoch on p. It also returns the first offset of the
// transaction the marker closed (-1 if none was open) and the marker's
// offset.
func (c *txnCoordinator) writeMarkerChecked(p *partition, pid int64, epoch int16, coordinatorEpoch int32, commit, checkEpoch bool, at time.Time) (end, first, marker int64, err error) {
	now := c.b.now()
	batch := controlBatchOf(pid, epoch, coordinatorEpoch, commit, at)
	st := c.b.storeOf(p) // before p.mu: opening a spool takes it
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.producersLoaded {
		p.loadProducerState(c.b.log, now)
	}
	if st := p.producers[pid]; checkEpoch && st != nil && epoch < st.epoch {
		return 0, -1, -1, errStaleMarkerEpoch
	}
	res, err := st.appendMarker(batch)
	if err != nil {
		return 0, -1, -1, err
	}
	// A marker at a newer epoch fences older ones on this partition too.
	if st := p.producers[pid]; st != nil && st.epoch < epoch {
		*st = producerState{epoch: epoch, lastSeq: -1, updated: now}
		p.producersGen++
	}
	pt := c.partState(p)
	pt.mu.Lock()
	first = -1
	if f, ok := pt.open[pid]; ok {
		first = f
		delete(pt.open, pid)
		if !commit {
			pt.aborted = append(pt.aborted, abortedTxn{pid: pid, first: f, last: res.BaseOffset})
		}
	}
	pt.mu.Unlock()
	return res.LastOffset + 1, first, res.BaseOffset, nil
}

// logEnd is a store and the offset after a marker written to it, whose
// durability the answer waits for.
type logEnd struct {
	st  partitionStore
	end int64
}

// complete finishes a transaction whose Prepare state is durable: markers,
// offsets, then the Complete state. recovering: markers may already be in
// some partitions. The caller holds ts.mu.
func (c *txnCoordinator) complete(ts *txnState, commit, recovering bool) error {
	var waits []logEnd
	var aborted []abortedRecord
	// Every marker carries the Prepare time (endTxn keeps it increasing per
	// producer); the uplink learns the forwarded partitions holding data of
	// a committed transaction before any marker releases them.
	at := ts.updated
	var forwarded []*partition
	if commit && !recovering && c.b.uplink != nil {
		for k := range ts.parts {
			if p := c.partitionByKey(k); p != nil && c.forwarded(p) && c.holdsOpen(p, ts.pid) {
				forwarded = append(forwarded, p)
			}
		}
		c.b.uplink.txs.noteCommit(txnKey{ts.pid, at.UnixMilli()}, forwarded)
	}
	for k, start := range ts.parts {
		p := c.partitionByKey(k)
		if p == nil {
			continue // topic deleted meanwhile
		}
		if recovering {
			first, marker, err := scanTxn(c.b.storeOf(p), p, ts.pid, start)
			if err != nil {
				return err
			}
			if commit && first >= 0 && c.forwarded(p) {
				forwarded = append(forwarded, p)
			}
			if marker >= 0 {
				if !commit && first >= 0 {
					aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(k.id[:]), Partition: k.part, PID: ts.pid, First: first, Last: marker})
					pt := c.partState(p)
					pt.mu.Lock()
					pt.aborted = append(pt.aborted, abortedTxn{ts.pid, first, marker})
					sort.Slice(pt.aborted, func(i, j int) bool { return pt.aborted[i].last < pt.aborted[j].last })
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
			return fmt.Errorf("writing marker to %s-%d: %w", p.topic.name, p.index, err)
		}
		if open && !commit {
			aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(k.id[:]), Partition: k.part, PID: ts.pid, First: first, Last: end - 1})
		}
		waits = append(waits, logEnd{c.b.storeOf(p), end})
	}
	if commit && recovering && c.b.uplink != nil {
		c.b.uplink.txs.noteCommit(txnKey{ts.pid, at.UnixMilli()}, forwarded)
	}
	if commit {
		for g, offs := range ts.offsets {
			commits := make([]groupstore.Commit, 0, len(offs))
			for tp, o := range offs {
				o.CommitMs = c.b.now().UnixMilli()
				commits = append(commits, groupstore.Commit{Topic: tp.topic, Partition: tp.part, Offset: o})
			}
			if err := c.commitOffsets(g, commits); err != nil {
				return fmt.Errorf("committing offsets of group %s: %w", g, err)
			}
		}
	}
	for _, w := range waits {
		if err := w.st.waitDurable(context.Background(), w.end); err != nil {
			return err
		}
	}
	c.setPending(ts, false)
	if commit {
		ts.state = txnCompleteCommit
	} else {
		ts.state = txnCompleteAbort
	}
	ts.parts = map[tpKey]int64{}
	ts.groups = map[string]bool{}
	ts.offsets = map[string]map[tpName]groupstore.Offset{}
	ts.updated = c.b.now()
	// Not fsynced: were it lost, recovery would find the markers and
	// write it again; the next durable write of this ID syncs it anyway.
	return c.persist(ts, false, aborted...)
}

// forwarded reports whether p's committed data goes upstream (in the
// uplink's transactions).
func (c *txnCoordinator) forwarded(p *partition) bool {
	return c.b.uplink != nil && c.b.forwardOf(p) != nil
}

// holdsOpen reports whether pid has data of an open transaction in p.
func (c *txnCoordinator) holdsOpen(p *partition, pid int64) bool {
	open := false
	c.withPartTxn(p, func(pt *partTxn) { _, open = pt.open[pid] })
	return open
}

// endTxn moves an Ongoing (or, for an abort, Empty/Complete with data)
// transaction to Prepare*, durably, then completes it. The caller holds
// ts.mu.
func (c *txnCoordinator) endTxn(ts *txnState, commit bool) error {
	prevState, prevUpdated := ts.state, ts.updated // back if the prepare is not written
	if commit {
		ts.state = txnPrepareCommit
	} else {
		ts.state = txnPrepareAbort
	}
	// Strictly later than the last Prepare time of this producer, to the
	// millisecond: it stamps the markers (complete).
	now := c.b.now().Truncate(time.Millisecond)
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
func (c *txnCoordinator) addPartitions(ts *txnState, ps []*partition) error {
	changed := false
	state, start, updated := ts.state, ts.start, ts.updated
	var added []tpKey
	if ts.state != txnOngoing {
		ts.state = txnOngoing
		ts.start = c.b.now()
		changed = true
	}
	for _, p := range ps {
		k := tpKey{p.topic.id, p.index}
		if _, ok := ts.parts[k]; ok {
			continue
		}
		ts.parts[k] = c.b.storeOf(p).logEnd()
		added = append(added, k)
		changed = true
	}
	if !changed {
		return nil
	}
	ts.updated = c.b.now()
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

// commitOffsets hands a committed transaction's offsets to the group
// coordinator.
func (c *txnCoordinator) commitOffsets(group string, commits []groupstore.Commit) error {
	return c.b.groups.CommitTransactionalOffsets(group, commits)
}

// offsetPending reports whether an open transaction holds an offset for
// the group's partition (OffsetFetch with require_stable answers
// UNSTABLE_OFFSET_COMMIT then).
func (c *txnCoordinator) offsetPending(group, topic string, part int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending[group][tpName{topic, part}]) > 0
}

// setPending records (or, with on false, clears) ts's staged offsets in
// the pending index. The caller holds ts.mu.
func (c *txnCoordinator) setPending(ts *txnState, on bool) {
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
func (c *txnCoordinator) timeoutLoop() {
	defer c.wg.Done()
	tk := time.NewTicker(txnCheckInterval)
	defer tk.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-tk.C:
		}
		c.abortTimedOut()
		if err := c.log.maybeCompact(c.keepAborted); err != nil {
			c.b.log.Error("compacting txn log", "err", err)
		}
	}
}

func (c *txnCoordinator) keepAborted(a abortedRecord) bool {
	id, ok := parseTopicID(a.Topic)
	if !ok {
		return false
	}
	p := c.partitionByKey(tpKey{id, a.Partition})
	// An entry the cleaner dropped (its marker compacted away) goes too.
	return p != nil && a.Last >= p.store().logStart() && c.abortedIndexed(p, a.PID, a.Last)
}

func (c *txnCoordinator) abortTimedOut() {
	now := c.b.now()
	c.mu.Lock()
	all := make([]*txnState, 0, len(c.txns))
	for _, ts := range c.txns {
		all = append(all, ts)
	}
	c.mu.Unlock()
	for _, ts := range all {
		ts.mu.Lock()
		switch {
		case ts.state == txnOngoing && now.Sub(ts.start) > ts.timeout:
			c.b.log.Info("aborting timed-out transaction", "transactional_id", ts.id, "producer_id", ts.pid, "epoch", ts.epoch)
			if ts.epoch < maxEpoch {
				ts.lastEpoch = ts.epoch
				ts.epoch++
			}
			if err := c.endTxn(ts, false); err != nil {
				c.b.log.Error("aborting timed-out transaction", "transactional_id", ts.id, "err", err)
			}
		case (ts.state == txnEmpty || ts.state == txnCompleteCommit || ts.state == txnCompleteAbort) && now.Sub(ts.updated) > txnIDExpiry:
			ts.state = txnDead
			if err := c.log.append(false, txnRecord{Removed: ts.id}); err == nil {
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

// fencedCode is the error for an old epoch, as each version's clients
// expect it (KIP-588 added PRODUCER_FENCED).
func fencedCode(key, version int16) int16 {
	newEnough := map[int16]int16{22: 4, 24: 2, 25: 2, 26: 2, 28: 3}[key]
	if version >= newEnough {
		return kerr.ProducerFenced.Code
	}
	return kerr.InvalidProducerEpoch.Code
}

// checkProducer validates a request's producer ID and epoch against ts. The
// caller holds ts.mu.
func checkProducer(ts *txnState, pid int64, epoch int16, key, version int16) int16 {
	switch {
	case ts.pid != pid:
		return kerr.InvalidProducerIDMapping.Code
	case epoch < ts.epoch:
		return fencedCode(key, version)
	case epoch > ts.epoch:
		return kerr.InvalidProducerEpoch.Code
	}
	return 0
}

// beginProduce checks a transactional batch for p against its transaction
// and, for Produce v12+ (KIP-890), adds p to it implicitly. On success it
// returns with ts.mu held (call the returned func to release it after the
// append) so that an EndTxn cannot slip between check and append.
func (c *txnCoordinator) beginProduce(p *partition, h *records.BatchHeader, version int16) (func(), int16, error) {
	ts := c.getPID(h.ProducerID)
	if ts == nil {
		return nil, kerr.InvalidProducerIDMapping.Code, fmt.Errorf("no transaction for producer %d", h.ProducerID)
	}
	ts.mu.Lock()
	if code := checkProducer(ts, h.ProducerID, h.ProducerEpoch, 0, version); code != 0 {
		ts.mu.Unlock()
		if code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		return nil, code, fmt.Errorf("producer %d epoch %d: current epoch %d", h.ProducerID, h.ProducerEpoch, ts.epoch)
	}
	_, in := ts.parts[tpKey{p.topic.id, p.index}]
	if !in || ts.state != txnOngoing {
		implicit := version >= 12 && (ts.state == txnOngoing || ts.state == txnEmpty || ts.state == txnCompleteCommit || ts.state == txnCompleteAbort)
		if !implicit {
			ts.mu.Unlock()
			return nil, kerr.InvalidTxnState.Code, fmt.Errorf("partition %s-%d is not in the transaction of %q (state %s)", p.topic.name, p.index, ts.id, ts.state)
		}
		if err := c.addPartitions(ts, []*partition{p}); err != nil {
			ts.mu.Unlock()
			return nil, kerr.KafkaStorageError.Code, err
		}
	}
	return ts.mu.Unlock, 0, nil
}

// producing marks pid's transaction open on p before its batch is appended
// (at logEnd, the store's end: a lower bound of the batch's offset, so the
// LSO never passes it); produced corrects it to the batch's offset. Called
// under p.mu.
func (c *txnCoordinator) producing(p *partition, pid int64, logEnd int64) (added bool) {
	pt := c.partState(p)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if _, ok := pt.open[pid]; ok {
		return false
	}
	pt.open[pid] = logEnd
	return true
}

func (c *txnCoordinator) produced(p *partition, pid int64, base int64, err error) {
	pt := c.partState(p)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if err != nil {
		delete(pt.open, pid)
		return
	}
	pt.open[pid] = base
}

// initProducerID is InitProducerId for a transactional ID: a new ID starts
// at epoch 0; an existing one has its open transaction aborted and its
// epoch bumped, fencing the previous producer (a new producer ID once the
// epoch is exhausted).
func (c *txnCoordinator) initProducerID(id string, timeoutMs int32, pid int64, epoch int16, version int16) (int64, int16, int16, error) {
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > txnMaxTimeout {
		return -1, -1, kerr.InvalidTransactionTimeout.Code, fmt.Errorf("transaction timeout %d ms outside (0, %d]", timeoutMs, txnMaxTimeout.Milliseconds())
	}
	timeout := time.Duration(timeoutMs) * time.Millisecond
	c.mu.Lock()
	ts := c.txns[id]
	if ts == nil {
		ts = &txnState{id: id, pid: -1, lastEpoch: -1, parts: map[tpKey]int64{}, groups: map[string]bool{}, offsets: map[string]map[tpName]groupstore.Offset{}}
		c.txns[id] = ts
	}
	c.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := c.b.now()
	if ts.pid < 0 {
		newPID, err := c.b.producers.allocate()
		if err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		ts.pid, ts.epoch, ts.state, ts.timeout, ts.updated = newPID, 0, txnEmpty, timeout, now
		if err := c.persist(ts, true); err != nil {
			ts.pid = -1
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		c.mu.Lock()
		c.byPID[ts.pid] = ts
		c.mu.Unlock()
		return ts.pid, ts.epoch, 0, nil
	}
	if pid >= 0 {
		// KIP-360: the producer says who it was; only the current
		// producer (or a retry of the last bump) may re-initialize.
		if pid != ts.pid || (epoch != ts.epoch && epoch != ts.lastEpoch) {
			return -1, -1, fencedCode(22, version), fmt.Errorf("producer %d epoch %d is not the current producer %d epoch %d", pid, epoch, ts.pid, ts.epoch)
		}
	}
	switch ts.state {
	case txnPrepareCommit, txnPrepareAbort:
		// A completion failed half-way; finish it first.
		if err := c.complete(ts, ts.state == txnPrepareCommit, true); err != nil {
			return -1, -1, kerr.ConcurrentTransactions.Code, err
		}
	case txnOngoing:
		c.bump(ts)
		if err := c.endTxn(ts, false); err != nil {
			return -1, -1, kerr.ConcurrentTransactions.Code, err
		}
		ts.timeout = timeout
		if err := c.persist(ts, true); err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		return ts.pid, ts.epoch, 0, nil
	}
	if err := c.bumpOrRenew(ts); err != nil {
		return -1, -1, kerr.KafkaStorageError.Code, err
	}
	ts.timeout, ts.state, ts.updated = timeout, txnEmpty, now
	if err := c.persist(ts, true); err != nil {
		return -1, -1, kerr.KafkaStorageError.Code, err
	}
	return ts.pid, ts.epoch, 0, nil
}

// bump raises ts's epoch (the caller checked it is below maxEpoch or
// accepts staying there). The caller holds ts.mu.
func (c *txnCoordinator) bump(ts *txnState) {
	if ts.epoch < maxEpoch {
		ts.lastEpoch = ts.epoch
		ts.epoch++
	}
}

// bumpOrRenew bumps the epoch, or issues a new producer ID at epoch 0 when
// the epoch is exhausted. The caller holds ts.mu.
func (c *txnCoordinator) bumpOrRenew(ts *txnState) error {
	if ts.epoch < maxEpoch-1 {
		c.bump(ts)
		return nil
	}
	newPID, err := c.b.producers.allocate()
	if err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.byPID, ts.pid)
	c.byPID[newPID] = ts
	c.mu.Unlock()
	ts.pid, ts.epoch, ts.lastEpoch = newPID, 0, -1
	return nil
}

// lookup finds a transactional ID and checks the request's producer. On
// success it returns with ts.mu held.
func (c *txnCoordinator) lookup(id string, pid int64, epoch int16, key, version int16) (*txnState, int16) {
	ts := c.get(id)
	if ts == nil {
		return nil, kerr.InvalidProducerIDMapping.Code
	}
	ts.mu.Lock()
	if ts.pid < 0 || ts.state == txnDead {
		ts.mu.Unlock()
		return nil, kerr.InvalidProducerIDMapping.Code
	}
	if code := checkProducer(ts, pid, epoch, key, version); code != 0 {
		ts.mu.Unlock()
		return nil, code
	}
	if ts.state == txnPrepareCommit || ts.state == txnPrepareAbort {
		if err := c.complete(ts, ts.state == txnPrepareCommit, true); err != nil {
			ts.mu.Unlock()
			return nil, kerr.ConcurrentTransactions.Code
		}
	}
	return ts, 0
}
