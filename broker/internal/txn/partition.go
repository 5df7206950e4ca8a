package txn

// The transactional state of each partition: the producers with an open
// transaction in it (the LSO) and its aborted-transactions index (what
// read_committed fetches skip).

import (
	"slices"
	"sort"
	"sync"

	"github.com/minikafka/minikafka/logstore"
)

// Aborted is one aborted transaction of a partition: its producer, the
// offset of its first data batch and of its abort marker.
type Aborted struct {
	PID         int64
	First, Last int64
}

// partTxn is the transactional state of one partition.
type partTxn struct {
	mu      sync.Mutex
	open    map[int64]int64 // producer ID → first offset of its open txn
	aborted []Aborted       // ordered by marker offset
}

func (c *Coordinator) partState(p Partition) *partTxn {
	if v, ok := c.partTxns.Load(p); ok {
		return v.(*partTxn)
	}
	v, _ := c.partTxns.LoadOrStore(p, &partTxn{open: map[int64]int64{}})
	return v.(*partTxn)
}

// withPartTxn runs fn with p's transaction state locked; false (fn not
// run) when p never had a transactional batch.
func (c *Coordinator) withPartTxn(p Partition, fn func(pt *partTxn)) bool {
	v, ok := c.partTxns.Load(p)
	if !ok {
		return false
	}
	pt := v.(*partTxn)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	fn(pt)
	return true
}

// abortedFrom is the index of the first aborted entry whose marker is at
// or after off (pt.mu held).
func (pt *partTxn) abortedFrom(off int64) int {
	return sort.Search(len(pt.aborted), func(i int) bool { return pt.aborted[i].Last >= off })
}

// LastStable is the partition's LSO: the first offset of its oldest open
// transaction, or hw, the high watermark of its store.
func (c *Coordinator) LastStable(p Partition, hw int64) int64 {
	c.withPartTxn(p, func(pt *partTxn) {
		for _, f := range pt.open {
			hw = min(hw, f)
		}
	})
	return hw
}

// AbortedIn returns the aborted transactions overlapping [from, to),
// ordered by first offset.
func (c *Coordinator) AbortedIn(p Partition, from, to int64) []Aborted {
	var out []Aborted
	c.withPartTxn(p, func(pt *partTxn) {
		for _, a := range pt.aborted[pt.abortedFrom(from):] {
			if a.First < to {
				out = append(out, a)
			}
		}
	})
	slices.SortFunc(out, func(a, b Aborted) int { return int(min(max(a.First-b.First, -1), 1)) })
	return out
}

// AbortedHolds reports whether an aborted transaction of pid covers
// offset off: AbortedIn's question for one batch, asked per batch by the
// uplink's shipper, so without AbortedIn's slice and sort.
func (c *Coordinator) AbortedHolds(p Partition, pid, off int64) bool {
	held := false
	c.withPartTxn(p, func(pt *partTxn) {
		held = slices.ContainsFunc(pt.aborted[pt.abortedFrom(off):], func(a Aborted) bool {
			return a.PID == pid && a.First <= off
		})
	})
	return held
}

// HoldsOpen reports whether pid has data of an open transaction in p.
func (c *Coordinator) HoldsOpen(p Partition, pid int64) bool {
	open := false
	c.withPartTxn(p, func(pt *partTxn) { _, open = pt.open[pid] })
	return open
}

// OpenTransactions returns, per producer with an open transaction in p,
// the offset of its first batch (DescribeProducers).
func (c *Coordinator) OpenTransactions(p Partition) map[int64]int64 {
	open := map[int64]int64{}
	c.withPartTxn(p, func(pt *partTxn) {
		for pid, f := range pt.open {
			open[pid] = f
		}
	})
	return open
}

// Producing marks pid's transaction open on p before its batch is appended
// (at logEnd, the store's end: a lower bound of the batch's offset, so the
// LSO never passes it); Produced corrects it to the batch's offset. The
// broker calls both under the partition's lock.
func (c *Coordinator) Producing(p Partition, pid int64, logEnd int64) (added bool) {
	pt := c.partState(p)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if _, ok := pt.open[pid]; ok {
		return false
	}
	pt.open[pid] = logEnd
	return true
}

// Produced: see Producing; err is the append's (the batch is not in the
// log, the transaction not open there).
func (c *Coordinator) Produced(p Partition, pid int64, base int64, err error) {
	pt := c.partState(p)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if err != nil {
		delete(pt.open, pid)
		return
	}
	pt.open[pid] = base
}

// ForgetAborted drops from p's aborted index the transactions whose abort
// markers a clean is about to remove. No batch of them is left in the log
// (compaction removes a marker only after its transaction's batches), so
// the entries are no longer needed, and they must be gone before the
// markers are. It runs inside the log's Compact, under its cleaner lock,
// and takes partTxn.mu: nothing calls into the log's cleaner while
// holding partTxn.mu.
func (c *Coordinator) ForgetAborted(p Partition, ms []logstore.TxnMarker) {
	gone := map[Aborted]bool{}
	for _, m := range ms {
		if !m.Commit {
			gone[Aborted{PID: m.ProducerID, Last: m.Offset}] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	c.withPartTxn(p, func(pt *partTxn) {
		pt.aborted = slices.DeleteFunc(pt.aborted, func(a Aborted) bool {
			return gone[Aborted{PID: a.PID, Last: a.Last}]
		})
	})
}

// abortedIndexed reports whether p's aborted index still holds the
// transaction of pid whose abort marker is at last.
func (c *Coordinator) abortedIndexed(p Partition, pid, last int64) bool {
	held := false
	c.withPartTxn(p, func(pt *partTxn) {
		for _, a := range pt.aborted[pt.abortedFrom(last):] {
			if a.Last != last {
				break
			}
			if a.PID == pid {
				held = true
				break
			}
		}
	})
	return held
}

// pruneAborted drops, on a restart, the entries of p's aborted index
// (ordered by marker offset, as read from the transaction log) whose abort
// marker compaction removed while the transaction log still held them.
// KeepsAborted is asked without pt.mu held (it may open a forwarded
// partition's spool, which takes the partition's lock); nothing else runs
// during recovery.
func (c *Coordinator) pruneAborted(p Partition, pt *partTxn) {
	pt.mu.Lock()
	as := pt.aborted
	pt.mu.Unlock()
	as = slices.DeleteFunc(as, func(a Aborted) bool { return !p.KeepsAborted(a) })
	pt.mu.Lock()
	pt.aborted = as
	pt.mu.Unlock()
}
