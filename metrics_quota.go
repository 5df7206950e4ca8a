package minikafka

import "github.com/minikafka/minikafka/broker"

// writeQuotas writes client quota use: one sample per quota sensor (who
// shares a quota, by its user and client-id tags) and the count of
// throttled answers.
func (m *metrics) writeQuotas(p *promWriter) {
	stats, throttled := m.brk.QuotaStats()
	p.family("minikafka_quota_throttled_responses_total", "counter", "Answers that carried a quota throttle time (the connection was muted for it).")
	p.sample("minikafka_quota_throttled_responses_total", nil, float64(throttled))
	if len(stats) == 0 {
		return
	}
	p.family("minikafka_quota_rate", "gauge", "Current windowed rate of a quota sensor: bytes/s, percent of a thread, or tokens left for controller_mutation_rate.")
	for _, s := range stats {
		p.sample("minikafka_quota_rate", quotaLabels(&s), s.Rate)
	}
	p.family("minikafka_quota_limit", "gauge", "The quota a sensor is held to.")
	for _, s := range stats {
		p.sample("minikafka_quota_limit", quotaLabels(&s), s.Limit)
	}
	for _, f := range []struct {
		name, help string
		val        func(s *broker.QuotaStat) float64
	}{
		{"minikafka_quota_recorded_total", "What a quota sensor recorded: bytes, or percent-seconds of a thread.", func(s *broker.QuotaStat) float64 { return s.Total }},
		{"minikafka_quota_throttle_seconds_total", "Throttle time a quota sensor gave.", func(s *broker.QuotaStat) float64 { return s.Throttle.Seconds() }},
	} {
		p.family(f.name, "counter", f.help)
		for i := range stats {
			s := &stats[i]
			if s.Kind != "controller_mutation_rate" {
				p.sample(f.name, quotaLabels(s), f.val(s))
			}
		}
	}
}

// quotaLabels are a sensor's labels: the quota key and who shares it, by
// user and client ID, or for connection_creation_rate by IP.
func quotaLabels(s *broker.QuotaStat) []string {
	if s.IP != "" {
		return []string{"quota", s.Kind, "ip", s.IP}
	}
	return []string{"quota", s.Kind, "user", s.User, "client_id", s.Client}
}
