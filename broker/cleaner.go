package broker

// The log cleaner: one background goroutine (Kafka's log.cleaner.threads=1)
// that compacts partitions of topics whose cleanup.policy contains
// "compact", one partition at a time, through logstore's Compact.
//
// Every log.cleaner.backoff.ms it looks at every compacted partition and
// picks the filthiest one that is due: its dirty ratio (bytes written
// since the last clean over the cleanable bytes) is at least
// min.cleanable.dirty.ratio, or its oldest uncleaned record is older than
// max.compaction.lag.ms, or a kept tombstone's delete horizon passed. It
// cleans it, then looks again at once, until nothing is due; each
// partition is cleaned at most once per round so a log that stays due
// cannot monopolize it. Segments newer than min.compaction.lag.ms and
// everything from the last stable offset on stay dirty; the offset map is
// log.cleaner.dedupe.buffer.size bytes (Config.CleanerDedupeBufferSize),
// and a log whose dirty part does not fit is cleaned a prefix per round. A
// partition whose clean fails for another reason than a concurrent change
// (Kafka's "uncleanable" partitions) is skipped for
// cleanerFailureBackoff and logged. Close stops a clean in progress
// between two batches, leaving the log as it was.
//
// Compaction also removes transaction markers (see logstore's doc): a
// marker goes once no batch of its transaction is left and its delete
// horizon (delete.retention.ms) has passed. The aborted-transaction index
// that read_committed fetches return names each aborted transaction by its
// producer and marker; an entry whose marker is gone would make a client
// skip its producer's later transactions (kgo and the Java client skip a
// producer's transactional batches from the entry's first offset until
// they meet an abort marker of that producer). So the cleaner drops the
// entries of the abort markers a clean removes before the clean's swap
// (forgetAborted), the transaction log sheds them when it is compacted
// (keepAborted asks abortedIndexed), and a restart drops persisted entries
// whose marker is gone (pruneAborted). Nothing else depends on markers
// after they are written: open transactions, and so the last stable
// offset, come from the transaction log, and producer state is rebuilt
// from data batches.

import (
	"errors"
	"time"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

const (
	defaultCleanerBackoff = 15 * time.Second // log.cleaner.backoff.ms
	cleanerFailureBackoff = 10 * time.Minute
)

// cleanerLoop runs the log cleaner until the broker closes.
func (b *Broker) cleanerLoop() {
	defer b.bg.Done()
	backoff := b.cfg.CleanerBackoff
	if backoff <= 0 {
		backoff = defaultCleanerBackoff
	}
	failed := map[*partition]time.Time{}
	t := time.NewTimer(backoff)
	defer t.Stop()
	for {
		select {
		case <-b.closing:
			return
		case <-t.C:
		}
		done := map[*partition]bool{}
		for b.cleanOne(done, failed) {
		}
		t.Reset(backoff)
	}
}

// cleanOne cleans the filthiest due partition not yet in done; false if
// there is none (or the broker is closing).
func (b *Broker) cleanOne(done map[*partition]bool, failed map[*partition]time.Time) bool {
	select {
	case <-b.closing:
		return false
	default:
	}
	now := b.now()
	var best *partition
	var bestStore partitionStore
	var bestCfg topicconfig.Cleaner
	var bestLSO int64
	bestScore := -1.0
	for _, t := range b.topics.Load().byName {
		cc := t.cfg.Load().Cleaner()
		if !cc.Compact {
			continue
		}
		for _, p := range t.partitions() {
			if done[p] {
				continue
			}
			if until, ok := failed[p]; ok && now.Before(until) {
				continue
			}
			// The store p uses now: cleaning must not open a spool, and
			// a spool reports nothing to clean.
			ps := p.store()
			lso := ps.lastStable()
			if lso <= 0 {
				continue
			}
			st := ps.cleanState(now, cc.MinLag, lso)
			ratio := st.DirtyRatio()
			overdue := cc.MaxLag >= 0 && st.FirstDirtyTimestamp >= 0 && now.UnixMilli()-st.FirstDirtyTimestamp > cc.MaxLag.Milliseconds()
			due := st.DirtyBytes > 0 && (ratio >= cc.MinDirtyRatio || overdue)
			due = due || (st.CleanBytes > 0 && st.DeleteHorizon <= now.UnixMilli())
			if !due {
				continue
			}
			// Logs past their max lag go first, then the filthiest.
			score := ratio
			if overdue {
				score += 2
			}
			if score > bestScore {
				best, bestStore, bestCfg, bestLSO, bestScore = p, ps, cc, lso, score
			}
		}
	}
	if best == nil {
		return false
	}
	done[best] = true
	start := time.Now()
	res, err := bestStore.compact(logstore.CompactOptions{
		Now:              now,
		DeleteRetention:  bestCfg.DeleteRetention,
		MinCompactionLag: bestCfg.MinLag,
		MaxOffset:        bestLSO,
		MapBytes:         b.cfg.CleanerDedupeBufferSize,
		ProducerExpiry:   producerExpiry,
		Stop:             b.closing,
		RemovingMarkers:  func(ms []logstore.TxnMarker) { b.txns.ForgetAborted(best, ms) },
	})
	switch {
	case errors.Is(err, logstore.ErrCompactAborted) || errors.Is(err, logstore.ErrClosed):
		// The log changed under the clean or the broker is closing;
		// the next round retries.
	case err != nil:
		failed[best] = now.Add(cleanerFailureBackoff)
		b.log.Error("log cleaner: cleaning failed, partition skipped for a while", "topic", best.topic.name, "partition", best.index, "err", err)
	default:
		b.log.Debug("log cleaner: cleaned", "topic", best.topic.name, "partition", best.index,
			"segments", res.Segments, "bytes_read", res.BytesRead, "bytes_written", res.BytesWritten,
			"records", res.Records, "removed", res.Removed, "tombstones", res.Tombstones, "markers", res.Markers,
			"first_dirty", res.FirstDirty, "map_full", res.MapFull, "took", time.Since(start))
	}
	return true
}

// abortedNeeded reports whether an aborted transaction must stay indexed:
// its marker is in the log, or a data batch of it is (then the marker was
// lost some other way, say with a torn tail under a lax sync policy, and
// the entry still keeps read_committed clients from its data). Read errors
// keep the entry.
func abortedNeeded(p *partition, a abortedTxn) bool {
	l := p.log
	start, end := l.LogStartOffset(), l.LogEndOffset()
	if a.Last < start {
		return true // fetches never reach it; the transaction log sheds it
	}
	if hw := l.HighWatermark(); hw < end && a.Last >= hw {
		return true // not readable yet (at a restart the whole log is)
	}
	if a.Last < end {
		rr, err := l.Read(logstore.ReadOptions{Offset: a.Last, MaxBytes: 1, MaxOffset: end, MinOneBatch: true})
		if err != nil {
			return true
		}
		found := false
		err = eachBatchHeader(rr, func(h *records.BatchHeader) bool {
			found = h.BaseOffset == a.Last && h.IsControl() && h.ProducerID == a.PID
			return false
		})
		rr.Release()
		if err != nil || found {
			return true
		}
	}
	from := max(a.First, start)
	if from >= end {
		return false
	}
	rr, err := l.Read(logstore.ReadOptions{Offset: from, MaxBytes: 1 << 30, MaxOffset: min(a.Last+1, end), MinOneBatch: true})
	if err != nil {
		return true
	}
	defer rr.Release()
	data := false
	err = eachBatchHeader(rr, func(h *records.BatchHeader) bool {
		if h.BaseOffset > a.Last {
			return false
		}
		data = h.ProducerID == a.PID && h.IsTransactional() && !h.IsControl()
		return !data
	})
	return err != nil || data
}
