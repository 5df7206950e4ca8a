package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// -metrics-addr (here from the environment) serves /metrics.
func TestRunMetricsAddr(t *testing.T) {
	b := runStarted(t, map[string]string{"MINIKAFKA_METRICS_ADDR": "127.0.0.1:0"})
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
