package uplink

// Committed transactions shipped upstream with their boundaries.
//
// A forwarder ships the partition's non-transactional data on its own, as
// its idempotent producer (ship.go). When the next batch to ship is
// data of a committed transaction it parks, and the uplink's transaction
// shipper takes over: it ships that transaction's records in every
// forwarded partition it touched inside one upstream transaction, as the
// uplink's transactional producer, and commits it; read_committed
// consumers upstream then see the whole transaction or none of it.
//
// A round is closed over interleaving. In each partition a round ships a
// contiguous run from where its forwarder parked to the last marker of
// the round's transactions there, so every committed transaction with
// data inside such a run joins the round, with its own partitions (two
// producers whose transactions overlap in two partitions in opposite
// orders would otherwise wait on each other forever). Non-transactional
// records inside a run go in the upstream transaction too; aborted records
// and markers never go. The shipper waits while a run would reach past
// the partition's last stable offset (an open transaction inside it) or a
// member partition's forwarder has not reached its share yet.
//
// Membership. The coordinator tells the shipper, before any marker of a
// committed transaction is written, which forwarded partitions hold its
// data (txnCoordinator.complete); the transaction is named by its
// producer ID and the time stamped on all of its markers, strictly
// increasing per producer. After a restart that memory is gone: the first
// transaction the shipper cannot name is looked up by one walk over the
// unshipped part of every forwarded spool, which groups commit markers by
// that name.
//
// Exactly once across a crash. The transactional.id is
// minikafka-uplink-<local cluster ID>, stable across restarts, so each
// InitProducerID fences the previous incarnation and aborts a round it
// left open. Each round also commits, inside the upstream transaction, the
// local offset up to which it shipped each partition as the offset of the
// upstream group of the same name (metadata: the local topic ID and the
// transaction whose marker ends the share, which must be the record before
// the position, so a recreated topic, or a spool that lost records to a
// crash under durability never, never trusts an old position). After every
// InitProducerID the shipper reads those positions back (RequireStable):
// a round that committed upstream but whose local acknowledgement was
// lost is recognized and not shipped again; one that did not commit was
// aborted upstream and is shipped again.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/spool"
)

// txnKey names one committed transaction: its producer ID and the
// timestamp of its markers.
type txnKey struct {
	pid   int64
	stamp int64
}

const (
	// upTxnTimeout is the upstream transaction timeout asked for: a round
	// carries whole local transactions, which may be large, over a link
	// that may be slow. An upstream whose transaction.max.timeout.ms is
	// lower refuses it, and upTxnTimeoutLow is asked for instead.
	upTxnTimeout    = 5 * time.Minute
	upTxnTimeoutLow = time.Minute
	// coordinatorTimeout bounds each request to the upstream's
	// coordinators (kgo retries retriable errors until then).
	coordinatorTimeout = 30 * time.Second
	// shareWorkers is how many shares of a round ship at once (each
	// holds up to 8 MiB of spool records).
	shareWorkers = 8
)

type txnShipper struct {
	u     *Uplink
	txnID string // upstream transactional.id, and the group of positions

	mu sync.Mutex
	// members: committed transaction → forwarded partitions with its data.
	members map[txnKey][]Partition
	scanned bool // the post-restart walk was done
	parked  map[*Forwarder]*parkSlot
	wake    chan struct{}

	// Owned by run.
	pid       int64 // -1: InitProducerID first
	epoch     int16
	seqs      map[partKey]int32
	positions map[tpName]upPosition

	// Visible: rounds committed upstream since start.
	rounds   int64
	shownPID int64
}

type parkSlot struct {
	from int64      // first spool record of the forwarder's share
	done chan int64 // where the forwarder goes on
}

// upPosition is a position committed upstream: the local offset after the
// last record shipped, and the local topic it belongs to.
type upPosition struct {
	next    int64
	topicID string // hex, as positionMeta writes it
	end     txnKey // the transaction whose marker ends the share
}

func newTxnShipper(u *Uplink) *txnShipper {
	return &txnShipper{u: u, txnID: "minikafka-uplink-" + u.env.ClusterID, members: map[txnKey][]Partition{},
		parked: map[*Forwarder]*parkSlot{}, wake: make(chan struct{}, 1), pid: -1, shownPID: -1}
}

// NoteCommit records the forwarded partitions holding data of a
// transaction about to be committed: the broker's transaction coordinator
// calls it before writing any marker of the transaction, which is named by
// its producer ID and the timestamp on all of its markers (strictly
// increasing per producer).
func (u *Uplink) NoteCommit(pid, stamp int64, parts []Partition) {
	u.txs.noteCommit(txnKey{pid, stamp}, parts)
}

func (s *txnShipper) noteCommit(k txnKey, parts []Partition) {
	if len(parts) == 0 {
		return
	}
	s.mu.Lock()
	s.members[k] = parts
	s.mu.Unlock()
	s.poke()
}

// forgetTopic drops a deleted topic's partitions from the transactions
// waiting to ship, and the transactions left with none.
func (s *txnShipper) forgetTopic(id [16]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ps := range s.members {
		// A new slice: membersOf hands out the old one.
		ps = slices.DeleteFunc(slices.Clone(ps), func(p Partition) bool { return p.TopicID() == id })
		if len(ps) == 0 {
			delete(s.members, k)
		} else {
			s.members[k] = ps
		}
	}
}

// stat returns the transactional ID, its producer ID and the rounds
// committed since start.
func (s *txnShipper) stat() (string, int64, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txnID, s.shownPID, s.rounds
}

func (s *txnShipper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// park hands the forwarder's partition to the shipper from spool record
// from on, which is committed transactional data, and waits for the round
// that ships it: it returns the next record to read, false when stopped.
func (s *txnShipper) park(f *Forwarder, from int64) (int64, bool) {
	slot := &parkSlot{from: from, done: make(chan int64, 1)}
	s.mu.Lock()
	s.parked[f] = slot
	s.mu.Unlock()
	s.poke()
	f.setState(stateTxnWait)
	select {
	case next := <-slot.done:
		return next, true
	case <-f.quit:
		s.mu.Lock()
		if s.parked[f] == slot {
			delete(s.parked, f)
		}
		s.mu.Unlock()
		return 0, false
	}
}

// run ships rounds as forwarders park.
func (s *txnShipper) run() {
	defer s.u.wg.Done()
	select {
	case <-s.u.ready:
	case <-s.u.ctx.Done():
		return
	}
	backoff := 100 * time.Millisecond
	for {
		waiting := s.hasParked()
		var tick <-chan time.Time
		var t *time.Timer
		if waiting {
			// A round may wait on an open transaction or another
			// forwarder: looked at again shortly.
			t = time.NewTimer(20 * time.Millisecond)
			tick = t.C
		}
		select {
		case <-s.u.ctx.Done():
			return
		case <-s.wake:
		case <-tick:
		}
		if t != nil {
			t.Stop()
		}
		if !s.hasParked() {
			continue
		}
		if err := s.step(); err != nil {
			if s.u.ctx.Err() != nil {
				return
			}
			s.u.log.Warn("forwarding: upstream transaction failed; retrying", "transactional_id", s.txnID, "err", err)
			s.noteErr(err)
			s.pid = -1 // the next InitProducerID aborts what is left upstream
			t := time.NewTimer(backoff)
			select {
			case <-s.u.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, 5*time.Second)
			s.poke()
			continue
		}
		backoff = 100 * time.Millisecond
	}
}

// errRoundWaits: a round cannot be formed yet; parked forwarders wait.
var errRoundWaits = errors.New("round waits")

// step releases parked forwarders whose share is already upstream, then
// plans and ships one round if one is ready.
func (s *txnShipper) step() error {
	ctx := s.u.ctx
	if s.pid < 0 {
		if err := s.initProducer(ctx); err != nil {
			return err
		}
	}
	parked := s.snapshot()
	for f, from := range parked {
		if pos, ok := s.positions[tpName{f.upstream, f.index}]; ok && pos.next > from && s.positionHolds(f, pos) {
			// Shipped by a round whose local acknowledgement a crash took.
			s.release(f, pos.next-1, 0, 0)
			delete(parked, f)
		}
	}
	if len(parked) == 0 {
		return nil
	}
	// The oldest data first; a round that waits (on a member partition
	// whose forwarder is stuck behind its own data, say) does not hold
	// back one that does not need it. A round that needs a waiting
	// round's partition walks that round's run too, so it waits as well.
	starts := make([]*Forwarder, 0, len(parked))
	for f := range parked {
		starts = append(starts, f)
	}
	sort.Slice(starts, func(i, j int) bool {
		a, b := starts[i], starts[j]
		if parked[a] != parked[b] {
			return parked[a] < parked[b]
		}
		return lessPart(a, b)
	})
	for _, f0 := range starts {
		r, err := s.plan(parked, f0)
		if errors.Is(err, errRoundWaits) {
			continue
		}
		if err != nil {
			return err
		}
		return s.ship(ctx, r)
	}
	return nil
}

func (s *txnShipper) hasParked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.parked) > 0
}

func (s *txnShipper) snapshot() map[*Forwarder]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[*Forwarder]int64, len(s.parked))
	for f, slot := range s.parked {
		out[f] = slot.from
	}
	return out
}

// positionHolds reports whether a position committed upstream is one of
// this spool: same local topic, and the record before it is the marker
// that ended the share. A position of a recreated topic, or one past
// records a crash took from the spool under durability never, is not.
func (s *txnShipper) positionHolds(f *Forwarder, pos upPosition) bool {
	if pos.topicID != hex.EncodeToString(f.topicID[:]) {
		return false
	}
	holds := false
	f.EachBatchHeader(pos.next-1, func(h *records.BatchHeader) bool {
		holds = h.BaseOffset == pos.next-1 && h.IsControl() && h.ProducerID == pos.end.pid && h.FirstTimestamp == pos.end.stamp
		return false
	})
	return holds
}

// positionMeta is a position's metadata upstream: the local topic ID and
// the transaction whose marker ends the share.
func positionMeta(topicID [16]byte, end txnKey) string {
	return fmt.Sprintf("%s %d %d", hex.EncodeToString(topicID[:]), end.pid, end.stamp)
}

// parsePosition reads a position committed upstream; one whose metadata
// is not positionMeta's (written by something else) names no topic.
func parsePosition(next int64, meta string) upPosition {
	pos := upPosition{next: next}
	if _, err := fmt.Sscanf(meta, "%s %d %d", &pos.topicID, &pos.end.pid, &pos.end.stamp); err != nil {
		return upPosition{next: next}
	}
	return pos
}

// release lets a parked forwarder go on after last, noting what was
// shipped for it.
func (s *txnShipper) release(f *Forwarder, last int64, recs, bytes int) {
	f.ackedThrough(last, recs, bytes)
	s.mu.Lock()
	slot := s.parked[f]
	delete(s.parked, f)
	s.mu.Unlock()
	if slot != nil {
		slot.done <- last + 1
	}
}

// noteErr shows err as the last error of every parked forwarder (a
// failed round holds them all).
func (s *txnShipper) noteErr(err error) {
	for f := range s.snapshot() {
		f.errCount.Add(1)
		f.setErr(err)
	}
}

// txnShare is one partition's part of a round: spool records [from, to].
type txnShare struct {
	f        *Forwarder
	from, to int64
	end      txnKey // the transaction whose marker is at to
}

type txnRound struct {
	shares []*txnShare
	txns   map[txnKey]bool
}

// plan forms the round that starts with parked forwarder f0's share,
// closed as the file comment says.
func (s *txnShipper) plan(parked map[*Forwarder]int64, f0 *Forwarder) (*txnRound, error) {
	r := &txnRound{txns: map[txnKey]bool{}}
	byF := map[*Forwarder]*txnShare{}
	var queue []*txnShare // shares whose run is to be walked (again)
	add := func(f *Forwarder) (*txnShare, error) {
		if sh := byF[f]; sh != nil {
			return sh, nil
		}
		from, ok := parked[f]
		if !ok {
			return nil, errRoundWaits // its forwarder has not reached its share
		}
		sh := &txnShare{f: f, from: from, to: from}
		byF[f] = sh
		r.shares = append(r.shares, sh)
		queue = append(queue, sh)
		return sh, nil
	}
	if _, err := add(f0); err != nil {
		return nil, err
	}
	for len(queue) > 0 {
		sh := queue[0]
		queue = queue[1:]
		stable := sh.f.lastStable()
		var werr error
		err := sh.f.EachBatchHeader(sh.from, func(h *records.BatchHeader) bool {
			if h.BaseOffset > sh.to {
				return false
			}
			if h.LastOffset() >= stable {
				werr = errRoundWaits // an open transaction inside the run
				return false
			}
			if !h.IsTransactional() || h.IsControl() || sh.f.p.AbortedHolds(h.ProducerID, h.BaseOffset) {
				return true
			}
			k, st, err := s.txnOf(sh.f, h.ProducerID, h.LastOffset()+1)
			if err != nil || st == markerWait {
				werr = cmpErr(err, errRoundWaits)
				return false
			}
			if st == markerNone || r.txns[k] {
				return true // data no marker will ever close: shipped as part of the run
			}
			r.txns[k] = true
			members, err := s.membersOf(k, sh.f.p)
			if err != nil {
				werr = err
				return false
			}
			for _, p := range members {
				fq := s.u.forwarderOf(p)
				if fq == nil {
					continue // its topic was deleted
				}
				shq, err := add(fq)
				if err != nil {
					werr = err
					return false
				}
				m, st, err := s.markerOf(fq, k, shq.from)
				if err != nil || st == markerWait {
					werr = cmpErr(err, errRoundWaits)
					return false
				}
				if st == markerFound && m > shq.to {
					shq.to, shq.end = m, k
					if shq != sh && !slices.Contains(queue, shq) {
						queue = append(queue, shq) // walked again over the longer run
					}
				}
			}
			return true
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func lessPart(a, b *Forwarder) bool {
	if a.upstream != b.upstream {
		return a.upstream < b.upstream
	}
	return a.index < b.index
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// What a walk for a marker found.
type markerState int8

const (
	markerFound markerState = iota
	markerWait              // not written yet, or not stable yet
	markerNone              // none ahead: passed already, or never coming
)

// txnOf names the transaction of pid whose data ends before spool record
// from in f, by pid's next marker.
func (s *txnShipper) txnOf(f *Forwarder, pid int64, from int64) (txnKey, markerState, error) {
	at, stamp, err := nextMarker(f, pid, from, math.MinInt64)
	return txnKey{pid, stamp}, s.markerState(f, pid, at), err
}

// markerOf finds k's marker in f at or after from: pid's markers of
// earlier transactions are walked past; one of a later transaction, or
// none while pid has no open transaction there, means k's data in f is
// not ahead (markerNone).
func (s *txnShipper) markerOf(f *Forwarder, k txnKey, from int64) (int64, markerState, error) {
	at, stamp, err := nextMarker(f, k.pid, from, k.stamp)
	if stamp != k.stamp {
		at = -1
	}
	return at, s.markerState(f, k.pid, at), err
}

// nextMarker returns the offset and stamp of pid's first marker in f at or
// after from stamped minStamp or later; -1 when there is none.
func nextMarker(f *Forwarder, pid, from, minStamp int64) (at, stamp int64, err error) {
	at = -1
	err = f.EachBatchHeader(from, func(h *records.BatchHeader) bool {
		if h.ProducerID != pid || !h.IsTransactional() || !h.IsControl() || h.FirstTimestamp < minStamp {
			return true
		}
		at, stamp = h.BaseOffset, h.FirstTimestamp
		return false
	})
	return at, stamp, err
}

// markerState judges a marker found at at (-1: none) in f: a marker
// below the last stable offset is found; one above it, or none while pid
// still has an open transaction there (its marker is to come), waits.
func (s *txnShipper) markerState(f *Forwarder, pid, at int64) markerState {
	switch {
	case at >= 0 && at < f.lastStable():
		return markerFound
	case at >= 0, f.p.HoldsOpen(pid):
		return markerWait
	}
	return markerNone
}

// membersOf returns k's forwarded partitions: as the coordinator noted
// them, else (after a restart) as the walk over every spool finds them,
// else (a marker written from outside, WriteTxnMarkers) just p.
func (s *txnShipper) membersOf(k txnKey, p Partition) ([]Partition, error) {
	s.mu.Lock()
	m, ok := s.members[k]
	scanned := s.scanned
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	if !scanned {
		found, err := s.scanMembers()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		for k, ps := range found {
			if _, ok := s.members[k]; !ok {
				s.members[k] = ps
			}
		}
		s.scanned = true
		m, ok = s.members[k]
		s.mu.Unlock()
		if ok {
			return m, nil
		}
	}
	return []Partition{p}, nil
}

// scanMembers walks the unshipped, stable part of every forwarded spool
// and groups the commit markers of transactions with data there by name:
// after a restart, the partitions of each transaction still to ship.
func (s *txnShipper) scanMembers() (map[txnKey][]Partition, error) {
	found := map[txnKey][]Partition{}
	for _, f := range s.u.forwarders() {
		from := max(f.acked.Load()+1, f.sp.Head())
		stable := f.lastStable()
		hasData := map[int64]bool{} // pid → data since its last marker
		err := f.EachBatchHeader(from, func(h *records.BatchHeader) bool {
			switch {
			case h.BaseOffset >= stable:
				return false
			case !h.IsTransactional():
			case !h.IsControl():
				hasData[h.ProducerID] = true
			default:
				if hasData[h.ProducerID] {
					k := txnKey{h.ProducerID, h.FirstTimestamp}
					found[k] = append(found[k], f.p)
				}
				hasData[h.ProducerID] = false
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("finding the partitions of transactions in %s-%d: %w", f.topic, f.index, err)
		}
	}
	return found, nil
}

// initProducer takes the uplink's transactional producer identity
// upstream, fencing an earlier incarnation (its open round is aborted),
// and reads back the positions committed rounds left.
func (s *txnShipper) initProducer(ctx context.Context) error {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &s.txnID
	req.ProducerID, req.ProducerEpoch = -1, -1
	rctx, cancel := context.WithTimeout(ctx, coordinatorTimeout)
	defer cancel()
	var resp *kmsg.InitProducerIDResponse
	var err error
	for _, timeout := range []time.Duration{upTxnTimeout, upTxnTimeoutLow} {
		req.TransactionTimeoutMillis = int32(timeout / time.Millisecond)
		if resp, err = req.RequestWith(rctx, s.u.client); err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if !errors.Is(err, kerr.InvalidTransactionTimeout) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("upstream InitProducerID for %s: %w", s.txnID, err)
	}
	offs, err := kadm.NewClient(s.u.client).FetchOffsets(kadm.RequireStable(rctx), s.txnID)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		return fmt.Errorf("reading the positions of %s upstream: %w", s.txnID, err)
	}
	s.positions = map[tpName]upPosition{}
	offs.Each(func(o kadm.OffsetResponse) {
		s.positions[tpName{o.Topic, o.Partition}] = parsePosition(o.At, o.Metadata)
	})
	s.pid, s.epoch, s.seqs = resp.ProducerID, resp.ProducerEpoch, map[partKey]int32{}
	s.mu.Lock()
	s.shownPID = resp.ProducerID
	s.mu.Unlock()
	s.u.log.Info("forwarding: upstream transactional producer", "transactional_id", s.txnID, "producer_id", resp.ProducerID, "epoch", resp.ProducerEpoch)
	return nil
}

// ship sends a round as one upstream transaction: partitions added, each
// share produced, positions committed, then the commit.
func (s *txnShipper) ship(ctx context.Context, r *txnRound) error {
	sort.Slice(r.shares, func(i, j int) bool { return lessPart(r.shares[i].f, r.shares[j].f) })
	for _, sh := range r.shares {
		sh.f.setState(stateShipping)
		if _, err := sh.f.findLeader(ctx); err != nil {
			return err
		}
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = s.txnID, s.pid, s.epoch
	for _, sh := range r.shares {
		t := kmsg.NewAddPartitionsToTxnRequestTopic()
		t.Topic = sh.f.upstream
		t.Partitions = []int32{sh.f.index}
		add.Topics = append(add.Topics, t)
	}
	actx, cancel := context.WithTimeout(ctx, coordinatorTimeout)
	addResp, err := add.RequestWith(actx, s.u.client)
	cancel()
	if err != nil {
		return fmt.Errorf("upstream AddPartitionsToTxn: %w", err)
	}
	if err := addPartitionsErr(addResp); err != nil {
		return fmt.Errorf("upstream AddPartitionsToTxn: %w", err)
	}
	// The shares (one request in flight per partition) and the
	// positions go in parallel; the commit waits for all.
	positions := s.positionsRequest(r)
	counts := make([]shareShipped, len(r.shares))
	errs := make([]error, len(r.shares)+1)
	var wg sync.WaitGroup
	workers := make(chan struct{}, shareWorkers)
	for i, sh := range r.shares {
		seq := s.seqs[keyOf(sh.f.p)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			workers <- struct{}{}
			defer func() { <-workers }()
			counts[i], errs[i] = s.produceShare(ctx, sh, seq)
		}()
	}
	errs[len(r.shares)] = s.commitPositions(ctx, positions)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, sh := range r.shares {
		s.seqs[keyOf(sh.f.p)] = counts[i].seq
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = s.txnID, s.pid, s.epoch, true
	ectx, cancel := context.WithTimeout(ctx, coordinatorTimeout)
	endResp, err := end.RequestWith(ectx, s.u.client)
	cancel()
	if err == nil {
		err = kerr.ErrorForCode(endResp.ErrorCode)
	}
	if err != nil {
		// Whether it committed is unknown: the next InitProducerID
		// settles it and the positions tell.
		return fmt.Errorf("upstream EndTxn: %w", err)
	}
	if endResp.Version >= 5 && endResp.ProducerID >= 0 {
		// Transactions v2 (KIP-890) bump the epoch with every end; the
		// sequences start over under the new one.
		if endResp.ProducerID != s.pid || endResp.ProducerEpoch != s.epoch {
			s.pid, s.epoch, s.seqs = endResp.ProducerID, endResp.ProducerEpoch, map[partKey]int32{}
		}
	}
	s.mu.Lock()
	s.shownPID = s.pid
	s.rounds++
	for k := range r.txns {
		delete(s.members, k)
	}
	s.mu.Unlock()
	for i, sh := range r.shares {
		for _, o := range counts[i].syncs {
			sh.f.syncs.add(o)
		}
		s.release(sh.f, sh.to, counts[i].recs, counts[i].bytes)
	}
	return nil
}

// shareShipped is what a share's produce shipped: records, bytes, and
// the offset syncs to note once the round commits.
type shareShipped struct {
	recs, bytes int
	syncs       []offsetSync
	seq         int32 // the partition's next sequence
}

func addPartitionsErr(resp *kmsg.AddPartitionsToTxnResponse) error {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	for _, tx := range resp.Transactions {
		for _, t := range tx.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	}
	return nil
}

// produceShare ships one partition's share as the transactional
// producer, batch by batch from sequence seq. It touches only sh.f's
// state, so shares ship in parallel.
func (s *txnShipper) produceShare(ctx context.Context, sh *txnShare, seq int32) (shareShipped, error) {
	f := sh.f
	var pend []spool.Record
	next := sh.from
	out := shareShipped{seq: seq}
	for next <= sh.to || len(pend) > 0 {
		if len(pend) == 0 {
			recs, err := f.sp.Read(next, int(min(1024, sh.to-next+1)), 8<<20)
			if err != nil {
				return out, err
			}
			for _, rec := range recs {
				if rec.Seq > sh.to {
					break
				}
				pend = append(pend, rec)
			}
			if len(pend) == 0 {
				return out, fmt.Errorf("spool of %s-%d ends before %d", f.topic, f.index, sh.to)
			}
			next = pend[len(pend)-1].Last() + 1
		}
		if f.fate(pend[0]) == staysHere {
			pend = pend[1:]
			continue
		}
		b, err := f.build(pend, true)
		if err != nil {
			// Undecodable: skipped loudly, as the idempotent path does.
			f.u.log.Error("forwarding: dropping undecodable spooled batch", "topic", f.topic, "partition", f.index, "offset", pend[0].Seq, "err", err)
			f.setErr(err)
			pend = pend[1:]
			continue
		}
		upBase, err := s.produceRepaired(ctx, f, &b, out.seq)
		if err != nil {
			return out, err
		}
		pend = pend[b.spoolRecs:]
		if b.undecodable != nil {
			f.u.log.Error("forwarding: dropping a spooled batch the upstream refused as corrupt and that does not decode", "topic", f.topic, "partition", f.index, "offsets", fmt.Sprintf("%d-%d", b.first, b.last), "err", b.undecodable)
			f.setErr(b.undecodable)
			continue
		}
		out.seq = nextSeq(out.seq, b.records)
		if upBase >= 0 {
			out.syncs = append(out.syncs, offsetSync{Local: b.first, Upstream: upBase, Len: b.last - b.first + 1})
		}
		out.recs += int(b.records)
		out.bytes += len(b.data)
	}
	return out, nil
}

// produceRepaired produces b, repairing it as ship does when the upstream
// refuses it: a merged batch too large goes in parts (b becomes the first,
// the rest follows in the share), one shipped as it is and refused as
// corrupt goes re-encoded (b.undecodable set when it does not decode). The
// sequence moves only with a success, so a refused attempt is not a gap.
func (s *txnShipper) produceRepaired(ctx context.Context, f *Forwarder, b *outBatch, seq int32) (int64, error) {
	for {
		upBase, err := s.produce(ctx, f, b.data, seq)
		switch {
		case err == nil:
			return upBase, nil
		case refusedAsTooLarge(err) && b.spoolRecs > 1:
			nb := f.shrink(*b)
			if nb.spoolRecs >= b.spoolRecs {
				return -1, err // the spool could not give the parts
			}
			*b = nb
		case !b.reencoded && refusedAsCorrupt(err):
			nb, rerr := b.reencode(f.u.env.MaxBatchBytes)
			if rerr != nil {
				b.undecodable = fmt.Errorf("upstream: %v; here: %w", err, rerr)
				return -1, nil
			}
			*b = nb
		default:
			return -1, err
		}
	}
}

// produce stamps batch as the transactional producer's from sequence seq
// and sends it to f's partition upstream, resending it (same sequence) on a
// transport error; it returns the upstream base offset.
func (s *txnShipper) produce(ctx context.Context, f *Forwarder, batch []byte, seq int32) (int64, error) {
	records.SetPartitionLeaderEpoch(batch, -1)
	records.SetTransactionalProducer(batch, s.pid, s.epoch, seq)
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		leader, err := f.findLeader(ctx)
		if err != nil {
			return -1, err
		}
		req := kmsg.NewPtrProduceRequest()
		req.TransactionID = &s.txnID
		req.Acks = -1
		req.TimeoutMillis = int32(produceTimeout / time.Millisecond)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = f.upstream
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = f.index
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		rctx, cancel := context.WithTimeout(ctx, produceTimeout+30*time.Second)
		kresp, err := f.u.client.Broker(int(leader)).Request(rctx, produceV12{req})
		cancel()
		if err != nil {
			f.leader = -1
			last = fmt.Errorf("upstream produce to %s-%d: %w", f.upstream, f.index, err)
			continue
		}
		for _, t := range kresp.(*kmsg.ProduceResponse).Topics {
			for _, p := range t.Partitions {
				if t.Topic != f.upstream || p.Partition != f.index {
					continue
				}
				perr := kerr.ErrorForCode(p.ErrorCode)
				if perr == nil || errors.Is(perr, kerr.DuplicateSequenceNumber) {
					return p.BaseOffset, nil
				}
				if p.ErrorMessage != nil {
					perr = fmt.Errorf("%w: %s", perr, *p.ErrorMessage)
				}
				if kerr.IsRetriable(perr) {
					f.leader = -1
				}
				return -1, fmt.Errorf("upstream produce to %s-%d: %w", f.upstream, f.index, perr)
			}
		}
		f.leader = -1
		last = fmt.Errorf("upstream produce to %s-%d: partition missing from the response", f.upstream, f.index)
	}
	return -1, last
}

// positionsRequest is the TxnOffsetCommit of a round: the local offset
// after each share as the position of the uplink's group upstream. Built
// before the shares ship, since shipping may refresh a forwarder's
// upstream topic ID.
func (s *txnShipper) positionsRequest(r *txnRound) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = s.txnID, s.txnID, s.pid, s.epoch
	req.Generation, req.MemberID = -1, ""
	byTopic := map[string]int{}
	for _, sh := range r.shares {
		i, ok := byTopic[sh.f.upstream]
		if !ok {
			i = len(req.Topics)
			byTopic[sh.f.upstream] = i
			t := kmsg.NewTxnOffsetCommitRequestTopic()
			t.Topic, t.TopicID = sh.f.upstream, sh.f.upTopicID // names for v5 and older, the ID for v6+
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = sh.f.index, sh.to+1, -1
		meta := positionMeta(sh.f.topicID, sh.end)
		p.Metadata = &meta
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	return req
}

// commitPositions adds the uplink's group to the round's transaction and
// commits the positions in it.
func (s *txnShipper) commitPositions(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) error {
	ctx, cancel := context.WithTimeout(ctx, coordinatorTimeout)
	defer cancel()
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = s.txnID, s.pid, s.epoch, s.txnID
	resp, err := add.RequestWith(ctx, s.u.client)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("upstream AddOffsetsToTxn: %w", err)
	}
	cresp, err := req.RequestWith(ctx, s.u.client)
	if err != nil {
		return fmt.Errorf("upstream TxnOffsetCommit: %w", err)
	}
	for _, t := range cresp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("upstream TxnOffsetCommit %s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// forwarders lists the uplink's forwarders.
func (u *Uplink) forwarders() []*Forwarder {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*Forwarder, 0, len(u.parts))
	for _, f := range u.parts {
		out = append(out, f)
	}
	return out
}

// forwarderOf returns p's running forwarder, nil if none.
func (u *Uplink) forwarderOf(p Partition) *Forwarder {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.parts[keyOf(p)]
}
