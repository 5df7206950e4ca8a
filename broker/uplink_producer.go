package broker

// The forwarder's upstream producer identity, kept across a local crash.
//
// A forwarder ships as an idempotent producer with one request in flight,
// so the upstream drops a resent batch when it carries the producer ID,
// epoch and sequence range it was first sent with. Before a batch is
// first sent, the forwarder writes that identity and the batch's spool
// range to <spool dir>.upstream-producer (JSON, replaced atomically and
// fsynced: it must be on disk before the bytes leave). Since only one
// batch is ever in flight, every record before the journaled batch was
// acknowledged upstream, whatever the spool's acked marker (written
// lazily, every commitEvery) says. After a crash the forwarder therefore
// takes the records before the batch as acknowledged, rebuilds the batch
// from the same spool records (the same records, hence the same sequence
// range) and resends it under the same producer ID and epoch: the
// upstream answers it as a duplicate if it had written it, and nothing is
// shipped twice. Only when the upstream no longer knows the producer (it
// expired it: UNKNOWN_PRODUCER_ID, OUT_OF_ORDER_SEQUENCE_NUMBER) does the
// forwarder take a new producer ID, which forward-status and the log
// report; records in flight at that moment may then be duplicated.
//
// Under durability "never" the journal is written without fsync: a power
// loss may then duplicate the in-flight batch, as it may lose records.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// inFlight is the journal's content: the producer identity and the batch
// last handed to the upstream.
type inFlight struct {
	ProducerID int64 `json:"producer_id"`
	Epoch      int16 `json:"epoch"`
	Seq        int32 `json:"seq"`   // the batch's first sequence
	First      int64 `json:"first"` // spool sequences of the batch, inclusive
	Last       int64 `json:"last"`
	Records    int32 `json:"records"`
	SpoolRecs  int   `json:"spool_records"`
	// Sync is the newest offset sync when the batch was journaled, so a
	// restart can still translate group offsets (uplink_groups.go).
	Sync *offsetSync `json:"sync,omitempty"`
}

func producerJournalPath(spoolDir string) string { return spoolDir + ".upstream-producer" }

// loadInFlight reads the journal; nil when there is none. A damaged
// journal is reported and ignored: the forwarder then starts as a new
// producer, which at worst duplicates the in-flight batch.
func (f *forwarder) loadInFlight() *inFlight {
	data, err := readFile(f.u.b.fs, f.journal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var j inFlight
	if err == nil {
		err = json.Unmarshal(data, &j)
	}
	if err == nil && (j.ProducerID < 0 || j.First > j.Last || j.SpoolRecs < 1) {
		err = fmt.Errorf("implausible content %s", data)
	}
	if err != nil {
		f.u.b.log.Error("forwarding: unreadable upstream producer journal; continuing as a new producer", "file", f.journal, "err", err)
		return nil
	}
	return &j
}

// saveInFlight journals b under the current producer before it is sent.
func (f *forwarder) saveInFlight(b *outBatch) error {
	j := inFlight{ProducerID: f.prod.id, Epoch: f.prod.epoch, Seq: f.prod.seq, First: b.first, Last: b.last,
		Records: b.records, SpoolRecs: b.spoolRecs, Sync: f.syncs.newest()}
	if f.journaled != nil && f.journaled.sameBatch(&j) {
		return nil // a resend of the journaled batch
	}
	data, _ := json.Marshal(j)
	var err error
	if f.u.b.cfg.Sync.Mode == logstore.SyncNever {
		err = vfs.ReplaceFileUnsynced(f.u.b.fs, f.journal, data, 0o644)
	} else {
		err = vfs.WriteFileAtomic(f.u.b.fs, f.journal, data, 0o644)
	}
	if err != nil {
		return fmt.Errorf("journaling the upstream producer: %w", err)
	}
	f.journaled = &j
	return nil
}

func (j *inFlight) sameBatch(o *inFlight) bool {
	a, b := *j, *o
	a.Sync, b.Sync = nil, nil
	return a == b
}

// resume applies the journal at start: the producer identity, the
// acknowledgement it implies, and the batch to resend first.
func (f *forwarder) resume(j *inFlight) {
	f.setProducer(upProducer{id: j.ProducerID, epoch: j.Epoch, seq: j.Seq})
	f.journaled = j
	if j.Sync != nil {
		f.syncs.add(*j.Sync)
	}
	if f.acked.Load() >= j.Last {
		// The batch was acknowledged (and committed) before the crash.
		f.prod.seq = nextSeq(j.Seq, j.Records)
		return
	}
	if j.First-1 > f.acked.Load() {
		f.acked.Store(j.First - 1)
		select {
		case f.commitNote <- struct{}{}:
		default:
		}
	}
	f.resend = j
	f.u.b.log.Info("forwarding: resuming as the same upstream producer after a restart",
		"topic", f.p.topic.name, "partition", f.p.index, "producer_id", j.ProducerID, "epoch", j.Epoch, "resend_from", j.First)
}

// rebuild makes the journaled batch again from its spool records: the
// same records, so the same sequence range.
func (f *forwarder) rebuild(j *inFlight) (outBatch, error) {
	recs, err := f.sp.Read(j.First, j.SpoolRecs, 1<<30)
	if err != nil {
		return outBatch{}, err
	}
	if len(recs) != j.SpoolRecs || recs[0].Seq != j.First || recs[len(recs)-1].Last() != j.Last {
		return outBatch{}, fmt.Errorf("spool no longer holds %d-%d as journaled", j.First, j.Last)
	}
	var b outBatch
	if len(recs) == 1 {
		b, err = f.build(recs) // as build made it: as it is, or re-encoded for LogAppendTime
	} else {
		var h records.BatchHeader
		if h, err = records.ParseHeader(recs[0].Data); err == nil {
			b, err = merge(recs, h.Compression())
		}
	}
	if err == nil && (b.records != j.Records || b.last != j.Last) {
		err = fmt.Errorf("rebuilt batch holds %d records up to %d, journaled %d up to %d", b.records, b.last, j.Records, j.Last)
	}
	return b, err
}

// removeJournal deletes a deleted topic's journal.
func removeJournal(fsys vfs.FS, journal string) error {
	err := fsys.Remove(journal)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// setProducer changes the producer identity (run's goroutine, or before it
// starts) and its copy for ForwardStat.
func (f *forwarder) setProducer(p upProducer) {
	f.prod = p
	f.shownPID.Store(p.id)
	f.shownEpoch.Store(int32(p.epoch))
}
