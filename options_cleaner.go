package minikafka

import (
	"fmt"
	"time"
)

// cleanerConfig tunes the log cleaner of compacted topics.
type cleanerConfig struct {
	backoff     time.Duration
	dedupeBytes int
}

// WithLogCleanerBackoff sets how long the log cleaner sleeps when no
// compacted partition is due (Kafka log.cleaner.backoff.ms, default 15 s).
func WithLogCleanerBackoff(d time.Duration) Option {
	return optionFunc(func(c *config) { c.cleaner.backoff = d })
}

// WithLogCleanerDedupeBufferSize bounds the memory of the cleaner's
// key-to-offset map (Kafka log.cleaner.dedupe.buffer.size, default
// 128 MiB); a dirty section with more keys is cleaned in several passes.
func WithLogCleanerDedupeBufferSize(bytes int) Option {
	return optionFunc(func(c *config) { c.cleaner.dedupeBytes = bytes })
}

func (cc cleanerConfig) validate() []error {
	var errs []error
	if cc.backoff < 0 {
		errs = append(errs, fmt.Errorf("log cleaner backoff %v: must not be negative", cc.backoff))
	}
	if cc.dedupeBytes < 0 {
		errs = append(errs, fmt.Errorf("log cleaner dedupe buffer size %d: must not be negative", cc.dedupeBytes))
	}
	return errs
}
