package main

import (
	"flag"

	"github.com/minikafka/minikafka"
)

// metricsSettings is the broker's HTTP side: -http-addr (console, API,
// /metrics, /healthz, /readyz) and -metrics-addr (a listener of its own
// that serves /metrics alone, as before -http-addr existed).
type metricsSettings struct {
	addr     string
	httpAddr string
	httpAny  bool
}

func (m *metricsSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://`host:port`/metrics on a listener of their own (default: off; -http-addr serves /metrics too)")
	fs.StringVar(&m.httpAddr, "http-addr", "", "serve the web console, its JSON API, /metrics, /healthz and /readyz at http://`host:port`/ (default: off; \":8080\" means 127.0.0.1:8080)")
	fs.BoolVar(&m.httpAny, "http-addr-any", false, "let -http-addr listen on every interface (0.0.0.0, ::, or a bare \":port\"); the console has no password")
}

func (m *metricsSettings) options() []minikafka.Option {
	var opts []minikafka.Option
	if m.addr != "" {
		opts = append(opts, minikafka.WithMetricsAddr(m.addr))
	}
	if m.httpAddr != "" {
		opts = append(opts, minikafka.WithHTTPAddr(m.httpAddr))
	}
	if m.httpAny {
		opts = append(opts, minikafka.WithHTTPAddrAny())
	}
	return opts
}
