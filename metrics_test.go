package minikafka_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"iter"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// scrape fetches the metrics endpoint, checks that every line is valid text
// exposition format (a sample follows its family's HELP and TYPE) and
// returns the samples by name{labels}.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	// No keep-alive: no idle client connection outlives the test.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sampleRE := regexp.MustCompile(`^([a-z_]+)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$`)
	typed := map[string]bool{}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			if f[3] != "counter" && f[3] != "gauge" {
				t.Errorf("type %q", line)
			}
			typed[f[2]] = true
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not text exposition format: %q", line)
		}
		if !typed[m[1]] {
			t.Errorf("sample before its TYPE: %q", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("value of %q: %v", line, err)
		}
		out[m[1]+m[2]] = v
	}
	return out
}

func TestMetricsEndpoint(t *testing.T) {
	up, err := minikafka.Start(context.Background(), minikafka.WithInMemory())
	if err != nil {
		t.Fatal(err)
	}
	upClosed := false
	defer func() {
		if !upClosed {
			up.Close()
		}
	}()
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr("127.0.0.1:0"),
		minikafka.WithUpstream(up.Addr()), minikafka.WithForward("edge-*"), minikafka.WithTopic("edge-a", 2), minikafka.WithTopic("plain", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	addr := b.MetricsAddr().String()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumeTopics("plain"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "edge-a", Partition: int32(i % 2), Value: []byte("forwarded")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Value: []byte("local")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if fs := cl.PollFetches(ctx); len(fs.Records()) != 1 {
		t.Fatalf("consumed %d records, errors %v", len(fs.Records()), fs.Errors())
	}
	labels := func(p int) string { return fmt.Sprintf(`{topic="edge-a",partition="%d",upstream_topic="edge-a"}`, p) }
	var m map[string]float64
	for {
		m = scrape(t, addr)
		if m["minikafka_forward_records_total"+labels(0)] == 5 && m["minikafka_forward_records_total"+labels(1)] == 5 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("records never forwarded: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for k, ok := range map[string]bool{
		`minikafka_requests_total{api="Produce",key="0"}`:                    m[`minikafka_requests_total{api="Produce",key="0"}`] >= 11,
		`minikafka_requests_total{api="Fetch",key="1"}`:                      m[`minikafka_requests_total{api="Fetch",key="1"}`] >= 1,
		`minikafka_requests_total{api="Metadata",key="3"}`:                   m[`minikafka_requests_total{api="Metadata",key="3"}`] >= 1,
		"minikafka_produce_bytes_total":                                      m["minikafka_produce_bytes_total"] > 11*9,
		"minikafka_fetch_bytes_total":                                        m["minikafka_fetch_bytes_total"] > 5,
		"minikafka_connections":                                              m["minikafka_connections"] >= 1,
		"minikafka_forward_lag_records" + labels(0):                          m["minikafka_forward_lag_records"+labels(0)] == 0,
		"minikafka_forward_high_watermark" + labels(1):                       m["minikafka_forward_high_watermark"+labels(1)] == 5,
		"minikafka_forward_upstream_acked_offset" + labels(1):                m["minikafka_forward_upstream_acked_offset"+labels(1)] == 5,
		"minikafka_forward_spool_bytes" + labels(0):                          m["minikafka_forward_spool_bytes"+labels(0)] >= 0,
		"minikafka_forward_spool_max_bytes" + labels(0):                      m["minikafka_forward_spool_max_bytes"+labels(0)] == 1<<30,
		"minikafka_forward_spool_pressure" + labels(0):                       m["minikafka_forward_spool_pressure"+labels(0)] < 0.01,
		"minikafka_forward_errors_total" + labels(0):                         m["minikafka_forward_errors_total"+labels(0)] == 0,
		"minikafka_forward_bytes_total" + labels(0):                          m["minikafka_forward_bytes_total"+labels(0)] > 0,
		`minikafka_forward_state{topic="edge-a",partition="0",state="idle"}`: m[`minikafka_forward_state{topic="edge-a",partition="0",state="idle"}`] == 1,
	} {
		if !ok {
			t.Errorf("%s = %v", k, m[k])
		}
	}
	for k := range m {
		if strings.Contains(k, `topic="plain"`) {
			t.Errorf("non-forwarded topic in forward metrics: %s", k)
		}
	}

	// A committed transaction goes upstream as an upstream transaction
	// of the uplink's transactional producer.
	txnID := b.ForwardStats()[0].TransactionalID
	txnLabel := `{transactional_id="` + txnID + `"}`
	if m["minikafka_forward_upstream_transactions_total"+txnLabel] != 0 || m["minikafka_forward_transactional_producer_id"+txnLabel] != -1 {
		t.Errorf("before any transaction: %v upstream transactions, producer %v", m["minikafka_forward_upstream_transactions_total"+txnLabel], m["minikafka_forward_transactional_producer_id"+txnLabel])
	}
	txn, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("metrics-txn"), kgo.DefaultProduceTopic("edge-a"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("in a transaction")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	for m = scrape(t, addr); m["minikafka_forward_upstream_transactions_total"+txnLabel] != 1; m = scrape(t, addr) {
		if ctx.Err() != nil {
			t.Fatalf("the transaction never shipped: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m["minikafka_forward_transactional_producer_id"+txnLabel] < 0 {
		t.Errorf("transactional producer id %v after a shipped transaction", m["minikafka_forward_transactional_producer_id"+txnLabel])
	}

	// The upstream goes away: lag and errors show.
	up.Close()
	upClosed = true
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "edge-a", Partition: 0, Value: []byte("stuck")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		m = scrape(t, addr)
		if m["minikafka_forward_errors_total"+labels(0)] > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no forward error counted: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m["minikafka_forward_lag_records"+labels(0)] != 1 || m["minikafka_forward_lag_records"+labels(1)] != 0 {
		t.Errorf("lag %v, %v", m["minikafka_forward_lag_records"+labels(0)], m["minikafka_forward_lag_records"+labels(1)])
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("metrics endpoint still serving after Close")
	}
}

// Without WithMetricsAddr there is no endpoint.
func TestMetricsOffByDefault(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a := b.MetricsAddr(); a != nil {
		t.Fatalf("metrics address %v", a)
	}
}

// A metrics address in use fails Start cleanly (and promptly).
func TestMetricsAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr(ln.Addr().String()))
	if err == nil {
		b.Close()
		t.Fatal("Start succeeded with the metrics address in use")
	}
	if !strings.Contains(err.Error(), "metrics") {
		t.Errorf("error %v does not name the metrics endpoint", err)
	}
}

// Quota use shows in /metrics: the sensor of a client-id quota with its
// limit, what it recorded, and the throttled answers.
func TestMetricsQuotas(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr("127.0.0.1:0"),
		minikafka.WithTopic("q", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ClientID("metered"), kgo.DefaultProduceTopic("q"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	name := "metered"
	ctx := context.Background()
	res, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 100}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	val := make([]byte, 5000)
	rand.Read(val) // incompressible: the quota counts wire bytes
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: val}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	m := scrape(t, b.MetricsAddr().String())
	const tags = `{quota="producer_byte_rate",user="",client_id="metered"}`
	if m["minikafka_quota_limit"+tags] != 100 || m["minikafka_quota_recorded_total"+tags] < 5000 {
		t.Fatalf("quota samples: limit %v recorded %v", m["minikafka_quota_limit"+tags], m["minikafka_quota_recorded_total"+tags])
	}
	if m["minikafka_quota_throttled_responses_total"] < 1 || m["minikafka_quota_throttle_seconds_total"+tags] <= 0 {
		t.Fatalf("throttle samples: %v %v", m["minikafka_quota_throttled_responses_total"], m["minikafka_quota_throttle_seconds_total"+tags])
	}
}

// A kgo client pushes its own metrics (KIP-714) and /metrics shows them
// per client: kgo's producer metrics and the application's own gauge and
// sum (delta pushes added up to the total), then its terminating push.
func TestMetricsClientTelemetry(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr("127.0.0.1:0"),
		minikafka.WithTopic("tele", 1), minikafka.WithClientMetrics(time.Second, "*"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var sum atomic.Int64
	sum.Store(5)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ClientID("tele-app"), kgo.DefaultProduceTopic("tele"),
		kgo.UserMetricsFn(func() iter.Seq[kgo.Metric] {
			return func(yield func(kgo.Metric) bool) {
				_ = yield(kgo.Metric{Name: "app.queue.depth", Type: kgo.MetricTypeGauge, ValueInt: 42, Attrs: map[string]any{"queue.name": "orders"}}) &&
					yield(kgo.Metric{Name: "app.handled", Type: kgo.MetricTypeSum, ValueInt: sum.Load()})
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	addr := b.MetricsAddr().String()
	// find returns the sample of metric for client tele-app whose labels
	// contain all of extra.
	find := func(m map[string]float64, metric string, extra ...string) (float64, bool) {
		for k, v := range m {
			if !strings.HasPrefix(k, "minikafka_client_metric{") || !strings.Contains(k, `client_id="tele-app"`) || !strings.Contains(k, `metric="`+metric+`"`) {
				continue
			}
			ok := true
			for _, e := range extra {
				ok = ok && strings.Contains(k, e)
			}
			if ok {
				return v, true
			}
		}
		return 0, false
	}
	waitFor := func(what string, cond func(m map[string]float64) bool) map[string]float64 {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			m := scrape(t, addr)
			if cond(m) {
				return m
			}
			if time.Now().After(deadline) {
				var lines []string
				for k, v := range m {
					if strings.HasPrefix(k, "minikafka_client") {
						lines = append(lines, fmt.Sprintf("%s %v", k, v))
					}
				}
				t.Fatalf("%s: not seen; client samples:\n%s", what, strings.Join(lines, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	m := waitFor("first push", func(m map[string]float64) bool {
		_, ok := find(m, "app.queue.depth")
		return ok
	})
	if v, _ := find(m, "app.queue.depth", `attr_queue_name="orders"`, `type="gauge"`, `client_software_name="kgo"`); v != 42 {
		t.Fatalf("app gauge %v", v)
	}
	if v, ok := find(m, "org.apache.kafka.producer.connection.creation.total", `type="sum"`); !ok || v < 1 {
		t.Fatalf("kgo's producer connection total: %v %v", v, ok)
	}
	if v, _ := find(m, "app.handled"); v != 5 {
		t.Fatalf("app sum after the first push: %v", v)
	}
	sum.Store(12) // the next push sends the delta, 7
	waitFor("second push", func(m map[string]float64) bool {
		v, _ := find(m, "app.handled")
		return v == 12
	})
	cl.Close() // the terminating push
	m = waitFor("terminating push", func(m map[string]float64) bool {
		return m[`minikafka_client_telemetry_pushes_total{result="ok"}`] >= 3
	})
	for k, v := range m {
		if strings.HasPrefix(k, "minikafka_client_telemetry_pushes_total") && !strings.Contains(k, `"ok"`) && v > 0 {
			t.Errorf("refused pushes: %s %v", k, v)
		}
	}
}

// With no subscription no client pushes anything.
func TestMetricsClientTelemetryOff(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithMetricsAddr("127.0.0.1:0"),
		minikafka.WithTopic("tele", 1), minikafka.WithClientMetrics(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.DefaultProduceTopic("tele"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // two push intervals
	cl.Close()
	m := scrape(t, b.MetricsAddr().String())
	for k := range m {
		if strings.HasPrefix(k, "minikafka_client_metric{") || strings.HasPrefix(k, "minikafka_client_telemetry_pushes_total") {
			t.Fatalf("pushed with no subscription: %s", k)
		}
	}
	if m["minikafka_requests_total{api=\"GetTelemetrySubscriptions\",key=\"71\"}"] < 1 {
		t.Fatalf("the client never asked for its subscription")
	}
}
