package broker

// Forwarded partitions: the forwarder as the partition's store (produce
// into the spool, fetch and list offsets from it; partition_store.go), and
// the forwarder goroutine shipping it upstream.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/spool"
)

// throttleAbove is the spool pressure from which produce responses ask
// clients to slow down.
const throttleAbove = 0.9

// forwarder ships one partition's spool upstream (uplink_ship.go).
type forwarder struct {
	u        *uplink
	p        *partition
	sp       *spool.Spool
	upstream string

	// journal is the upstream producer journal (uplink_producer.go);
	// journaled what it holds; resend the batch to send first after a
	// restart. Used by run's goroutine only (and before it starts).
	// journalFile is the journal kept open for in-place writes once the
	// first write of this run made it; journalGen the generation of the
	// slot last written.
	journal     string
	journalFile vfs.File
	journalGen  uint64
	syncsPath   string // offset syncs beside the spool (uplink_groups.go)
	// producersPath holds the partition's producer state, producersSaved
	// what was last written there (uplink_producers_state.go).
	producersPath     string
	producersSaved    []byte
	producersSavedGen uint64
	journaled         *inFlight
	resend            *inFlight
	// shownPID/shownEpoch mirror prod for ForwardStat; resets counts the
	// new producer IDs taken because the upstream forgot the old one.
	shownPID   atomic.Int64
	shownEpoch atomic.Int32
	resets     atomic.Int64
	// syncs map local offsets to upstream ones (uplink_groups.go).
	syncs offsetSyncs

	ctx      context.Context // canceled by stop after a grace period: ends a request in flight
	cancel   context.CancelFunc
	quit     chan struct{}
	quitOnce sync.Once
	done     chan struct{}

	// acked is the last sequence the upstream confirmed; committed what
	// was last handed to DeleteAcked.
	acked      atomic.Int64
	committed  atomic.Int64
	commitNote chan struct{} // acked moved: the committer has work
	commitMu   sync.Mutex

	// Visible state (stats, metrics, forward-status).
	forwarded atomic.Int64 // records acknowledged upstream since start
	shipped   atomic.Int64 // bytes of batches acknowledged upstream since start
	errCount  atomic.Int64 // failed upstream attempts since start
	lastErr   atomic.Pointer[string]
	state     atomic.Pointer[string]

	// Owned by the run goroutine.
	prod   upProducer
	leader int32 // upstream leader of the partition; -1 unknown
	// upTopicID is the upstream topic's ID, learnt with the leader.
	upTopicID [16]byte
}

func newForwarder(u *uplink, p *partition, sp *spool.Spool, upstream string) *forwarder {
	f := &forwarder{u: u, p: p, sp: sp, upstream: upstream,
		quit: make(chan struct{}), done: make(chan struct{}), commitNote: make(chan struct{}, 1),
		prod: upProducer{id: -1}, leader: -1}
	f.shownPID.Store(-1)
	f.shownEpoch.Store(-1)
	f.ctx, f.cancel = context.WithCancel(u.ctx)
	f.acked.Store(sp.Head() - 1)
	f.committed.Store(sp.Head() - 1)
	f.setState(stateStarting)
	return f
}

// stop ends the forwarder. A request in flight gets a few seconds to be
// answered, so a clean shutdown does not leave a batch whose fate is
// unknown (resending it after a restart, under a new producer id, would
// duplicate it upstream).
func (f *forwarder) stop() {
	f.signalStop()
	select {
	case <-f.done:
	case <-time.After(stopGrace):
		f.cancel()
		<-f.done
	}
	f.cancel()
}

const stopGrace = 5 * time.Second

// signalStop tells the forwarder to stop; it does not wait.
func (f *forwarder) signalStop() { f.quitOnce.Do(func() { close(f.quit) }) }

func (f *forwarder) setErr(err error) {
	s := err.Error()
	f.lastErr.Store(&s)
}

func (f *forwarder) setState(s string) { f.state.Store(&s) }

// Forwarder states, as ForwardStat.State shows them.
const (
	stateStarting = "starting"    // before the upstream topic is known to exist
	stateIdle     = "idle"        // everything spooled is acknowledged upstream
	stateShipping = "shipping"    // a request is in flight
	stateRetrying = "retrying"    // the last attempt failed; backing off
	stateTxnWait  = "transaction" // waiting for the round that ships a committed transaction
	stateStopped  = "stopped"
)

// sleep waits d or until stopped (false).
func (f *forwarder) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.quit:
		return false
	}
}

// commit hands the upstream's acknowledgements to the spool, which
// removes shipped segments and moves the log start offset.
func (f *forwarder) commit() {
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	a := f.acked.Load()
	if a <= f.committed.Load() {
		return
	}
	// The records about to go may be the last trace of a producer's
	// sequence: its state is saved first.
	if err := f.saveProducers(); err != nil {
		f.u.b.log.Warn("forwarding: saving producer state; acknowledged records kept until it succeeds", "topic", f.p.topic.name, "partition", f.p.index, "err", err)
		return
	}
	if _, err := f.sp.DeleteAcked(a); err != nil && !errors.Is(err, spool.ErrClosed) {
		f.u.b.log.Warn("spool: deleting acknowledged records", "topic", f.p.topic.name, "partition", f.p.index, "err", err)
		return
	}
	f.committed.Store(a)
}

// commitLoop commits acknowledgements as they arrive, at most every
// commitEvery: each commit writes a marker and fsyncs the directory, and
// only a crash ever reads it (what a crash loses is shipped again).
func (f *forwarder) commitLoop() {
	for {
		select {
		case <-f.quit:
			return
		case <-f.commitNote:
		}
		f.commit()
		if !f.sleep(commitEvery) {
			return
		}
	}
}

const commitEvery = 100 * time.Millisecond

// passedThrough records that every record up to last needs no shipping
// (transaction markers and aborted data): the spool may drop them.
func (f *forwarder) passedThrough(last int64) {
	f.acked.Store(last)
	select {
	case f.commitNote <- struct{}{}:
	default:
	}
}

// ackedThrough records that the upstream holds every record up to last.
func (f *forwarder) ackedThrough(last int64, records, bytes int) {
	f.acked.Store(last)
	f.forwarded.Add(int64(records))
	f.shipped.Add(int64(bytes))
	f.lastErr.Store(nil)
	select {
	case f.commitNote <- struct{}{}:
	default:
	}
}

// The forwarder is its partition's store (partition_store.go) once the
// partition is forwarded: records live in the spool, one spool record per
// batch spanning its NumRecords sequence numbers, which are its offsets.
// The spool's sequences are inclusive; the methods below convert to the
// store's exclusive ends.

func (f *forwarder) logStart() int64 { return f.sp.Head() }
func (f *forwarder) logEnd() int64   { return f.sp.NextSeq() }

// highWatermark: under fsync=always only what is durable is visible, as
// for logs.
func (f *forwarder) highWatermark() int64 {
	if f.u.b.cfg.Sync.Mode == logstore.SyncAlways {
		return f.sp.Stats().DurableSeq
	}
	return f.sp.NextSeq()
}

// lastStable: transactions of a forwarded partition are the coordinator's
// as for a log; their batches and markers sit in the spool, and only what
// is below the LSO is shipped (uplink_ship.go).
func (f *forwarder) lastStable() int64 { return f.u.b.txns.lastStable(f.p, f.highWatermark()) }

func (f *forwarder) beginTxn(h records.BatchHeader, version int16) (func(), int16, error) {
	return f.u.b.txns.beginProduce(f.p, &h, version)
}

// appendMarker spools a transaction marker even when the spool is full:
// a full spool of one open transaction's records could otherwise neither
// end it nor ship them.
func (f *forwarder) appendMarker(batch []byte) (logstore.AppendResult, error) {
	seq, err := f.sp.AppendPastLimit(batch)
	if err != nil {
		return logstore.AppendResult{}, fmt.Errorf("forwarding spool of %s-%d: %w", f.p.topic.name, f.p.index, err)
	}
	return logstore.AppendResult{BaseOffset: seq, LastOffset: seq, LogStartOffset: f.sp.Head(), AppendTimeMs: -1}, nil
}

// decodesBatches: the forwarder decodes small batches to merge them, and
// any batch the upstream calls corrupt (uplink_ship.go); one that does not
// decode then is dropped, so it must be refused before it is acknowledged.
func (f *forwarder) decodesBatches() bool { return true }

// keepsAborted: a spool is never compacted, so every entry above its head
// is needed, by the shipper as by read_committed fetches.
func (f *forwarder) keepsAborted(abortedTxn) bool { return true }

func (f *forwarder) pressure() float64 { return f.sp.Pressure() }

func (f *forwarder) changed() <-chan struct{} { return f.sp.Changed() }

// append stores a validated batch in the spool as one record spanning
// count sequence numbers. A full spool is an error
// that errCode maps to KAFKA_STORAGE_ERROR, which every client retries (kgo,
// librdkafka and the Java client treat it as retriable and refresh
// metadata), so nothing is dropped while the upstream catches up.
func (f *forwarder) append(batch []byte, count int, now time.Time) (logstore.AppendResult, error) {
	p := f.p
	res := logstore.AppendResult{AppendTimeMs: -1}
	if p.topic.cfg.Load().logAppendTimestamps {
		// A log stamps the batch as it appends; the spool stores bytes.
		res.AppendTimeMs = now.UnixMilli()
		records.SetLogAppendTime(batch, res.AppendTimeMs)
	}
	if f.sp.Pressure() >= 1 {
		return res, fmt.Errorf("forwarding spool of %s-%d is full; the upstream is behind", p.topic.name, p.index)
	}
	seq, err := f.sp.AppendSpan(batch, count)
	if err != nil {
		if !errors.Is(err, spool.ErrFull) {
			f.u.b.log.Error("spool append failed", "topic", p.topic.name, "partition", p.index, "err", err)
		}
		return res, fmt.Errorf("forwarding spool of %s-%d: %w", p.topic.name, p.index, err)
	}
	res.BaseOffset, res.LastOffset, res.LogStartOffset = seq, seq+int64(count)-1, f.sp.Head()
	return res, nil
}

// waitDurable: the spool waits for an inclusive last sequence, under
// durability always; otherwise, as a log, only a failed write is reported
// (the spool writes its open segment within its flush interval anyway).
func (f *forwarder) waitDurable(ctx context.Context, end int64) error {
	if f.u.b.cfg.Sync.Mode != logstore.SyncAlways {
		return f.sp.Err()
	}
	return f.sp.WaitDurable(ctx, end-1)
}

// read copies the spooled batches, rewriting their base offsets to their
// sequence numbers (the base offset is outside the CRC).
func (f *forwarder) read(o logstore.ReadOptions) (storeRead, error) {
	hw := f.highWatermark()
	out := storeRead{highWatermark: hw, logStart: f.sp.Head()}
	if next := f.sp.NextSeq(); o.Offset < out.logStart || o.Offset > next {
		return out, fmt.Errorf("%w: %d not in [%d, %d]", logstore.ErrOffsetOutOfRange, o.Offset, out.logStart, next)
	}
	bound := hw
	if o.MaxOffset > 0 && o.MaxOffset < bound {
		bound = o.MaxOffset
	}
	if o.Offset >= bound {
		return out, nil
	}
	limit := o.MaxBytes
	recs, err := f.sp.Read(o.Offset, math.MaxInt32, max(limit, 1))
	if err != nil {
		f.u.b.log.Error("fetch from spool", "topic", f.p.topic.name, "partition", f.p.index, "err", err)
		return out, err
	}
	var buf []byte
	for _, r := range recs {
		if r.Last() >= bound || (len(buf)+len(r.Data) > limit && (len(buf) > 0 || !o.MinOneBatch)) {
			break
		}
		at := len(buf)
		buf = append(buf, r.Data...)
		records.SetBaseOffset(buf[at:], r.Seq)
	}
	out.data = buf
	return out, nil
}

// eachBatchHeader parses the header of each spooled batch; one that does
// not parse is skipped, as it would be shipped.
func (f *forwarder) eachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error {
	var h records.BatchHeader // one for the walk: fn's argument escapes
	// Reads start small and grow: a spool read decodes every record it
	// returns, and most walks stop within a few batches.
	chunk := 16
	for seq := from; seq < f.sp.NextSeq(); chunk = min(2*chunk, 4096) {
		recs, err := f.sp.Read(seq, chunk, 64<<20)
		if err != nil || len(recs) == 0 {
			return err
		}
		for _, r := range recs {
			seq = r.Last() + 1
			if h, err = records.ParseHeader(r.Data); err != nil {
				continue
			}
			h.BaseOffset = r.Seq
			if !fn(&h) {
				return nil
			}
		}
	}
	return nil
}

// cleanState: a spool is shipped, not compacted; the cleaner never finds
// it due.
func (f *forwarder) cleanState(time.Time, time.Duration, int64) logstore.CleanState {
	return logstore.CleanState{}
}

func (f *forwarder) compact(logstore.CompactOptions) (logstore.CompactResult, error) {
	return logstore.CompactResult{}, errors.New("broker: a forwarded partition's spool is not compacted")
}

// forwardOf returns p's forwarder, or nil when p is not forwarded (or its
// spool cannot be opened: logged, and the partition then uses its log).
func (b *Broker) forwardOf(p *partition) *forwarder {
	if f := p.fwd.Load(); f != nil {
		return f
	}
	if b.uplink == nil {
		return nil
	}
	f, err := b.uplink.forwarderFor(p)
	if err != nil {
		b.log.Error("forwarding", "topic", p.topic.name, "partition", p.index, "err", err)
		return nil
	}
	return f
}

// produceThrottle is the throttle_time_ms for a produce request: while a
// forwarded partition it writes to is at least 90 % full, scaled from 0 at
// 90 % to 1 s at 100 %, so clients slow down before produce starts failing.
func (b *Broker) produceThrottle(r *kmsg.ProduceRequest) int32 {
	if b.uplink == nil {
		return 0
	}
	worst := 0.0
	for ti := range r.Topics {
		t := b.lookupTopic(r.Topics[ti].Topic, r.Topics[ti].TopicID)
		if t == nil {
			continue
		}
		for pi := range r.Topics[ti].Partitions {
			if p := t.partition(r.Topics[ti].Partitions[pi].Partition); p != nil {
				worst = max(worst, p.store().pressure())
			}
		}
	}
	if worst < throttleAbove {
		return 0
	}
	return int32(100 + 900*(worst-throttleAbove)/(1-throttleAbove))
}

// listOffset answers ListOffsets for a forwarded partition: earliest is the
// first offset not yet acknowledged upstream, latest the high watermark.
// Timestamp lookups scan the spooled batch headers.
func (f *forwarder) listOffset(target int64) (offset, ts int64, found bool, err error) {
	hw := f.highWatermark()
	switch target {
	case -1:
		return hw, -1, true, nil
	case -2, -4:
		return f.sp.Head(), -1, true, nil
	case -5:
		return -1, -1, false, nil
	}
	bestOff, bestTS := int64(-1), int64(-1)
	for next := f.sp.Head(); next < hw; {
		recs, err := f.sp.Read(next, 1024, 8<<20)
		if err != nil {
			return -1, -1, false, err
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if r.Last() >= hw {
				break
			}
			h, err := records.ParseHeader(r.Data)
			if err != nil {
				return -1, -1, false, err
			}
			switch {
			case target == -3:
				if h.MaxTimestamp > bestTS {
					bestOff, bestTS = r.Seq, h.MaxTimestamp
				}
			case h.MaxTimestamp >= target:
				// Batch granularity: the first batch that reaches
				// the target; consumers skip earlier records.
				return r.Seq, h.MaxTimestamp, true, nil
			}
			next = r.Last() + 1
		}
	}
	if target == -3 && bestOff >= 0 {
		return bestOff, bestTS, true, nil
	}
	return -1, -1, false, nil
}

func (f *forwarder) stat() ForwardStat {
	st := f.sp.Stats()
	acked := max(f.acked.Load()+1, st.Head)
	s := ForwardStat{
		Topic: f.p.topic.name, Partition: f.p.index, UpstreamTopic: f.upstream,
		LogStartOffset: st.Head, LogEndOffset: st.NextSeq, HighWatermark: f.highWatermark(),
		UpstreamAcked: acked, Lag: max(0, st.NextSeq-acked),
		Forwarded: f.forwarded.Load(), ForwardedBytes: f.shipped.Load(), Errors: f.errCount.Load(),
		SpoolBytes: st.UsedBytes, SpoolMaxBytes: st.MaxBytes,
		Pressure: min(1, max(0, float64(st.UsedBytes)/float64(st.MaxBytes))),
	}
	if e := f.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	if f.u.cfg.Cipher != nil {
		s.Encryption, s.KeyID = "AES-256-GCM", f.u.cfg.EncryptionKeyID
	}
	s.ProducerID, s.ProducerEpoch, s.ProducerResets = f.shownPID.Load(), int16(f.shownEpoch.Load()), f.resets.Load()
	if p := f.state.Load(); p != nil {
		s.State = *p
	}
	s.TransactionalID, s.TransactionalProducerID, s.TransactionRounds = f.u.txs.stat()
	return s
}

func sortStats(s []ForwardStat) {
	slices.SortFunc(s, func(a, b ForwardStat) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
}
