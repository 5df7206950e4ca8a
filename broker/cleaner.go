package broker

// The log cleaner is broker/internal/cleaner (its doc says when a
// partition is cleaned and what happens to transaction markers); here it
// is given the compacted topics' partitions and the transaction
// coordinator's aborted index.

import (
	"iter"
	"time"

	"github.com/minikafka/minikafka/broker/internal/cleaner"
	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// cleanerLoop runs the log cleaner until the broker closes.
func (b *Broker) cleanerLoop() {
	defer b.bg.Done()
	b.newCleaner().Run(b.closing)
}

func (b *Broker) newCleaner() *cleaner.Cleaner {
	return cleaner.New(cleaner.Config{
		Backoff:        b.cfg.CleanerBackoff,
		MapBytes:       b.cfg.CleanerDedupeBufferSize,
		ProducerExpiry: producers.Expiry,
		// b.now is read when the cleaner asks, not when it starts: tests
		// replace it after New (as they did before the cleaner moved).
		Now:        func() time.Time { return b.now() },
		Logger:     b.log,
		Partitions: b.compactedPartitions,
		ForgetAborted: func(key any, ms []logstore.TxnMarker) {
			b.txns.ForgetAborted(key.(*partition), ms)
		},
	})
}

// compactedPartitions yields the partitions of topics whose cleanup.policy
// contains compact, each with the store it uses now: cleaning must not
// open a spool, and a spool reports nothing to clean.
func (b *Broker) compactedPartitions() iter.Seq[cleaner.Partition] {
	return func(yield func(cleaner.Partition) bool) {
		for _, t := range b.topics.Load().byName {
			cc := t.cfg.Load().Cleaner()
			if !cc.Compact {
				continue
			}
			for _, p := range t.partitions() {
				if !yield(cleaner.Partition{Key: p, Topic: t.name, Index: p.index, Config: cc, Store: cleanStore{p.store()}}) {
					return
				}
			}
		}
	}
}

// cleanStore is a partition's store as the cleaner uses it.
type cleanStore struct{ st partitionStore }

func (s cleanStore) LastStable() int64 { return s.st.lastStable() }

func (s cleanStore) CleanState(now time.Time, minLag time.Duration, maxOffset int64) logstore.CleanState {
	return s.st.cleanState(now, minLag, maxOffset)
}

func (s cleanStore) Compact(o logstore.CompactOptions) (logstore.CompactResult, error) {
	return s.st.compact(o)
}

// abortedNeeded reports whether an aborted transaction must stay indexed
// (cleaner.AbortedNeeded).
func abortedNeeded(p *partition, a abortedTxn) bool {
	return cleaner.AbortedNeeded(cleanLog{p.log}, a.PID, a.First, a.Last)
}

// cleanLog is a partition's log as cleaner.AbortedNeeded reads it.
type cleanLog struct{ *logstore.Log }

func (l cleanLog) EachBatchHeader(o logstore.ReadOptions, fn func(*records.BatchHeader) bool) error {
	rr, err := l.Read(o)
	if err != nil {
		return err
	}
	defer rr.Release()
	return producers.EachBatchHeader(rr, fn)
}
