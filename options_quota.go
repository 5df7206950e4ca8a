package minikafka

import "time"

type quotaWindow struct {
	samples int
	size    time.Duration
}

// WithQuotaWindow is Kafka's quota.window.num and quota.window.size.seconds:
// client quotas are measured over samples windows of size each (default
// 11 × 1 s). A shorter window makes throttling finer-grained: a client can
// send about one window's worth of its quota at once. Zero keeps a default.
func WithQuotaWindow(samples int, size time.Duration) Option {
	return optionFunc(func(c *config) { c.quotaWindow = quotaWindow{samples, size} })
}
