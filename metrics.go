package minikafka

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxAPIKey bounds the per-key request counters; higher keys share the last.
const maxAPIKey = 128

// metrics counts what passes through the broker's handler and serves the
// endpoint.
type metrics struct {
	next protocol.Handler
	brk  *broker.Broker
	srvs []*protocol.Server // set once listening, one per listener

	requests     [maxAPIKey + 1]atomic.Uint64
	produceBytes atomic.Uint64 // record batch bytes in produce requests
	fetchBytes   atomic.Uint64 // fetch response bytes

	server *httpServer // WithMetricsAddr's endpoint; nil without
}

func newMetrics(brk *broker.Broker) *metrics { return &metrics{next: brk, brk: brk} }

// Serve counts req and hands it to the broker.
func (m *metrics) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	k := int(req.Key)
	if k < 0 || k > maxAPIKey {
		k = maxAPIKey
	}
	m.requests[k].Add(1)
	if pr, ok := req.Body.(*kmsg.ProduceRequest); ok {
		var n int
		for i := range pr.Topics {
			for j := range pr.Topics[i].Partitions {
				n += len(pr.Topics[i].Partitions[j].Records)
			}
		}
		m.produceBytes.Add(uint64(n))
	}
	rep := m.next.Serve(ctx, req)
	if req.Key == 1 {
		if rep.Response != nil {
			m.countFetch(rep.Response)
		} else if w := rep.Wait; w != nil {
			rep.Wait = func() (kmsg.Response, error) {
				r, err := w()
				if r != nil {
					m.countFetch(r)
				}
				return r, err
			}
		}
	}
	return rep
}

// countFetch adds a fetch response's size: the body length of responses
// that stream their records from files, else the record bytes.
func (m *metrics) countFetch(r kmsg.Response) {
	switch t := r.(type) {
	case protocol.BodyWriter:
		m.fetchBytes.Add(uint64(t.BodyLen()))
	case *kmsg.FetchResponse:
		var n int
		for i := range t.Topics {
			for j := range t.Topics[i].Partitions {
				n += len(t.Topics[i].Partitions[j].RecordBatches)
			}
		}
		m.fetchBytes.Add(uint64(n))
	}
}

// start listens on addr and serves /metrics; srvs supply the connection
// count.
func (m *metrics) start(addr string, srvs ...*protocol.Server) error {
	m.srvs = srvs
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("minikafka: metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.writeTo(w)
	})
	m.server = serveHTTP(ln, mux, httpWriteTimeout, nil)
	return nil
}

// stop closes the endpoint (idempotent).
func (m *metrics) stop() {
	if m != nil {
		m.server.stop(2 * time.Second)
	}
}

// addr is the endpoint's bound address, nil when off.
func (m *metrics) addr() net.Addr {
	if m == nil {
		return nil
	}
	return m.server.addr()
}

// writeTo writes every metric in the Prometheus text format.
func (m *metrics) writeTo(w io.Writer) {
	p := promWriter{w: w}
	p.family("minikafka_requests_total", "counter", "Requests received, by API.")
	for k := range m.requests {
		n := m.requests[k].Load()
		if n == 0 {
			continue
		}
		name := kmsg.NameForKey(int16(k))
		if k == maxAPIKey || name == "" {
			name = "Other"
		}
		p.sample("minikafka_requests_total", []string{"api", name, "key", strconv.Itoa(k)}, float64(n))
	}
	p.family("minikafka_produce_bytes_total", "counter", "Record batch bytes received in produce requests.")
	p.sample("minikafka_produce_bytes_total", nil, float64(m.produceBytes.Load()))
	p.family("minikafka_fetch_bytes_total", "counter", "Bytes of fetch responses.")
	p.sample("minikafka_fetch_bytes_total", nil, float64(m.fetchBytes.Load()))
	if len(m.srvs) > 0 {
		conns := 0
		for _, srv := range m.srvs {
			conns += srv.Conns()
		}
		p.family("minikafka_connections", "gauge", "Open client connections.")
		p.sample("minikafka_connections", nil, float64(conns))
	}

	m.writeQuotas(&p)
	m.writeClientMetrics(&p)

	stats := m.brk.ForwardStats()
	if stats == nil {
		return
	}
	type fam struct {
		name, typ, help string
		val             func(s *uplink.ForwardStat) float64
	}
	for _, f := range []fam{
		{"minikafka_forward_lag_records", "gauge", "Records of a forwarded partition not yet acknowledged upstream.", func(s *uplink.ForwardStat) float64 { return float64(s.Lag) }},
		{"minikafka_forward_high_watermark", "gauge", "Local high watermark of a forwarded partition.", func(s *uplink.ForwardStat) float64 { return float64(s.HighWatermark) }},
		{"minikafka_forward_upstream_acked_offset", "gauge", "First offset of a forwarded partition not yet acknowledged upstream.", func(s *uplink.ForwardStat) float64 { return float64(s.UpstreamAcked) }},
		{"minikafka_forward_spool_bytes", "gauge", "Bytes a forwarded partition's spool uses.", func(s *uplink.ForwardStat) float64 { return float64(s.SpoolBytes) }},
		{"minikafka_forward_spool_max_bytes", "gauge", "Bound of a forwarded partition's spool.", func(s *uplink.ForwardStat) float64 { return float64(s.SpoolMaxBytes) }},
		{"minikafka_forward_spool_pressure", "gauge", "Spool bytes / spool bound, 0..1; produce is throttled from 0.9 and refused at 1.", func(s *uplink.ForwardStat) float64 { return s.Pressure }},
		{"minikafka_forward_records_total", "counter", "Records acknowledged upstream since start.", func(s *uplink.ForwardStat) float64 { return float64(s.Forwarded) }},
		{"minikafka_forward_bytes_total", "counter", "Batch bytes acknowledged upstream since start.", func(s *uplink.ForwardStat) float64 { return float64(s.ForwardedBytes) }},
		{"minikafka_forward_errors_total", "counter", "Failed upstream attempts since start.", func(s *uplink.ForwardStat) float64 { return float64(s.Errors) }},
		{"minikafka_forward_upstream_producer_id", "gauge", "The forwarder's idempotent producer ID upstream (-1 before it has one); kept across restarts.", func(s *uplink.ForwardStat) float64 { return float64(s.ProducerID) }},
		{"minikafka_forward_producer_resets_total", "counter", "New upstream producer IDs taken since start because the upstream had forgotten the old one (the batch in flight then may be duplicated).", func(s *uplink.ForwardStat) float64 { return float64(s.ProducerResets) }},
	} {
		p.family(f.name, f.typ, f.help)
		for i := range stats {
			s := &stats[i]
			p.sample(f.name, []string{"topic", s.Topic, "partition", strconv.Itoa(int(s.Partition)), "upstream_topic", s.UpstreamTopic}, f.val(s))
		}
	}
	p.family("minikafka_forward_spool_encrypted", "gauge", "1 when a forwarded partition's spool is encrypted at rest (AES-256-GCM; key_id names the current key), else 0.")
	for i := range stats {
		s := &stats[i]
		on := 0.0
		if s.Encryption != "" {
			on = 1
		}
		p.sample("minikafka_forward_spool_encrypted", []string{"topic", s.Topic, "partition", strconv.Itoa(int(s.Partition)), "key_id", s.KeyID}, on)
	}
	if gs := m.brk.ForwardGroupOffsets(); len(gs) > 0 {
		p.family("minikafka_forward_group_offset_sync_lag_records", "gauge", "How far a group's offset committed upstream (-forward-group-offsets; else its last MirrorMaker 2 checkpoint, -forward-checkpoints) trails the translation of its local commit, in records; -1 when the offset could not be translated or written.")
		for i := range gs {
			g := &gs[i]
			v := float64(g.Lag)
			if g.UpstreamOffset < 0 || g.Err != "" {
				v = -1
			}
			p.sample("minikafka_forward_group_offset_sync_lag_records", []string{"group", g.Group, "topic", g.Topic, "partition", strconv.Itoa(int(g.Partition)), "upstream_topic", g.UpstreamTopic}, v)
		}
	}
	// The uplink's transactional producer, once: every partition's stat
	// carries the same.
	if s := stats[0]; s.TransactionalID != "" {
		l := []string{"transactional_id", s.TransactionalID}
		p.family("minikafka_forward_upstream_transactions_total", "counter", "Upstream transactions the uplink's transactional producer committed since start, each carrying one or more committed local transactions whole.")
		p.sample("minikafka_forward_upstream_transactions_total", l, float64(s.TransactionRounds))
		p.family("minikafka_forward_transactional_producer_id", "gauge", "The uplink's transactional producer ID upstream (-1 before it shipped a transaction this run).")
		p.sample("minikafka_forward_transactional_producer_id", l, float64(s.TransactionalProducerID))
	}
	p.family("minikafka_forward_state", "gauge", "1 for the forwarder's current state (starting, idle, shipping, retrying, transaction: waiting for the upstream transaction that ships a committed one, stopped).")
	for i := range stats {
		s := &stats[i]
		p.sample("minikafka_forward_state", []string{"topic", s.Topic, "partition", strconv.Itoa(int(s.Partition)), "state", s.State}, 1)
	}
}

// promWriter writes the Prometheus text exposition format (version 0.0.4).
type promWriter struct {
	w   io.Writer
	buf []byte
}

func (p *promWriter) family(name, typ, help string) {
	fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

// sample writes name{labels} value; labels alternate names and values.
func (p *promWriter) sample(name string, labels []string, v float64) {
	b := append(p.buf[:0], name...)
	if len(labels) > 0 {
		b = append(b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, labels[i]...)
			b = append(b, `="`...)
			b = append(b, escapeLabel(labels[i+1])...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	b = append(b, '\n')
	p.buf = b
	p.w.Write(b)
}

// Label values escape backslash, double quote and newline; help text
// backslash and newline.
var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

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
