package minikafka_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

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
