// Package producers is a partition's idempotent-producer state and the
// broker's producer-ID allocation: which epoch and sequence each producer
// last wrote, its last five batches so that a retry is answered with its
// original offsets (Kafka's ProducerStateEntry), the expiry of idle
// producers, the rebuild of that state from the batch headers at a store's
// tail, and the snapshot a forwarded partition saves beside its spool.
//
// It knows nothing of partitions, stores or requests: a State is a value
// the partition holds and guards with its own mutex, and the rebuild reads
// headers through a function the caller hands it. The sequence check and
// record are plain methods on that value, called once per idempotent batch,
// so the produce path pays no interface call for them.
package producers

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// IDs hands out producer IDs for InitProducerId. IDs are reserved in
// persisted blocks so that a restarted broker never gives a new producer
// an ID an old producer may still be writing with.
type IDs struct {
	fs    vfs.FS
	path  string
	mu    sync.Mutex
	next  int64
	limit int64 // first ID not covered by the persisted reservation
}

const idBlock = 1000

// OpenIDs reads the reservation file at p (absent: IDs start at 0).
func OpenIDs(fsys vfs.FS, p string) (*IDs, error) {
	pi := &IDs{fs: fsys, path: p}
	data, err := vfs.ReadFile(fsys, p)
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

// Allocate returns a fresh producer ID.
func (pi *IDs) Allocate() (int64, error) {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	if pi.next >= pi.limit {
		limit := pi.next + idBlock
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

// Entry is what a partition remembers about one idempotent producer: its
// epoch, its last sequence and its last five batches (Kafka's
// ProducerStateEntry, NUM_BATCHES_TO_RETAIN = 5).
type Entry struct {
	Epoch   int16
	LastSeq int32
	Updated time.Time
	batches [5]Batch
	n       int // valid entries in batches, newest at (head-1)
	head    int
	// coordEpoch1 is the coordinator epoch of the producer's last marker
	// here, plus one (0: none), which an older coordinator's marker may
	// not follow (WriteTxnMarkers).
	coordEpoch1 int32
}

// CoordinatorEpoch is the coordinator epoch of the producer's last marker
// on the partition, -1 when none.
func (e *Entry) CoordinatorEpoch() int32 { return e.coordEpoch1 - 1 }

// Batch is one of a producer's remembered batches.
type Batch struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
	AppendTime              int64 // -1 unless the topic uses LogAppendTime
}

// Expiry is Kafka's producer.id.expiration.ms.
const Expiry = 24 * time.Hour

// maxBeforeExpiry is how many producers a partition holds before a new
// one makes it drop those idle longer than Expiry.
const maxBeforeExpiry = 1024

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

// State is one partition's idempotent-producer state. Its zero value is
// empty and ready; the partition holds it by value and guards every call
// with its own mutex.
type State struct {
	m      map[int64]*Entry
	gen    uint64
	loaded bool
}

// Gen counts changes, so a forwarded partition saves its state only when
// it moved.
func (s *State) Gen() uint64 { return s.gen }

// Loaded reports whether Rebuild ran.
func (s *State) Loaded() bool { return s.loaded }

// Get returns pid's entry, nil when the partition has none.
func (s *State) Get(pid int64) *Entry { return s.m[pid] }

// Each calls fn with each producer's entry, in no order.
func (s *State) Each(fn func(pid int64, e *Entry)) {
	for pid, e := range s.m {
		fn(pid, e)
	}
}

// Check judges an idempotent batch against the state for its producer, as
// Kafka's ProducerAppendInfo does. It returns the cached batch when h is a
// retry of one of the last five, or an error code.
func (s *State) Check(h *records.BatchHeader) (*Batch, int16) {
	st := s.m[h.ProducerID]
	if st == nil {
		// No state (new producer, or its batches were deleted, or the
		// broker restarted): Kafka accepts any sequence.
		return nil, 0
	}
	if h.ProducerEpoch < st.Epoch {
		return nil, kerr.InvalidProducerEpoch.Code
	}
	if h.ProducerEpoch > st.Epoch {
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber.Code
		}
		return nil, 0
	}
	last := lastSequence(h.BaseSequence, h.LastOffsetDelta)
	for i := 0; i < st.n; i++ {
		b := &st.batches[i]
		if b.FirstSeq == h.BaseSequence && b.LastSeq == last {
			return b, 0
		}
	}
	if !inSequence(st.LastSeq, h.BaseSequence) {
		return nil, kerr.OutOfOrderSequenceNumber.Code
	}
	return nil, 0
}

// Record updates the state after a successful append of h at offsets
// base..last.
func (s *State) Record(h *records.BatchHeader, base, last, appendTime int64, now time.Time) {
	s.gen++
	st := s.m[h.ProducerID]
	if st == nil {
		if s.m == nil {
			s.m = map[int64]*Entry{}
		}
		if len(s.m) >= maxBeforeExpiry {
			s.Expire(now)
		}
		st = &Entry{}
		s.m[h.ProducerID] = st
	} else if st.Epoch != h.ProducerEpoch {
		*st = Entry{coordEpoch1: st.coordEpoch1}
	}
	st.Epoch = h.ProducerEpoch
	st.LastSeq = lastSequence(h.BaseSequence, h.LastOffsetDelta)
	st.batches[st.head] = Batch{FirstSeq: h.BaseSequence, LastSeq: st.LastSeq, FirstOffset: base, LastOffset: last, AppendTime: appendTime}
	st.head = (st.head + 1) % len(st.batches)
	if st.n < len(st.batches) {
		st.n++
	}
	st.Updated = now
}

// Marker updates pid's state after a transaction marker from the
// coordinator at coordinatorEpoch, for producer epoch epoch: a newer epoch
// fences the older ones here too, as Kafka's does, and the coordinator
// epoch only grows. With create, a producer the partition had not seen
// gets an entry (a WriteTxnMarkers marker); without, it does not (the
// coordinator's own markers), so that a producer whose batches left the
// scanned tail keeps being taken at any sequence after a restart.
func (s *State) Marker(pid int64, epoch int16, coordinatorEpoch int32, create bool, now time.Time) {
	st := s.m[pid]
	switch {
	case st == nil && create:
		if s.m == nil {
			s.m = map[int64]*Entry{}
		}
		st = &Entry{Epoch: epoch, LastSeq: -1, Updated: now}
		s.m[pid] = st
		s.gen++
	case st != nil && st.Epoch < epoch:
		*st = Entry{Epoch: epoch, LastSeq: -1, Updated: now, coordEpoch1: st.coordEpoch1}
		s.gen++
	}
	if st != nil && st.coordEpoch1 < coordinatorEpoch+1 {
		st.coordEpoch1 = coordinatorEpoch + 1
		s.gen++
	}
}

// holds reports whether st's batches reach offset last.
func (st *Entry) holds(last int64) bool {
	for i := 0; i < st.n; i++ {
		if st.batches[i].LastOffset >= last {
			return true
		}
	}
	return false
}

// Expire drops the producers idle longer than Expiry.
func (s *State) Expire(now time.Time) {
	for id, st := range s.m {
		if now.Sub(st.Updated) > Expiry {
			delete(s.m, id)
			s.gen++
		}
	}
}

// ScanOffsets is how far back from the log end Rebuild looks. Retries only
// ever concern a producer's last few in-flight batches, so the tail is
// enough; a producer not seen there gets no state and, as in Kafka, its
// next sequence is accepted.
const ScanOffsets = 4096

// Rebuild rebuilds the state from the batch headers of a store's tail
// (offsets logStart..logEnd, read by each from an offset), so that a retry
// arriving after a broker restart is still recognized as a duplicate, and
// a batch arriving ahead of a lost one is refused as out of order instead
// of being accepted. Producers already in the state up to a batch (a saved
// snapshot's) are not recorded again. It marks the state Loaded even when
// each fails, as the state it has is then the best there is.
func (s *State) Rebuild(logStart, logEnd int64, each func(from int64, fn func(*records.BatchHeader) bool) error, now time.Time) error {
	s.loaded = true
	start := max(logStart, logEnd-ScanOffsets)
	if start >= logEnd {
		return nil
	}
	return each(start, func(h *records.BatchHeader) bool {
		if h.ProducerID >= 0 && h.BaseSequence >= 0 && !h.IsControl() {
			if st := s.m[h.ProducerID]; st != nil && st.holds(h.LastOffset()) {
				return true // already in saved state (a forwarded partition's)
			}
			appendTime := int64(-1)
			if h.HasLogAppendTime() {
				appendTime = h.MaxTimestamp
			}
			s.Record(h, h.BaseOffset, h.LastOffset(), appendTime, now)
		}
		return true
	})
}

// EachBatchHeader calls fn with the header of each batch rr covers, in
// order, reading only the 61 header bytes, until fn returns false. A batch
// emptied by compaction is exactly a header; a header that does not parse
// (a length below the header's included) is an error.
func EachBatchHeader(rr *logstore.ReadResult, fn func(*records.BatchHeader) bool) error {
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

// A forwarded partition's producer state as the uplink saves it beside
// the spool (<spool dir>.producers): JSON, pid → snapshot.
type snapshot struct {
	Epoch     int16           `json:"epoch"`
	LastSeq   int32           `json:"last_seq"`
	Batches   []batchSnapshot `json:"batches"` // oldest first
	UpdatedMs int64           `json:"updated_ms"`
}

type batchSnapshot struct {
	FirstSeq    int32 `json:"first_seq"`
	LastSeq     int32 `json:"last_seq"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
	AppendTime  int64 `json:"append_time"`
}

// Snapshot encodes the state.
func (s *State) Snapshot() []byte {
	m := make(map[int64]snapshot, len(s.m))
	for pid, st := range s.m {
		e := snapshot{Epoch: st.Epoch, LastSeq: st.LastSeq, UpdatedMs: st.Updated.UnixMilli()}
		for i := 0; i < st.n; i++ {
			b := st.batches[(st.head-st.n+i+len(st.batches))%len(st.batches)]
			e.Batches = append(e.Batches, batchSnapshot(b))
		}
		m[pid] = e
	}
	data, _ := json.Marshal(m)
	return data
}

// Restore puts a saved snapshot into the state, before the store's tail is
// scanned. Nothing is loaded when data does not decode.
func (s *State) Restore(data []byte) error {
	var m map[int64]snapshot
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if s.m == nil {
		s.m = map[int64]*Entry{}
	}
	for pid, e := range m {
		st := &Entry{Epoch: e.Epoch, LastSeq: e.LastSeq, Updated: time.UnixMilli(e.UpdatedMs)}
		for _, b := range e.Batches {
			if st.n == len(st.batches) {
				break
			}
			st.batches[st.head] = Batch(b)
			st.head = (st.head + 1) % len(st.batches)
			st.n++
		}
		s.m[pid] = st
	}
	return nil
}
