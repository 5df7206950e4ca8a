package cleaner

import (
	"context"
	"testing"
	"time"

	"github.com/minikafka/minikafka/broker/internal/txn"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// testLog is a real log as AbortedNeeded reads it, its headers parsed
// from the bytes read.
type testLog struct{ *logstore.Log }

func (l testLog) EachBatchHeader(o logstore.ReadOptions, fn func(*records.BatchHeader) bool) error {
	rr, err := l.Read(o)
	if err != nil {
		return err
	}
	defer rr.Release()
	data, err := rr.AppendTo(nil)
	if err != nil {
		return err
	}
	for len(data) >= records.BatchHeaderLen {
		h, err := records.ParseHeader(data[:records.BatchHeaderLen])
		if err != nil {
			return err
		}
		if !fn(&h) {
			return nil
		}
		data = data[h.Size():]
	}
	return nil
}

// AbortedNeeded keeps an aborted-index entry whose marker is in the log,
// or, if the marker is gone, while a data batch of the transaction is
// (the marker was lost otherwise, and the entry still hides the data),
// and drops it only when neither is left, as after compaction.
func TestAbortedNeeded(t *testing.T) {
	l, _, err := logstore.Open(logstore.Options{FS: vfs.Default, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	batch := func(spec records.BatchSpec, value string) []byte {
		bt, err := records.AppendBatch(nil, spec, []records.Record{{Key: []byte("k"), Value: []byte(value)}})
		if err != nil {
			t.Fatal(err)
		}
		return bt
	}
	txnData := func(pid int64) []byte {
		return batch(records.BatchSpec{Transactional: true, ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0, FirstTimestamp: 1}, "v")
	}
	plain := batch(records.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, FirstTimestamp: 1}, "plain")
	for _, bt := range [][]byte{
		txnData(7), txn.ControlBatch(7, 0, 0, false, time.Now()), // 0, 1: an aborted transaction and its marker
		txnData(8), plain, // 2, 3: a transaction whose marker (at 3) was lost
		plain, plain, // 4, 5: a transaction compacted away with its marker (at 5)
	} {
		if _, err := l.Append(bt); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WaitDurable(context.Background(), l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pid, first, last int64
		want             bool
	}{
		{7, 0, 1, true},
		{8, 2, 3, true},
		{9, 4, 5, false},
		{8, 4, 5, false},  // pid 8's data lies before first
		{9, 0, 1, false},  // the marker at 1 is pid 7's
		{8, 2, 99, true},  // marker beyond the log end (a lost tail), data left
		{9, 0, 99, false}, // marker and data lost
		{9, 50, 99, false},
	} {
		if got := AbortedNeeded(testLog{l}, c.pid, c.first, c.last); got != c.want {
			t.Errorf("AbortedNeeded(pid %d, %d..%d) = %v, want %v", c.pid, c.first, c.last, got, c.want)
		}
	}
}
