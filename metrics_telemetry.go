package minikafka

import (
	"maps"
	"slices"
	"strings"
)

// writeClientMetrics writes the metrics clients pushed (KIP-714): one
// sample per client instance, metric and attribute set, the OTLP name in
// the metric label (Prometheus names cannot hold dots and would collide
// across clients), and the push counts by result.
func (m *metrics) writeClientMetrics(p *promWriter) {
	insts, pushes := m.brk.ClientMetrics()
	p.family("minikafka_client_telemetry_pushes_total", "counter", "Client metrics pushes (KIP-714), by result: ok or the Kafka error they were answered with.")
	for _, r := range slices.Sorted(maps.Keys(pushes)) {
		p.sample("minikafka_client_telemetry_pushes_total", []string{"result", r}, float64(pushes[r]))
	}
	p.family("minikafka_client_telemetry_instances", "gauge", "Client instances the broker holds pushed metrics of.")
	p.sample("minikafka_client_telemetry_instances", nil, float64(len(insts)))
	if len(insts) == 0 {
		return
	}
	p.family("minikafka_client_metric", "gauge", "A metric a client pushed of itself (KIP-714): gauges as last pushed, sums as the total since the client started.")
	var labels []string
	for _, in := range insts {
		for _, s := range in.Series {
			labels = append(labels[:0],
				"client_id", in.ClientID,
				"client_instance_id", in.ID,
				"client_software_name", in.Software.Name,
				"client_software_version", in.Software.Version,
				"metric", s.Name,
				"type", s.Kind.String())
			fixed := len(labels)
			for _, a := range s.Attrs {
				name := clientAttrLabel(a.Key)
				// Two keys that differ only in characters Prometheus
				// cannot hold: the first one (by key) is shown.
				seen := false
				for i := fixed; i < len(labels); i += 2 {
					seen = seen || labels[i] == name
				}
				if !seen {
					labels = append(labels, name, a.Value)
				}
			}
			p.sample("minikafka_client_metric", labels, s.Value)
		}
	}
	p.family("minikafka_client_metric_series_dropped_total", "counter", "Series a client pushed past the per-client bound, not kept.")
	for _, in := range insts {
		if in.Dropped > 0 {
			p.sample("minikafka_client_metric_series_dropped_total", []string{"client_id", in.ClientID, "client_instance_id", in.ID}, float64(in.Dropped))
		}
	}
}

// clientAttrLabel turns an OTLP attribute key into a Prometheus label
// name: characters outside [a-zA-Z0-9_] become '_', and the attr_ prefix
// keeps it from a leading digit and from the labels set above.
func clientAttrLabel(key string) string {
	var sb strings.Builder
	sb.WriteString("attr_")
	for _, r := range key {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}
