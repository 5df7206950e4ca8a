package broker

// Where a partition's records live.
//
// A partition keeps its records in its logstore.Log (logStore, below) or,
// when its topic is forwarded upstream, in its forwarder's spool
// (forwarder, uplink_adapter.go, over package uplink). Produce, Fetch,
// ListOffsets, OffsetForLeaderEpoch, the cleaner and the rebuild of
// producer state reach the records only
// through partitionStore, so none of them asks which of the two it has. The
// choice is made once per partition: the log when the partition is opened,
// the spool the first time a forwarded partition is used (storeOf); it
// never goes back. (A spool that fails to open is logged, and the log
// serves until a later use opens it, as before there was a store.)
//
// Idempotent-producer state is not the store's: it lives in the partition
// (a producers.State) under partition.mu, one implementation for both
// stores, rebuilt from whichever store holds the partition (eachBatchHeader).
//
// Offset convention at this boundary: Kafka offsets throughout (a spooled
// batch's offset is its spool sequence number). Ends are exclusive, as
// logstore's: logEnd and highWatermark are the offset after the last
// record (readable), and waitDurable takes the offset after the batch.
// The last offset of an appended batch is inclusive, as in a batch header.
// The spool counts inclusive last sequences (Spool.WaitDurable,
// Record.Last); the forwarder converts at its side of the interface.
//
// Methods are called a few times per partition of a request, never per
// record, so the interface costs the hot paths a few indirect calls per
// partition and no allocation.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

type partitionStore interface {
	// logStart is the first offset still held; logEnd the offset the next
	// batch gets; highWatermark the end of what consumers may read (below
	// logEnd while appends await fsync under fsync=always).
	logStart() int64
	logEnd() int64
	highWatermark() int64
	// lastStable is the end of what read_committed consumers may read:
	// the first offset of the oldest open transaction, else the high
	// watermark.
	lastStable() int64

	// beginTxn admits a transactional batch (txn.go); the returned func
	// releases what it holds once the batch is appended. The header is
	// passed by value: a pointer through an interface call would move
	// the caller's header to the heap on every produce.
	beginTxn(h records.BatchHeader, version int16) (func(), int16, error)
	// decodesBatches: the store decodes stored batches later (the
	// forwarder merges small ones), so produce validates compressed ones
	// fully before acknowledging them.
	decodesBatches() bool
	// append stores one validated batch of count records. Errors are
	// logged here when they are the store's own failure; errCode maps
	// them.
	append(batch []byte, count int, now time.Time) (logstore.AppendResult, error)
	// appendMarker stores a transaction marker the coordinator built
	// (txn.go): never refused because the store is full, since a
	// transaction that cannot end holds back every read_committed
	// consumer (and, forwarded, every record behind it).
	appendMarker(batch []byte) (logstore.AppendResult, error)
	// waitDurable waits until everything before end meets the durability
	// policy.
	waitDurable(ctx context.Context, end int64) error
	// pressure is how full the store is, 0..1 (throttling; a log is never
	// full in this sense).
	pressure() float64

	// changed is closed on the next append (long-poll fetch).
	changed() <-chan struct{}
	// read returns whole batches from the one holding o.Offset, below
	// min(high watermark, o.MaxOffset); an offset outside [logStart,
	// logEnd] is logstore.ErrOffsetOutOfRange.
	read(o logstore.ReadOptions) (storeRead, error)
	// listOffset resolves a ListOffsets timestamp (02_list_offsets.go).
	listOffset(target int64) (offset, ts int64, found bool, err error)

	// eachBatchHeader calls fn with the header of each batch from the one
	// holding from to the end (the high watermark for a log), BaseOffset
	// set to the batch's offset, until fn returns false.
	eachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error
	// cleanState and compact are the log cleaner's (cleaner.go); a store
	// that is not compacted reports nothing to clean.
	cleanState(now time.Time, minLag time.Duration, maxOffset int64) logstore.CleanState
	compact(o logstore.CompactOptions) (logstore.CompactResult, error)
	// keepsAborted reports whether an aborted transaction the
	// transaction log holds must stay indexed at a restart: compaction
	// may have removed its marker and data (pruneAborted).
	keepsAborted(a abortedTxn) bool
}

var (
	_ partitionStore = (*logStore)(nil)
	_ partitionStore = (*forwarder)(nil)
)

// storeRead is what a store read for Fetch: file ranges pinned until
// released (a log), or bytes already copied (a spool), with the offsets
// seen by the same read.
type storeRead struct {
	rr            *logstore.ReadResult
	data          []byte
	highWatermark int64
	logStart      int64
}

// storeOf returns the store p's records live in, opening p's spool the
// first time a forwarded partition is used (forwardOf). Handlers call it;
// code that must not open a spool (the cleaner) uses p.store().
func (b *Broker) storeOf(p *partition) partitionStore {
	if f := b.forwardOf(p); f != nil {
		return f
	}
	return &p.local
}

// store returns the store p uses now, without opening a spool.
func (p *partition) store() partitionStore {
	if f := p.fwd.Load(); f != nil {
		return f
	}
	return &p.local
}

// logStore is a partition stored in its own logstore.Log.
type logStore struct {
	b *Broker
	p *partition
}

func (s *logStore) logStart() int64      { return s.p.log.LogStartOffset() }
func (s *logStore) logEnd() int64        { return s.p.log.LogEndOffset() }
func (s *logStore) highWatermark() int64 { return s.p.log.HighWatermark() }
func (s *logStore) lastStable() int64    { return s.b.txns.lastStable(s.p, s.p.log.HighWatermark()) }
func (s *logStore) decodesBatches() bool { return false }
func (s *logStore) pressure() float64    { return 0 }

func (s *logStore) keepsAborted(a abortedTxn) bool { return abortedNeeded(s.p, a) }

func (s *logStore) changed() <-chan struct{} { return s.p.log.Changed() }

func (s *logStore) beginTxn(h records.BatchHeader, version int16) (func(), int16, error) {
	return s.b.txns.beginProduce(s.p, &h, version)
}

func (s *logStore) append(batch []byte, _ int, _ time.Time) (logstore.AppendResult, error) {
	res, err := s.p.log.AppendValidated(batch) // records.Validate passed in produceTo
	var we *logstore.WriteError
	if err != nil && errCode(err) == kerr.KafkaStorageError.Code && !(errors.As(err, &we) && we.Transient) {
		// A full disk (transient) is logged once by the log itself.
		s.b.log.Error("append failed", "topic", s.p.topic.name, "partition", s.p.index, "err", err)
	}
	return res, err
}

func (s *logStore) appendMarker(batch []byte) (logstore.AppendResult, error) {
	return s.p.log.Append(batch)
}

func (s *logStore) waitDurable(ctx context.Context, end int64) error {
	return s.p.log.WaitDurable(ctx, end)
}

func (s *logStore) read(o logstore.ReadOptions) (storeRead, error) {
	rr, err := s.p.log.Read(o)
	if err != nil {
		return storeRead{}, err
	}
	return storeRead{rr: rr, highWatermark: rr.HighWatermark, logStart: rr.LogStartOffset}, nil
}

func (s *logStore) listOffset(target int64) (offset, ts int64, found bool, err error) {
	l := s.p.log
	switch target {
	case -1:
		return l.HighWatermark(), -1, true, nil
	case -2, -4:
		return l.LogStartOffset(), -1, true, nil
	case -3:
		off, ts := l.MaxTimestamp()
		if off < 0 {
			return -1, -1, false, nil
		}
		return off, ts, true, nil
	case -5:
		return -1, -1, false, nil
	}
	off, ts, ok, err := l.OffsetForTimestamp(target)
	if err != nil || !ok || off >= l.HighWatermark() {
		return -1, -1, false, err
	}
	return off, ts, true, nil
}

// eachBatchHeader reads only the 61 header bytes of each batch.
func (s *logStore) eachBatchHeader(from int64, fn func(*records.BatchHeader) bool) error {
	rr, err := s.p.log.Read(logstore.ReadOptions{Offset: from, MaxBytes: 1 << 30, MinOneBatch: true})
	if err != nil {
		return err
	}
	defer rr.Release()
	return producers.EachBatchHeader(rr, fn)
}

func (s *logStore) cleanState(now time.Time, minLag time.Duration, maxOffset int64) logstore.CleanState {
	return s.p.log.CleanState(now, minLag, maxOffset)
}

func (s *logStore) compact(o logstore.CompactOptions) (logstore.CompactResult, error) {
	return s.p.log.Compact(o)
}
