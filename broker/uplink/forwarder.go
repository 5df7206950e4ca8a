package uplink

// A forwarded partition: its Forwarder, which holds its spool and is the
// partition's store (the broker appends produced batches to it, fetches
// and lists offsets from it), and ships it upstream (ship.go).

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

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/spool"
)

// Forwarder holds one forwarded partition's spool, serves it to the
// broker as the partition's store, and ships it upstream (ship.go).
type Forwarder struct {
	u        *Uplink
	p        Partition
	sp       *spool.Spool
	upstream string
	// topic, topicID and index are p's, which never change.
	topic   string
	topicID [16]byte
	index   int32

	// journal is the upstream producer journal (producer.go);
	// journaled what it holds; resend the batch to send first after a
	// restart. Used by run's goroutine only (and before it starts).
	// journalFile is the journal kept open for in-place writes once the
	// first write of this run made it; journalGen the generation of the
	// slot last written.
	journal     string
	journalFile vfs.File
	journalGen  uint64
	syncsPath   string // offset syncs beside the spool (groups.go)
	// producersPath holds the partition's producer state, producersSaved
	// what was last written there (producers_state.go).
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
	// syncs map local offsets to upstream ones (groups.go).
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

func newForwarder(u *Uplink, p Partition, sp *spool.Spool, upstream string) *Forwarder {
	f := &Forwarder{u: u, p: p, sp: sp, upstream: upstream, topic: p.Topic(), topicID: p.TopicID(), index: p.Index(),
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
func (f *Forwarder) stop() {
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
func (f *Forwarder) signalStop() { f.quitOnce.Do(func() { close(f.quit) }) }

func (f *Forwarder) setErr(err error) {
	s := err.Error()
	f.lastErr.Store(&s)
}

func (f *Forwarder) setState(s string) { f.state.Store(&s) }

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
func (f *Forwarder) sleep(d time.Duration) bool {
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
func (f *Forwarder) commit() {
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	a := f.acked.Load()
	if a <= f.committed.Load() {
		return
	}
	// The records about to go may be the last trace of a producer's
	// sequence: its state is saved first.
	if err := f.saveProducers(); err != nil {
		f.u.log.Warn("forwarding: saving producer state; acknowledged records kept until it succeeds", "topic", f.topic, "partition", f.index, "err", err)
		return
	}
	if _, err := f.sp.DeleteAcked(a); err != nil && !errors.Is(err, spool.ErrClosed) {
		f.u.log.Warn("spool: deleting acknowledged records", "topic", f.topic, "partition", f.index, "err", err)
		return
	}
	f.committed.Store(a)
}

// commitLoop commits acknowledgements as they arrive, at most every
// commitEvery: each commit writes a marker and fsyncs the directory, and
// only a crash ever reads it (what a crash loses is shipped again).
func (f *Forwarder) commitLoop() {
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
func (f *Forwarder) passedThrough(last int64) {
	f.acked.Store(last)
	select {
	case f.commitNote <- struct{}{}:
	default:
	}
}

// ackedThrough records that the upstream holds every record up to last.
func (f *Forwarder) ackedThrough(last int64, records, bytes int) {
	f.acked.Store(last)
	f.forwarded.Add(int64(records))
	f.shipped.Add(int64(bytes))
	f.lastErr.Store(nil)
	select {
	case f.commitNote <- struct{}{}:
	default:
	}
}

// The forwarder is its partition's store once the partition is
// forwarded: records live in the spool, one spool record per batch
// spanning its NumRecords sequence numbers, which are its offsets. The
// spool's sequences are inclusive; the methods below convert to the
// store's exclusive ends (the broker's convention, as logstore's).

// LogStart is the first offset still held: the first record not yet
// deleted as acknowledged upstream.
func (f *Forwarder) LogStart() int64 { return f.sp.Head() }

// LogEnd is the offset the next batch gets.
func (f *Forwarder) LogEnd() int64 { return f.sp.NextSeq() }

// HighWatermark is the end of what local consumers may read: under
// fsync=always only what is durable, as for logs.
func (f *Forwarder) HighWatermark() int64 {
	if f.u.env.Sync == logstore.SyncAlways {
		return f.sp.Stats().DurableSeq
	}
	return f.sp.NextSeq()
}

// lastStable: transactions of a forwarded partition are the broker's
// coordinator's as for a log; their batches and markers sit in the spool,
// and only what is below the LSO is shipped (ship.go).
func (f *Forwarder) lastStable() int64 { return f.p.LastStable(f.HighWatermark()) }

// AppendMarker spools a transaction marker even when the spool is full:
// a full spool of one open transaction's records could otherwise neither
// end it nor ship them.
func (f *Forwarder) AppendMarker(batch []byte) (logstore.AppendResult, error) {
	seq, err := f.sp.AppendPastLimit(batch)
	if err != nil {
		return logstore.AppendResult{}, fmt.Errorf("forwarding spool of %s-%d: %w", f.topic, f.index, err)
	}
	return logstore.AppendResult{BaseOffset: seq, LastOffset: seq, LogStartOffset: f.sp.Head(), AppendTimeMs: -1}, nil
}

// Pressure is how full the spool is, 0..1.
func (f *Forwarder) Pressure() float64 { return f.sp.Pressure() }

// Changed is closed on the next append (long-poll fetch).
func (f *Forwarder) Changed() <-chan struct{} { return f.sp.Changed() }

// Append stores a validated batch in the spool as one record spanning
// count sequence numbers. appendTimeMs, unless -1, is the topic's
// LogAppendTime stamp, written into the batch (a log stamps the batch as
// it appends; the spool stores bytes). A full spool is an error the broker
// maps to KAFKA_STORAGE_ERROR, which every client retries (kgo, librdkafka
// and the Java client treat it as retriable and refresh metadata), so
// nothing is dropped while the upstream catches up.
func (f *Forwarder) Append(batch []byte, count int, appendTimeMs int64) (logstore.AppendResult, error) {
	res := logstore.AppendResult{AppendTimeMs: appendTimeMs}
	if appendTimeMs != -1 {
		records.SetLogAppendTime(batch, appendTimeMs)
	}
	if f.sp.Pressure() >= 1 {
		return res, fmt.Errorf("forwarding spool of %s-%d is full; the upstream is behind", f.topic, f.index)
	}
	seq, err := f.sp.AppendSpan(batch, count)
	if err != nil {
		if !errors.Is(err, spool.ErrFull) {
			f.u.log.Error("spool append failed", "topic", f.topic, "partition", f.index, "err", err)
		}
		return res, fmt.Errorf("forwarding spool of %s-%d: %w", f.topic, f.index, err)
	}
	res.BaseOffset, res.LastOffset, res.LogStartOffset = seq, seq+int64(count)-1, f.sp.Head()
	return res, nil
}

// WaitDurable waits until everything before end is durable, under
// durability always (the spool waits for an inclusive last sequence);
// otherwise, as a log, only a failed write is reported (the spool writes
// its open segment within its flush interval anyway).
func (f *Forwarder) WaitDurable(ctx context.Context, end int64) error {
	if f.u.env.Sync != logstore.SyncAlways {
		return f.sp.Err()
	}
	return f.sp.WaitDurable(ctx, end-1)
}

// Read copies the spooled batches from the one holding o.Offset, below
// min(high watermark, o.MaxOffset), rewriting their base offsets to their
// sequence numbers (the base offset is outside the CRC). It returns the
// bytes, and the high watermark and log start the read saw; an offset
// outside [LogStart, LogEnd] is logstore.ErrOffsetOutOfRange.
func (f *Forwarder) Read(o logstore.ReadOptions) (data []byte, highWatermark, logStart int64, err error) {
	hw := f.HighWatermark()
	logStart = f.sp.Head()
	if next := f.sp.NextSeq(); o.Offset < logStart || o.Offset > next {
		return nil, hw, logStart, fmt.Errorf("%w: %d not in [%d, %d]", logstore.ErrOffsetOutOfRange, o.Offset, logStart, next)
	}
	bound := hw
	if o.MaxOffset > 0 && o.MaxOffset < bound {
		bound = o.MaxOffset
	}
	if o.Offset >= bound {
		return nil, hw, logStart, nil
	}
	limit := o.MaxBytes
	recs, err := f.sp.Read(o.Offset, math.MaxInt32, max(limit, 1))
	if err != nil {
		f.u.log.Error("fetch from spool", "topic", f.topic, "partition", f.index, "err", err)
		return nil, hw, logStart, err
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
	return buf, hw, logStart, nil
}

// EachBatchHeader parses the header of each spooled batch from the one
// holding from, BaseOffset set to its offset, until fn returns false; one
// that does not parse is skipped, as it would be shipped.
func (f *Forwarder) EachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error {
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

// ListOffset answers ListOffsets for a forwarded partition: earliest is the
// first offset not yet acknowledged upstream, latest the high watermark.
// Timestamp lookups scan the spooled batch headers.
func (f *Forwarder) ListOffset(target int64) (offset, ts int64, found bool, err error) {
	hw := f.HighWatermark()
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

// Stat returns the forwarder's state, as forward-status shows it.
func (f *Forwarder) Stat() ForwardStat {
	st := f.sp.Stats()
	acked := max(f.acked.Load()+1, st.Head)
	s := ForwardStat{
		Topic: f.topic, Partition: f.index, UpstreamTopic: f.upstream,
		LogStartOffset: st.Head, LogEndOffset: st.NextSeq, HighWatermark: f.HighWatermark(),
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
