package share

import (
	"errors"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// testBatch is a batch of n records at base, transactional for pid >= 0.
func testBatch(t *testing.T, base int64, n int, pid int64) []byte {
	t.Helper()
	spec := records.BatchSpec{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, FirstTimestamp: 1}
	if pid >= 0 {
		spec.Transactional, spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = true, pid, 0, 0
	}
	recs := make([]records.Record, n)
	for i := range recs {
		recs[i] = records.Record{Value: []byte("value")}
	}
	b, err := records.AppendBatch(nil, spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memRecords serves reads of one partition's batches, one batch a read
// (the least a read returns), and its aborted transactions.
type memRecords struct {
	batches [][]byte
	bases   []int64
	aborted []Aborted
	reads   int
}

func (m *memRecords) Read(_ string, _ int32, offset int64, _ int) ([]byte, *logstore.ReadResult, error) {
	m.reads++
	for i := len(m.bases) - 1; i >= 0; i-- {
		if m.bases[i] <= offset {
			return m.batches[i], nil, nil
		}
	}
	return nil, nil, errors.New("no batch")
}

func (m *memRecords) AbortedIn(string, int32, int64, int64) []Aborted { return m.aborted }
func (m *memRecords) Changed(string, int32) <-chan struct{}           { return nil }
func (m *memRecords) ErrorCode(error) int16                           { return -1 }

// The batch cuts of a ShareFetch: by the last acquired offset, by
// MaxBytes (the first batch whatever its size), and reading on until the
// last acquired offset is covered.
func TestReadRecordsCuts(t *testing.T) {
	b0, b1, b2 := testBatch(t, 0, 2, -1), testBatch(t, 2, 3, 7), testBatch(t, 5, 1, -1)
	all := append(append(append([]byte{}, b0...), b1...), b2...)
	if end := BatchesEnd(all); end != 6 {
		t.Fatalf("BatchesEnd = %d, want 6", end)
	}
	if end := BatchesEnd(all[:len(all)-1]); end != 5 {
		t.Fatalf("BatchesEnd of a torn last batch = %d, want 5", end)
	}
	if got := batchesThrough(all, 2); len(got) != len(b0)+len(b1) {
		t.Fatalf("batchesThrough(2) kept %d bytes, want the first two batches", len(got))
	}
	if got := batchesWithin(all, 1, true); len(got) != len(b0) {
		t.Fatalf("batchesWithin(1, minOne) kept %d bytes, want the first batch", len(got))
	}
	if got := batchesWithin(all, 1, false); len(got) != 0 {
		t.Fatalf("batchesWithin(1) kept %d bytes, want none", len(got))
	}
	if got := batchesWithin(all, len(b0)+len(b1), false); len(got) != len(b0)+len(b1) {
		t.Fatalf("batchesWithin kept %d bytes, want two batches", len(got))
	}

	m := &memRecords{batches: [][]byte{b0, b1, b2}, bases: []int64{0, 2, 5}}
	data, next, err := ReadRecords(m, "t", 0, 1, 3, nil)
	if err != nil || next != 5 || len(data) != len(b0)+len(b1) || m.reads != 2 {
		t.Fatalf("ReadRecords(1..3) = %d bytes, next %d, %v after %d reads", len(data), next, err, m.reads)
	}

	// Under read_committed the batch of an aborted transaction of
	// producer 7 (first offset 2, marker after it) is archived.
	m.aborted = []Aborted{{PID: 7, First: 2, Last: 9}}
	if got := abortedRanges(m, &Target{}, all); len(got) != 1 || got[0] != [2]int64{2, 4} {
		t.Fatalf("abortedRanges = %v, want [[2 4]]", got)
	}
	m.aborted = []Aborted{{PID: 8, First: 2, Last: 9}}
	if got := abortedRanges(m, &Target{}, all); len(got) != 0 {
		t.Fatalf("another producer's abort archived %v", got)
	}
}
