package uplink

// The forwarder's upstream producer identity, kept across a local crash.
//
// A forwarder ships as an idempotent producer with one request in flight,
// so the upstream drops a resent batch when it carries the producer ID,
// epoch and sequence range it was first sent with. Before a batch is
// first sent, the forwarder writes that identity and the batch's spool
// range to <spool dir>.upstream-producer (fsynced: it must be on disk
// before the bytes leave). Since only one batch is ever in flight, every
// record before the journaled batch was acknowledged upstream, whatever
// the spool's acked marker (written lazily, every commitEvery) says.
// After a crash the forwarder therefore takes the records before the
// batch as acknowledged, rebuilds the batch from the same spool records
// (the same records, hence the same sequence range) and resends it under
// the same producer ID and epoch: the upstream answers it as a duplicate
// if it had written it, and nothing is shipped twice. Only when the
// upstream no longer knows the producer (it expired it:
// UNKNOWN_PRODUCER_ID, OUT_OF_ORDER_SEQUENCE_NUMBER) does the forwarder
// take a new producer ID, which forward-status and the log report;
// records in flight at that moment may then be duplicated.
//
// The journal is written once per shipped batch, so it is two fixed slots
// of journalSlotSize bytes overwritten in turn in place (one write and one
// fdatasync, where a replaced file cost a create, a rename and two
// fsyncs). A slot, all big-endian:
//
//	off len
//	  0   4 magic "MKUJ"
//	  4   1 version (1)
//	  5   1 1 if an offset sync follows, else 0
//	  6   2 zero
//	  8   8 generation: the slot with the larger valid one is current
//	 16   8 producer ID
//	 24   2 epoch
//	 26   2 zero
//	 28   4 first sequence of the batch
//	 32   8 first spool sequence of the batch
//	 40   8 last spool sequence (inclusive)
//	 48   4 records in the batch
//	 52   4 spool records in the batch
//	 56  24 offset sync: local, upstream, length (groups.go)
//	 80   4 CRC32C of bytes 0..79
//
// Slot generation g lives at (g mod 2) × journalSlotSize, so a write torn
// by a crash damages only the slot being written, whose batch never left:
// the other slot still holds the batch before it, acknowledged, which a
// restart resends at worst as a duplicate the upstream drops. Each run
// makes the file anew with its first write (replaced atomically, as the
// JSON journal of earlier versions was, which is still read), then
// writes in place. Under durability "never" there is no fsync: a power
// loss may then duplicate the in-flight batch, as it may lose records.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
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
	// restart can still translate group offsets (groups.go).
	Sync *offsetSync `json:"sync,omitempty"`
}

func producerJournalPath(spoolDir string) string { return spoolDir + ".upstream-producer" }

const (
	journalSlotSize = 128
	journalSlotUsed = 84
)

// encodeJournalSlot writes j as generation gen into a slot.
func encodeJournalSlot(slot []byte, j *inFlight, gen uint64) {
	slot = slot[:journalSlotSize]
	clear(slot)
	copy(slot, "MKUJ")
	slot[4] = 1
	if j.Sync != nil {
		slot[5] = 1
		binary.BigEndian.PutUint64(slot[56:], uint64(j.Sync.Local))
		binary.BigEndian.PutUint64(slot[64:], uint64(j.Sync.Upstream))
		binary.BigEndian.PutUint64(slot[72:], uint64(j.Sync.Len))
	}
	binary.BigEndian.PutUint64(slot[8:], gen)
	binary.BigEndian.PutUint64(slot[16:], uint64(j.ProducerID))
	binary.BigEndian.PutUint16(slot[24:], uint16(j.Epoch))
	binary.BigEndian.PutUint32(slot[28:], uint32(j.Seq))
	binary.BigEndian.PutUint64(slot[32:], uint64(j.First))
	binary.BigEndian.PutUint64(slot[40:], uint64(j.Last))
	binary.BigEndian.PutUint32(slot[48:], uint32(j.Records))
	binary.BigEndian.PutUint32(slot[52:], uint32(j.SpoolRecs))
	binary.BigEndian.PutUint32(slot[80:], crc32.Checksum(slot[:80], castagnoli))
}

// decodeJournalSlot reads a slot; false when it holds no valid entry.
func decodeJournalSlot(slot []byte) (inFlight, uint64, bool) {
	if len(slot) < journalSlotUsed || string(slot[:4]) != "MKUJ" || slot[4] != 1 ||
		binary.BigEndian.Uint32(slot[80:]) != crc32.Checksum(slot[:80], castagnoli) {
		return inFlight{}, 0, false
	}
	j := inFlight{
		ProducerID: int64(binary.BigEndian.Uint64(slot[16:])),
		Epoch:      int16(binary.BigEndian.Uint16(slot[24:])),
		Seq:        int32(binary.BigEndian.Uint32(slot[28:])),
		First:      int64(binary.BigEndian.Uint64(slot[32:])),
		Last:       int64(binary.BigEndian.Uint64(slot[40:])),
		Records:    int32(binary.BigEndian.Uint32(slot[48:])),
		SpoolRecs:  int(binary.BigEndian.Uint32(slot[52:])),
	}
	if slot[5] == 1 {
		j.Sync = &offsetSync{Local: int64(binary.BigEndian.Uint64(slot[56:])),
			Upstream: int64(binary.BigEndian.Uint64(slot[64:])), Len: int64(binary.BigEndian.Uint64(slot[72:]))}
	}
	return j, binary.BigEndian.Uint64(slot[8:]), true
}

// decodeJournal returns the current entry of a journal file and its
// generation: the valid slot of the larger generation, or the JSON of the
// journal's earlier format.
func decodeJournal(data []byte) (*inFlight, uint64, error) {
	var best *inFlight
	var bestGen uint64
	for off := 0; off+journalSlotUsed <= len(data) && off < 2*journalSlotSize; off += journalSlotSize {
		if j, gen, ok := decodeJournalSlot(data[off:min(len(data), off+journalSlotSize)]); ok && (best == nil || gen > bestGen) {
			best, bestGen = &j, gen
		}
	}
	if best == nil {
		if !bytes.HasPrefix(data, []byte("{")) {
			return nil, 0, errors.New("no valid slot")
		}
		var j inFlight
		if err := json.Unmarshal(data, &j); err != nil {
			return nil, 0, err
		}
		best = &j
	}
	if best.ProducerID < 0 || best.First > best.Last || best.SpoolRecs < 1 {
		return nil, 0, fmt.Errorf("implausible content %+v", *best)
	}
	return best, bestGen, nil
}

// loadInFlight reads the journal; nil when there is none. A damaged
// journal is reported and ignored: the forwarder then starts as a new
// producer, which at worst duplicates the in-flight batch.
func (f *Forwarder) loadInFlight() *inFlight {
	data, err := vfs.ReadFile(f.u.env.FS, f.journal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var j *inFlight
	if err == nil {
		j, f.journalGen, err = decodeJournal(data)
	}
	if err != nil {
		f.u.log.Error("forwarding: unreadable upstream producer journal; continuing as a new producer", "file", f.journal, "err", err)
		return nil
	}
	return j
}

// saveInFlight journals b under the current producer before it is sent.
func (f *Forwarder) saveInFlight(b *outBatch) error {
	j := inFlight{ProducerID: f.prod.id, Epoch: f.prod.epoch, Seq: f.prod.seq, First: b.first, Last: b.last,
		Records: b.records, SpoolRecs: b.spoolRecs, Sync: f.syncs.newest()}
	if f.journaled != nil && f.journaled.sameBatch(&j) {
		return nil // a resend of the journaled batch
	}
	if err := f.writeJournal(&j); err != nil {
		return fmt.Errorf("journaling the upstream producer: %w", err)
	}
	f.journaled = &j
	return nil
}

// writeJournal makes j the journal's current entry: the first time in
// this run by replacing the file, then in place.
func (f *Forwarder) writeJournal(j *inFlight) error {
	durable := f.u.env.Sync != logstore.SyncNever
	gen := f.journalGen + 1
	var slot [journalSlotSize]byte
	encodeJournalSlot(slot[:], j, gen)
	if f.journalFile == nil {
		image := make([]byte, 2*journalSlotSize)
		copy(image[gen%2*journalSlotSize:], slot[:])
		if err := f.replaceStateFile(f.journal, image); err != nil {
			return err
		}
		file, err := f.u.env.FS.OpenFile(f.journal, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		f.journalFile, f.journalGen = file, gen
		return nil
	}
	_, err := f.journalFile.WriteAt(slot[:], int64(gen%2*journalSlotSize))
	if err == nil && durable {
		err = f.journalFile.Sync()
	}
	if err != nil {
		// After a failed write or fsync what the file holds is unknown
		// (and a second fsync may report success for pages it dropped):
		// the next attempt makes the file anew.
		f.closeJournal()
		return err
	}
	f.journalGen = gen
	return nil
}

// replaceStateFile replaces one of the forwarder's state files beside its
// spool atomically: durably, unless durability is never.
func (f *Forwarder) replaceStateFile(name string, data []byte) error {
	if f.u.env.Sync == logstore.SyncNever {
		return vfs.ReplaceFileUnsynced(f.u.env.FS, name, data, 0o644)
	}
	return vfs.WriteFileAtomic(f.u.env.FS, name, data, 0o644)
}

// closeJournal closes the journal's file at the end of run.
func (f *Forwarder) closeJournal() {
	if f.journalFile != nil {
		f.journalFile.Close()
		f.journalFile = nil
	}
}

func (j *inFlight) sameBatch(o *inFlight) bool {
	a, b := *j, *o
	a.Sync, b.Sync = nil, nil
	return a == b
}

// resume applies the journal at start: the producer identity, the
// acknowledgement it implies, and the batch to resend first.
func (f *Forwarder) resume(j *inFlight) {
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
	f.u.log.Info("forwarding: resuming as the same upstream producer after a restart",
		"topic", f.topic, "partition", f.index, "producer_id", j.ProducerID, "epoch", j.Epoch, "resend_from", j.First)
}

// rebuild makes the journaled batch again from its spool records: the
// same records, so the same sequence range.
func (f *Forwarder) rebuild(j *inFlight) (outBatch, error) {
	recs, err := f.sp.Read(j.First, j.SpoolRecs, 1<<30)
	if err != nil {
		return outBatch{}, err
	}
	if len(recs) != j.SpoolRecs || recs[0].Seq != j.First || recs[len(recs)-1].Last() != j.Last {
		return outBatch{}, fmt.Errorf("spool no longer holds %d-%d as journaled", j.First, j.Last)
	}
	var b outBatch
	if len(recs) == 1 {
		b, err = f.build(recs, false) // as build made it: as it is, or re-encoded for LogAppendTime
	} else {
		var h records.BatchHeader
		if h, err = records.ParseHeader(recs[0].Data); err == nil {
			b, err = merge(recs, h.Compression(), f.u.env.MaxBatchBytes)
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
func (f *Forwarder) setProducer(p upProducer) {
	f.prod = p
	f.shownPID.Store(p.id)
	f.shownEpoch.Store(int32(p.epoch))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
