package cleaner

import (
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// Log is a partition's log as AbortedNeeded reads it.
type Log interface {
	LogStartOffset() int64
	LogEndOffset() int64
	HighWatermark() int64
	// EachBatchHeader calls fn with the header of each batch a read
	// with o returns, in order, until fn returns false.
	EachBatchHeader(o logstore.ReadOptions, fn func(*records.BatchHeader) bool) error
}

// AbortedNeeded reports whether an aborted transaction of producer pid,
// from offset first to its abort marker at last, must stay indexed: its
// marker is in the log, or a data batch of it is (then the marker was
// lost some other way, say with a torn tail under a lax sync policy, and
// the entry still keeps read_committed clients from its data). Read
// errors keep the entry.
func AbortedNeeded(l Log, pid, first, last int64) bool {
	start, end := l.LogStartOffset(), l.LogEndOffset()
	if last < start {
		return true // fetches never reach it; the transaction log sheds it
	}
	if hw := l.HighWatermark(); hw < end && last >= hw {
		return true // not readable yet (at a restart the whole log is)
	}
	if last < end {
		found := false
		err := l.EachBatchHeader(logstore.ReadOptions{Offset: last, MaxBytes: 1, MaxOffset: end, MinOneBatch: true}, func(h *records.BatchHeader) bool {
			found = h.BaseOffset == last && h.IsControl() && h.ProducerID == pid
			return false
		})
		if err != nil || found {
			return true
		}
	}
	from := max(first, start)
	if from >= end {
		return false
	}
	data := false
	err := l.EachBatchHeader(logstore.ReadOptions{Offset: from, MaxBytes: 1 << 30, MaxOffset: min(last+1, end), MinOneBatch: true}, func(h *records.BatchHeader) bool {
		if h.BaseOffset > last {
			return false
		}
		data = h.ProducerID == pid && h.IsTransactional() && !h.IsControl()
		return !data
	})
	return err != nil || data
}
