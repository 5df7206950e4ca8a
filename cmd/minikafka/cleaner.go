package main

import (
	"flag"
	"time"

	"github.com/minikafka/minikafka"
)

// cleanerSettings tune the log cleaner of compacted topics.
type cleanerSettings struct {
	backoff     time.Duration
	dedupeBytes int
}

func (c *cleanerSettings) register(fs *flag.FlagSet) {
	fs.DurationVar(&c.backoff, "log-cleaner-backoff", 15*time.Second,
		"how long the log cleaner sleeps when no compacted partition is due (Kafka log.cleaner.backoff.ms)")
	fs.IntVar(&c.dedupeBytes, "log-cleaner-dedupe-buffer-size", 128<<20,
		"`bytes` of the cleaner's key-to-offset map (Kafka log.cleaner.dedupe.buffer.size)")
}

func (c *cleanerSettings) check() []string {
	var bad []string
	if c.backoff < 0 {
		bad = append(bad, "-log-cleaner-backoff: must not be negative")
	}
	if c.dedupeBytes < 0 {
		bad = append(bad, "-log-cleaner-dedupe-buffer-size: must not be negative")
	}
	return bad
}

func (c *cleanerSettings) options() []minikafka.Option {
	return []minikafka.Option{minikafka.WithLogCleanerBackoff(c.backoff), minikafka.WithLogCleanerDedupeBufferSize(c.dedupeBytes)}
}
