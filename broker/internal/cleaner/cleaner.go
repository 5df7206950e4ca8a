// Package cleaner is the log cleaner: one background goroutine (Kafka's
// log.cleaner.threads=1) that compacts the partitions of topics whose
// cleanup.policy contains "compact", one partition at a time, through
// logstore's Compact. It sees the broker's partitions only as Partition
// values and imports neither broker nor protocol (internal/lint checks
// it).
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
// log.cleaner.dedupe.buffer.size bytes (Config.MapBytes), and a log whose
// dirty part does not fit is cleaned a prefix per round. A partition whose
// clean fails for another reason than a concurrent change (Kafka's
// "uncleanable" partitions) is skipped for FailureBackoff and logged.
// Stopping stops a clean in progress between two batches, leaving the log
// as it was.
//
// Compaction also removes transaction markers (see logstore's doc): a
// marker goes once no batch of its transaction is left and its delete
// horizon (delete.retention.ms) has passed. The aborted-transaction index
// that read_committed fetches return names each aborted transaction by its
// producer and marker; an entry whose marker is gone would make a client
// skip its producer's later transactions (kgo and the Java client skip a
// producer's transactional batches from the entry's first offset until
// they meet an abort marker of that producer). So the cleaner has the
// broker drop the entries of the abort markers a clean removes before the
// clean's swap (Config.ForgetAborted), the transaction log sheds them
// when it is compacted, and a restart drops persisted entries whose
// marker is gone (AbortedNeeded answers both). Nothing else depends on
// markers after they are written: open transactions, and so the last
// stable offset, come from the transaction log, and producer state is
// rebuilt from data batches.
package cleaner

import (
	"errors"
	"iter"
	"log/slog"
	"time"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/logstore"
)

const (
	// DefaultBackoff is log.cleaner.backoff.ms's default.
	DefaultBackoff = 15 * time.Second
	// FailureBackoff is how long a partition whose clean failed is
	// skipped.
	FailureBackoff = 10 * time.Minute
)

// Store is a partition's store as the cleaner uses it.
type Store interface {
	// LastStable is the end of what read_committed consumers may read;
	// nothing from it on is cleaned.
	LastStable() int64
	CleanState(now time.Time, minLag time.Duration, maxOffset int64) logstore.CleanState
	Compact(o logstore.CompactOptions) (logstore.CompactResult, error)
}

// Partition is a partition of a compacted topic.
type Partition struct {
	// Key is the broker's partition: the cleaner remembers by it what
	// it cleaned this round and what failed. It must be comparable.
	Key    any
	Topic  string
	Index  int32
	Config topicconfig.Cleaner
	// Store is the store the partition uses now (the cleaner must not
	// open a spool; a spool reports nothing to clean).
	Store Store
}

// Config is what the cleaner needs of the broker.
type Config struct {
	Backoff        time.Duration // log.cleaner.backoff.ms; 0: DefaultBackoff
	MapBytes       int           // log.cleaner.dedupe.buffer.size
	ProducerExpiry time.Duration // producer.id.expiration.ms
	Now            func() time.Time
	Logger         *slog.Logger
	// Partitions yields the partitions of the topics whose cleanup.policy
	// contains compact.
	Partitions func() iter.Seq[Partition]
	// ForgetAborted drops the aborted-index entries of the abort markers
	// a clean of the partition keyed key is about to remove.
	ForgetAborted func(key any, markers []logstore.TxnMarker)
}

// Cleaner is the cleaner's memory between rounds.
type Cleaner struct {
	cfg    Config
	failed map[any]time.Time
}

// New is a cleaner; Run runs it.
func New(cfg Config) *Cleaner {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	return &Cleaner{cfg: cfg, failed: map[any]time.Time{}}
}

// Run cleans a round every Backoff until stop is closed.
func (c *Cleaner) Run(stop <-chan struct{}) {
	t := time.NewTimer(c.cfg.Backoff)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		done := map[any]bool{}
		for c.CleanOne(done, stop) {
		}
		t.Reset(c.cfg.Backoff)
	}
}

// CleanOne cleans the filthiest due partition whose key is not in done,
// and adds it there; false if there is none (or stop is closed).
func (c *Cleaner) CleanOne(done map[any]bool, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return false
	default:
	}
	now := c.cfg.Now()
	var best Partition
	var bestLSO int64
	bestScore := -1.0
	for p := range c.cfg.Partitions() {
		cc := p.Config
		if done[p.Key] {
			continue
		}
		if until, ok := c.failed[p.Key]; ok && now.Before(until) {
			continue
		}
		lso := p.Store.LastStable()
		if lso <= 0 {
			continue
		}
		st := p.Store.CleanState(now, cc.MinLag, lso)
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
			best, bestLSO, bestScore = p, lso, score
		}
	}
	if best.Store == nil {
		return false
	}
	done[best.Key] = true
	start := time.Now()
	res, err := best.Store.Compact(logstore.CompactOptions{
		Now:              now,
		DeleteRetention:  best.Config.DeleteRetention,
		MinCompactionLag: best.Config.MinLag,
		MaxOffset:        bestLSO,
		MapBytes:         c.cfg.MapBytes,
		ProducerExpiry:   c.cfg.ProducerExpiry,
		Stop:             stop,
		RemovingMarkers:  func(ms []logstore.TxnMarker) { c.cfg.ForgetAborted(best.Key, ms) },
	})
	switch {
	case errors.Is(err, logstore.ErrCompactAborted) || errors.Is(err, logstore.ErrClosed):
		// The log changed under the clean or the broker is closing;
		// the next round retries.
	case err != nil:
		c.failed[best.Key] = now.Add(FailureBackoff)
		c.cfg.Logger.Error("log cleaner: cleaning failed, partition skipped for a while", "topic", best.Topic, "partition", best.Index, "err", err)
	default:
		c.cfg.Logger.Debug("log cleaner: cleaned", "topic", best.Topic, "partition", best.Index,
			"segments", res.Segments, "bytes_read", res.BytesRead, "bytes_written", res.BytesWritten,
			"records", res.Records, "removed", res.Removed, "tombstones", res.Tombstones, "markers", res.Markers,
			"first_dirty", res.FirstDirty, "map_full", res.MapFull, "took", time.Since(start))
	}
	return true
}
