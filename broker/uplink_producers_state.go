package broker

// Idempotence state of a forwarded partition, kept across a crash.
//
// A forwarded partition's records leave its spool as soon as the upstream
// acknowledges them, so after a restart the spool's tail may hold nothing
// of a producer that was writing a moment before. Without its state the
// partition would accept that producer's next batch whatever its sequence
// (as Kafka does for an unknown producer), so a batch sent after one the
// crash took back would be accepted ahead of its resend: the records
// would be reordered. Kafka keeps producer state beyond the deletion of
// the batches that built it (producer snapshots); here each commit of
// acknowledged records first writes the partition's producer state to
// <spool dir>.producers (JSON, atomically, fsynced unless durability is
// never), and a restart loads it before rebuilding from the spool's tail.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"time"
)

type producerSnapshot struct {
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

func producersPath(spoolDir string) string { return spoolDir + ".producers" }

// snapshotProducers encodes p's producer state; the caller holds p.mu.
func (p *partition) snapshotProducers() []byte {
	m := make(map[int64]producerSnapshot, len(p.producers))
	for pid, st := range p.producers {
		s := producerSnapshot{Epoch: st.epoch, LastSeq: st.lastSeq, UpdatedMs: st.updated.UnixMilli()}
		for i := 0; i < st.n; i++ {
			b := st.batches[(st.head-st.n+i+len(st.batches))%len(st.batches)]
			s.Batches = append(s.Batches, batchSnapshot{b.firstSeq, b.lastSeq, b.firstOffset, b.lastOffs, b.appendTime})
		}
		m[pid] = s
	}
	data, _ := json.Marshal(m)
	return data
}

// saveProducers writes the partition's producer state if it changed since
// the last write; commit calls it before deleting acknowledged records.
func (f *forwarder) saveProducers() error {
	f.p.mu.Lock()
	gen := f.p.producersGen
	if f.producersSaved != nil && gen == f.producersSavedGen {
		f.p.mu.Unlock()
		return nil // unchanged since the last write
	}
	data := f.p.snapshotProducers()
	f.p.mu.Unlock()
	if string(data) == string(f.producersSaved) {
		f.producersSavedGen = gen
		return nil
	}
	if err := f.replaceStateFile(f.producersPath, data); err != nil {
		return err
	}
	f.producersSaved, f.producersSavedGen = data, gen
	return nil
}

// loadProducers puts the saved producer state into p before its spool's
// tail is scanned; the caller holds p.mu. A damaged file is reported and
// ignored (the tail scan still runs).
func (f *forwarder) loadProducers() {
	data, err := readFile(f.u.b.fs, f.producersPath)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var m map[int64]producerSnapshot
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		f.u.b.log.Error("forwarding: unreadable producer state; rebuilding it from the spool's tail only", "file", f.producersPath, "err", err)
		return
	}
	if f.p.producers == nil {
		f.p.producers = map[int64]*producerState{}
	}
	for pid, s := range m {
		st := &producerState{epoch: s.Epoch, lastSeq: s.LastSeq, updated: time.UnixMilli(s.UpdatedMs)}
		for _, b := range s.Batches {
			if st.n == len(st.batches) {
				break
			}
			st.batches[st.head] = seqBatch{firstSeq: b.FirstSeq, lastSeq: b.LastSeq, firstOffset: b.FirstOffset, lastOffs: b.LastOffset, appendTime: b.AppendTime}
			st.head = (st.head + 1) % len(st.batches)
			st.n++
		}
		f.p.producers[pid] = st
	}
	f.producersSaved, f.producersSavedGen = data, f.p.producersGen
}
