package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
)

// -metrics-addr (here from the environment) serves /metrics.
func TestRunMetricsAddr(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *minikafka.Broker, 1)
	done := make(chan int, 1)
	env := func(k string) (string, bool) {
		if k == "MINIKAFKA_METRICS_ADDR" {
			return "127.0.0.1:0", true
		}
		return "", false
	}
	go func() {
		done <- run(ctx, []string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error"}, env, io.Discard, io.Discard, started)
	}()
	var b *minikafka.Broker
	select {
	case b = <-started:
	case code := <-done:
		t.Fatalf("run exited with %d", code)
	}
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d", code)
		}
	}()
	if b.MetricsAddr() == nil {
		t.Fatal("no metrics endpoint")
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + b.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "\nminikafka_connections ") {
		t.Fatalf("status %d, err %v, body:\n%s", resp.StatusCode, err, body)
	}
}
