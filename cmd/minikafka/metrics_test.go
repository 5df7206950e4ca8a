package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
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

// -http-addr serves the console, /metrics and the health endpoints; a
// port alone means loopback.
func TestRunHTTPAddr(t *testing.T) {
	b := runStarted(t, nil, "-http-addr", ":0")
	addr := b.HTTPAddr()
	if addr == nil || !strings.HasPrefix(addr.String(), "127.0.0.1:") {
		t.Fatalf("http address %v, want loopback", addr)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "minikafka_connections", "/": "minikafka console", "/api/topics": "["} {
		resp, err := hc.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200s", path, resp.StatusCode, body)
		}
	}
}

// A wildcard -http-addr needs -http-addr-any.
func TestRunHTTPAddrWildcard(t *testing.T) {
	var stderr syncBuffer
	code := run(context.Background(), []string{"-in-memory", "-listen", "127.0.0.1:0", "-http-addr", "0.0.0.0:0"}, func(string) (string, bool) { return "", false }, io.Discard, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "-http-addr-any") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	b := runStarted(t, nil, "-http-addr", "0.0.0.0:0", "-http-addr-any")
	if ta, ok := b.HTTPAddr().(*net.TCPAddr); !ok || !ta.IP.IsUnspecified() {
		t.Errorf("with -http-addr-any: %v", b.HTTPAddr())
	}
}

// The startup line says where the console is when -http-addr is given, a
// URL that serves it (a wildcard bind as localhost), and nothing about a
// console without it.
func TestRunPrintsConsoleURL(t *testing.T) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for _, tc := range []struct {
		args []string
		host string // the URL's host; "" no console
	}{
		{nil, ""},
		{[]string{"-http-addr", "127.0.0.1:0"}, "127.0.0.1"},
		{[]string{"-http-addr", "0.0.0.0:0", "-http-addr-any"}, "localhost"},
	} {
		var stdout syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan *minikafka.Broker, 1)
		done := make(chan int, 1)
		args := append([]string{"-in-memory", "-listen", "127.0.0.1:0", "-log-level", "error"}, tc.args...)
		go func() {
			done <- run(ctx, args, func(string) (string, bool) { return "", false }, &stdout, io.Discard, started)
		}()
		var b *minikafka.Broker
		select {
		case b = <-started:
		case code := <-done:
			cancel()
			t.Fatalf("%v: exit %d", tc.args, code)
		}
		line, _, _ := strings.Cut(stdout.String(), "\n")
		m := regexp.MustCompile(`; console on (http://(\S+)/)$`).FindStringSubmatch(line)
		switch {
		case tc.host == "" && (m != nil || strings.Contains(line, "console")):
			t.Errorf("without -http-addr the startup line names a console: %q", line)
		case tc.host != "" && m == nil:
			t.Errorf("%v: startup line %q names no console URL", tc.args, line)
		case tc.host != "":
			port := strconv.Itoa(b.HTTPAddr().(*net.TCPAddr).Port)
			if m[2] != net.JoinHostPort(tc.host, port) {
				t.Errorf("%v: console URL %s, want host %s port %s", tc.args, m[1], tc.host, port)
			}
			resp, err := hc.Get(m[1])
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "minikafka console") {
				t.Errorf("%s: %d %.200s", m[1], resp.StatusCode, body)
			}
		}
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("%v: exit %d", tc.args, code)
		}
	}
}
