package minikafka

import "time"

type clientMetrics struct {
	prefixes []string
	interval time.Duration
}

// WithClientMetrics sets the KIP-714 subscription every client is given:
// the metric name prefixes it is asked to push ("*" for all, none for no
// pushes at all) and how often. The pushed metrics appear on /metrics as
// minikafka_client_metric, one series per client instance, metric and
// attribute set. Default: all metrics every 30 s. Kafka itself asks for
// nothing until an operator creates a client-metrics resource; a broker
// people test against is where they want to see their clients, hence the
// default. A zero interval keeps 30 s.
func WithClientMetrics(interval time.Duration, prefixes ...string) Option {
	return optionFunc(func(c *config) {
		if interval <= 0 {
			interval = 30 * time.Second
		}
		c.clientMetrics = clientMetrics{prefixes: prefixes, interval: interval}
	})
}
