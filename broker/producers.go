package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// producerIDs hands out producer IDs for InitProducerId. IDs are reserved
// in persisted blocks so that a restarted broker never gives a new
// producer an ID an old producer may still be writing with.
type producerIDs struct {
	fs    vfs.FS
	path  string
	mu    sync.Mutex
	next  int64
	limit int64 // first ID not covered by the persisted reservation
}

const producerIDBlock = 1000

func openProducerIDs(fsys vfs.FS, p string) (*producerIDs, error) {
	pi := &producerIDs{fs: fsys, path: p}
	data, err := readFile(fsys, p)
	switch {
	case err == nil && len(data) == 8:
		pi.next = int64(binary.BigEndian.Uint64(data))
		pi.limit = pi.next
	case err == nil:
		return nil, fmt.Errorf("broker: %s: %d bytes, want 8", p, len(data))
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("broker: reading %s: %w", p, err)
	}
	return pi, nil
}

// allocate returns a fresh producer ID.
func (pi *producerIDs) allocate() (int64, error) {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	if pi.next >= pi.limit {
		limit := pi.next + producerIDBlock
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], uint64(limit))
		if err := vfs.WriteFileAtomic(pi.fs, pi.path, buf[:], 0o644); err != nil {
			return 0, err
		}
		pi.limit = limit
	}
	id := pi.next
	pi.next++
	return id, nil
}

// producerState is what a partition remembers about one idempotent
// producer: its epoch, its last sequence and its last five batches, so that
// a retried batch is recognized and answered with its original offset
// (Kafka's ProducerStateEntry, NUM_BATCHES_TO_RETAIN = 5).
type producerState struct {
	epoch   int16
	lastSeq int32
	batches [5]seqBatch
	n       int // valid entries in batches, newest at (head-1)
	head    int
	updated time.Time
	// coordEpoch is the coordinator epoch of the producer's last marker
	// here, plus one (0: none), which an older coordinator's marker may
	// not follow (WriteTxnMarkers).
	coordEpoch1 int32
}

type seqBatch struct {
	firstSeq, lastSeq     int32
	firstOffset, lastOffs int64
	appendTime            int64
}

// producerExpiry is Kafka's producer.id.expiration.ms.
const producerExpiry = 24 * time.Hour

// lastSequence is Kafka's DefaultRecordBatch.incrementSequence.
func lastSequence(base int32, delta int32) int32 {
	if base > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - base) - 1
	}
	return base + delta
}

func inSequence(last, next int32) bool {
	return next == last+1 || (last == math.MaxInt32 && next == 0)
}

// checkSequence judges an idempotent batch against the partition's state
// for its producer, as Kafka's ProducerAppendInfo does. It returns the
// cached batch when h is a retry of one of the last five, or an error code.
// The caller holds p.mu.
func (p *partition) checkSequence(h *records.BatchHeader) (*seqBatch, int16) {
	st := p.producers[h.ProducerID]
	if st == nil {
		// No state (new producer, or its batches were deleted, or the
		// broker restarted): Kafka accepts any sequence.
		return nil, 0
	}
	if h.ProducerEpoch < st.epoch {
		return nil, kerr.InvalidProducerEpoch.Code
	}
	if h.ProducerEpoch > st.epoch {
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber.Code
		}
		return nil, 0
	}
	last := lastSequence(h.BaseSequence, h.LastOffsetDelta)
	for i := 0; i < st.n; i++ {
		b := &st.batches[i]
		if b.firstSeq == h.BaseSequence && b.lastSeq == last {
			return b, 0
		}
	}
	if !inSequence(st.lastSeq, h.BaseSequence) {
		return nil, kerr.OutOfOrderSequenceNumber.Code
	}
	return nil, 0
}

// recordSequence updates producer state after a successful append. The
// caller holds p.mu.
func (p *partition) recordSequence(h *records.BatchHeader, base, last, appendTime int64, now time.Time) {
	p.producersGen++
	st := p.producers[h.ProducerID]
	if st == nil {
		if len(p.producers) >= 1024 {
			p.expireProducers(now)
		}
		st = &producerState{}
		p.producers[h.ProducerID] = st
	} else if st.epoch != h.ProducerEpoch {
		*st = producerState{coordEpoch1: st.coordEpoch1}
	}
	st.epoch = h.ProducerEpoch
	st.lastSeq = lastSequence(h.BaseSequence, h.LastOffsetDelta)
	st.batches[st.head] = seqBatch{firstSeq: h.BaseSequence, lastSeq: st.lastSeq, firstOffset: base, lastOffs: last, appendTime: appendTime}
	st.head = (st.head + 1) % len(st.batches)
	if st.n < len(st.batches) {
		st.n++
	}
	st.updated = now
}

// holds reports whether st's batches reach offset last.
func (st *producerState) holds(last int64) bool {
	for i := 0; i < st.n; i++ {
		if st.batches[i].lastOffs >= last {
			return true
		}
	}
	return false
}

func (p *partition) expireProducers(now time.Time) {
	for id, st := range p.producers {
		if now.Sub(st.updated) > producerExpiry {
			delete(p.producers, id)
			p.producersGen++
		}
	}
}

// producerScanOffsets is how far back from the log end loadProducerState
// looks. Retries only ever concern a producer's last few in-flight batches,
// so the tail is enough; a producer not seen there gets no state and, as in
// Kafka, its next sequence is accepted.
const producerScanOffsets = 4096

// loadProducerState rebuilds idempotence state from the batch headers at
// the tail of the partition's store (its log, or its spool once forwarded),
// so that a retry arriving after a broker restart is still recognized as a
// duplicate, and a batch arriving ahead of a lost one is refused as out of
// order instead of being accepted. Only the batch headers are looked at.
// The caller holds p.mu.
func (p *partition) loadProducerState(log *slog.Logger, now time.Time) {
	p.producersLoaded = true
	st := p.store()
	end := st.logEnd()
	start := max(st.logStart(), end-producerScanOffsets)
	if start >= end {
		return
	}
	err := st.eachBatchHeader(start, func(h *records.BatchHeader) bool {
		if h.ProducerID >= 0 && h.BaseSequence >= 0 && !h.IsControl() {
			if st := p.producers[h.ProducerID]; st != nil && st.holds(h.LastOffset()) {
				return true // already in saved state (a forwarded partition's)
			}
			appendTime := int64(-1)
			if h.HasLogAppendTime() {
				appendTime = h.MaxTimestamp
			}
			p.recordSequence(h, h.BaseOffset, h.LastOffset(), appendTime, now)
		}
		return true
	})
	if err != nil {
		log.Warn("rebuilding producer state", "topic", p.topic.name, "partition", p.index, "err", err)
	}
}

// eachBatchHeader calls fn with the header of each batch rr covers, in
// order, reading only the 61 header bytes, until fn returns false. A batch
// emptied by compaction is exactly a header; a header that does not parse
// (a length below the header's included) is an error.
func eachBatchHeader(rr *logstore.ReadResult, fn func(*records.BatchHeader) bool) error {
	var hdr [records.BatchHeaderLen]byte
	for _, rg := range rr.Ranges {
		for pos, end := rg.Pos, rg.Pos+rg.Len; pos+records.BatchHeaderLen <= end; {
			if _, err := rg.File.ReadAt(hdr[:], pos); err != nil {
				return err
			}
			h, err := records.ParseHeader(hdr[:]) // refuses a length below the header's
			if err != nil {
				return fmt.Errorf("batch header at byte %d: %w", pos, err)
			}
			if !fn(&h) {
				return nil
			}
			pos += int64(h.Size())
		}
	}
	return nil
}
