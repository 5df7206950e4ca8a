package uplink

import (
	"testing"
)

// The journal's two slots: the valid one of the larger generation is
// current; a slot torn by a crash leaves the other one; a file whose slots
// are both damaged is an error, not a guess; the JSON journal of earlier
// versions is still read.
func TestJournalSlots(t *testing.T) {
	a := inFlight{ProducerID: 7, Epoch: 2, Seq: 100, First: 10, Last: 19, Records: 10, SpoolRecs: 2}
	b := inFlight{ProducerID: 7, Epoch: 2, Seq: 110, First: 20, Last: 29, Records: 10, SpoolRecs: 1, Sync: &offsetSync{Local: 10, Upstream: 50, Len: 10}}
	file := make([]byte, 2*journalSlotSize)
	encodeJournalSlot(file[1*journalSlotSize:], &a, 5) // generation 5: slot 1
	encodeJournalSlot(file[0:], &b, 6)                 // generation 6: slot 0
	got, gen, err := decodeJournal(file)
	if err != nil || gen != 6 || !got.sameBatch(&b) || *got.Sync != *b.Sync {
		t.Fatalf("current entry %+v gen %d (%v), want b at 6", got, gen, err)
	}
	// A crash tore the write of generation 6 (slot 0): generation 5.
	torn := append([]byte(nil), file...)
	torn[40] ^= 0xff
	got, gen, err = decodeJournal(torn)
	if err != nil || gen != 5 || !got.sameBatch(&a) || got.Sync != nil {
		t.Fatalf("after a torn slot: %+v gen %d (%v), want a at 5", got, gen, err)
	}
	torn[journalSlotSize+20] ^= 0xff
	if got, _, err := decodeJournal(torn); err == nil {
		t.Fatalf("both slots damaged: %+v, want an error", got)
	}
	// The file the first write of a run makes: one slot, the other zero.
	first := make([]byte, 2*journalSlotSize)
	encodeJournalSlot(first[journalSlotSize:], &a, 1)
	if got, gen, err := decodeJournal(first); err != nil || gen != 1 || !got.sameBatch(&a) {
		t.Fatalf("first write's file: %+v gen %d (%v)", got, gen, err)
	}
	legacy := []byte(`{"producer_id":7,"epoch":2,"seq":100,"first":10,"last":19,"records":10,"spool_records":2}`)
	if got, _, err := decodeJournal(legacy); err != nil || !got.sameBatch(&a) {
		t.Fatalf("legacy JSON journal: %+v (%v)", got, err)
	}
	if _, _, err := decodeJournal([]byte(`{"torn`)); err == nil {
		t.Fatal("a torn JSON journal was accepted")
	}
}

// No content makes the journal decoder panic or accept an implausible
// entry.
func FuzzDecodeJournal(f *testing.F) {
	file := make([]byte, 2*journalSlotSize)
	encodeJournalSlot(file, &inFlight{ProducerID: 1, Seq: 3, First: 1, Last: 4, Records: 4, SpoolRecs: 1}, 2)
	f.Add(file)
	f.Add([]byte(`{"producer_id":7,"first":1,"last":2,"spool_records":1}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		j, _, err := decodeJournal(data)
		if err == nil && (j.ProducerID < 0 || j.First > j.Last || j.SpoolRecs < 1) {
			t.Fatalf("implausible entry accepted: %+v", *j)
		}
	})
}
