package main

import (
	"flag"

	"github.com/minikafka/minikafka"
)

// metricsSettings is the -metrics-addr flag.
type metricsSettings struct{ addr string }

func (m *metricsSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://`host:port`/metrics (default: off)")
}

func (m *metricsSettings) options() []minikafka.Option {
	if m.addr == "" {
		return nil
	}
	return []minikafka.Option{minikafka.WithMetricsAddr(m.addr)}
}
