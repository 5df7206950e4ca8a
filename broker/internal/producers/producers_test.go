package producers

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

func hdr(pid int64, epoch int16, seq int32, n int32) *records.BatchHeader {
	return &records.BatchHeader{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: n - 1}
}

// Check takes the next sequence, recognizes a retry of any of the last
// five batches, refuses a gap, an old epoch and a new epoch not starting
// at 0, and takes anything from a producer it has no state for.
func TestCheckRecord(t *testing.T) {
	var s State
	now := time.Unix(1000, 0)
	if dup, code := s.Check(hdr(1, 0, 17, 1)); dup != nil || code != 0 {
		t.Fatalf("unknown producer: %v %d", dup, code)
	}
	off := int64(0)
	for seq := int32(0); seq < 14; seq += 2 {
		h := hdr(1, 0, seq, 2)
		if dup, code := s.Check(h); dup != nil || code != 0 {
			t.Fatalf("seq %d: %v %d", seq, dup, code)
		}
		s.Record(h, off, off+1, -1, now)
		off += 2
	}
	// Kept: batches at sequences 4..13 (offsets 4..13).
	if dup, code := s.Check(hdr(1, 0, 4, 2)); dup == nil || code != 0 || dup.FirstOffset != 4 || dup.LastOffset != 5 {
		t.Errorf("retry of the oldest kept: %+v %d", dup, code)
	}
	for _, c := range []struct {
		h    *records.BatchHeader
		code int16
	}{
		{hdr(1, 0, 2, 2), kerr.OutOfOrderSequenceNumber.Code}, // older than the last five
		{hdr(1, 0, 15, 1), kerr.OutOfOrderSequenceNumber.Code},
		{hdr(1, 0, 12, 1), kerr.OutOfOrderSequenceNumber.Code}, // overlaps, not a retry
		{hdr(1, 1, 3, 1), kerr.OutOfOrderSequenceNumber.Code},
		{hdr(1, -1, 14, 1), kerr.InvalidProducerEpoch.Code},
		{hdr(1, 0, 14, 1), 0},
		{hdr(1, 1, 0, 1), 0},
	} {
		if dup, code := s.Check(c.h); dup != nil || code != c.code {
			t.Errorf("epoch %d seq %d: %v %d, want code %d", c.h.ProducerEpoch, c.h.BaseSequence, dup, code, c.code)
		}
	}
	if e := s.Get(1); e == nil || e.Epoch != 0 || e.LastSeq != 13 || !e.Updated.Equal(now) || e.CoordinatorEpoch() != -1 {
		t.Errorf("entry: %+v", e)
	}
	// The sequence wraps at MaxInt32.
	s.Record(hdr(2, 0, math.MaxInt32-1, 2), 20, 21, -1, now)
	if e := s.Get(2); e.LastSeq != math.MaxInt32 {
		t.Errorf("last seq %d", e.LastSeq)
	}
	if _, code := s.Check(hdr(2, 0, 0, 1)); code != 0 {
		t.Errorf("after MaxInt32: code %d", code)
	}
	// A new epoch forgets the batches.
	gen := s.Gen()
	s.Record(hdr(1, 1, 0, 1), 30, 30, -1, now)
	if _, code := s.Check(hdr(1, 1, 4, 2)); code != kerr.OutOfOrderSequenceNumber.Code || s.Gen() == gen {
		t.Errorf("after a new epoch: code %d, gen %d→%d", code, gen, s.Gen())
	}
}

// Marker fences older epochs, keeps the greatest coordinator epoch, and
// creates an entry only when asked.
func TestMarker(t *testing.T) {
	var s State
	now := time.Unix(1000, 0)
	s.Marker(5, 3, 7, false, now)
	if s.Get(5) != nil || s.Gen() != 0 {
		t.Fatal("a coordinator's marker created state")
	}
	s.Marker(5, 3, 7, true, now)
	if e := s.Get(5); e == nil || e.Epoch != 3 || e.LastSeq != -1 || e.CoordinatorEpoch() != 7 {
		t.Fatalf("created: %+v", e)
	}
	s.Marker(5, 4, 2, false, now)
	if e := s.Get(5); e.Epoch != 4 || e.CoordinatorEpoch() != 7 {
		t.Errorf("newer epoch, older coordinator: %+v", e)
	}
	s.Record(hdr(5, 4, 0, 1), 0, 0, -1, now)
	s.Record(hdr(5, 5, 0, 1), 1, 1, -1, now)
	if e := s.Get(5); e.CoordinatorEpoch() != 7 {
		t.Errorf("a new epoch's batch lost the coordinator epoch: %+v", e)
	}
}

// A snapshot restores to the same answers; Rebuild skips what the restored
// state holds and records the rest; Expire drops idle producers.
func TestSnapshotRebuildExpire(t *testing.T) {
	var s State
	now := time.UnixMilli(5_000_000)
	for i := int64(0); i < 7; i++ {
		s.Record(hdr(1, 0, int32(i), 1), i, i, 100+i, now)
	}
	var r State
	if err := r.Restore(s.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if dup, _ := r.Check(hdr(1, 0, 2, 1)); dup == nil || dup.FirstOffset != 2 || dup.AppendTime != 102 {
		t.Errorf("restored retry: %+v", dup)
	}
	if dup, code := r.Check(hdr(1, 0, 1, 1)); dup != nil || code == 0 {
		t.Errorf("restored: kept more than five batches: %+v %d", dup, code)
	}
	if e := r.Get(1); e.LastSeq != 6 || !e.Updated.Equal(now) {
		t.Errorf("restored entry: %+v", e)
	}
	if err := r.Restore([]byte("{")); err == nil {
		t.Error("Restore took a broken snapshot")
	}
	tail := []records.BatchHeader{
		{ProducerID: 1, BaseSequence: 6, BaseOffset: 6}, // held already
		{ProducerID: 1, BaseSequence: 7, BaseOffset: 7},
		{ProducerID: 2, BaseSequence: 0, BaseOffset: 8, LastOffsetDelta: 1},
		{ProducerID: -1, BaseSequence: -1, BaseOffset: 10},
	}
	var from int64
	gen := r.Gen()
	err := r.Rebuild(0, 6+ScanOffsets, func(f int64, fn func(*records.BatchHeader) bool) error {
		from = f
		for i := range tail {
			if !fn(&tail[i]) {
				break
			}
		}
		return errors.New("end")
	}, now)
	if err == nil || !r.Loaded() || from != 6 {
		t.Errorf("Rebuild: err %v, loaded %v, from %d", err, r.Loaded(), from)
	}
	if r.Gen() != gen+2 || r.Get(1).LastSeq != 7 || r.Get(2).LastSeq != 1 || r.Get(-1) != nil {
		t.Errorf("rebuilt: gen %d→%d, %+v %+v", gen, r.Gen(), r.Get(1), r.Get(2))
	}
	n := 0
	r.Each(func(int64, *Entry) { n++ })
	r.Expire(now.Add(Expiry))
	m := 0
	r.Each(func(int64, *Entry) { m++ })
	r.Expire(now.Add(Expiry + time.Millisecond))
	k := 0
	r.Each(func(int64, *Entry) { k++ })
	if n != 2 || m != 2 || k != 0 {
		t.Errorf("producers %d, at the expiry %d, after %d", n, m, k)
	}
}

// IDs are handed out past the persisted reservation after a reopen.
func TestIDs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "producer_ids")
	ids, err := OpenIDs(vfs.Default, p)
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(0); want < 3; want++ {
		if id, err := ids.Allocate(); err != nil || id != want {
			t.Fatalf("allocate: %d %v, want %d", id, err, want)
		}
	}
	ids, err = OpenIDs(vfs.Default, p)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ids.Allocate(); err != nil || id != idBlock {
		t.Fatalf("after reopen: %d %v, want %d", id, err, idBlock)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenIDs(vfs.Default, p); err == nil {
		t.Error("a 1-byte file opened")
	}
}

// A reservation that fails to reach the disk hands out no ID: the
// failure is the caller's (INIT_PRODUCER_ID answers a storage error), the
// next Allocate tries again, and after a reopen no ID handed out before
// is handed out again.
func TestIDsReservationFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "producer_ids")
	fault := &vfs.FailNth{Op: vfs.OpSync, N: 2} // the second reservation's fsync
	fsys := vfs.NewFaultFS(vfs.Default, fault)
	ids, err := OpenIDs(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range idBlock {
		id, err := ids.Allocate()
		if err != nil {
			t.Fatalf("allocate %d: %v", len(got), err)
		}
		got = append(got, id)
	}
	if _, err := ids.Allocate(); !errors.Is(err, vfs.ErrInjected) || !fault.Fired() {
		t.Fatalf("allocate past the first block with its fsync failing: %v, want the injected error", err)
	}
	id, err := ids.Allocate()
	if err != nil || id != idBlock {
		t.Fatalf("allocate after the failure: %d %v, want %d", id, err, idBlock)
	}
	got = append(got, id)
	ids, err = OpenIDs(vfs.Default, p)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ids.Allocate(); err != nil || slices.Contains(got, id) {
		t.Fatalf("after reopen: %d %v, an ID already handed out", id, err)
	}
}
