package minikafka

import "time"

// WithGroupShareMinRecordLockDuration sets Kafka's
// group.share.min.record.lock.duration.ms: the shortest acquisition lock
// (share.record.lock.duration.ms) a share group may set. Default 15 s;
// tests lower it to see locks expire quickly.
func WithGroupShareMinRecordLockDuration(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ShareMinRecordLockDuration = d })
}
