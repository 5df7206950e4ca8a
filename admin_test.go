package minikafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
)

// The control API's listener: loopback by default, a token required
// elsewhere and checked when set, unknown paths a JSON 404.
func TestAdminListener(t *testing.T) {
	ctx := context.Background()
	if _, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithAdminAddr("0.0.0.0:0")); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("a wildcard admin address without a token started: %v", err)
	}
	b, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithAdminAddr(":0"), minikafka.WithAdminToken("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	addr := b.AdminAddr().String()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("a port alone bound %s, want loopback", addr)
	}
	get := func(path, token string) (int, map[string]any) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, _ := get("/healthz", ""); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	if code, m := get("/v1/no-such-thing", "s3cret"); code != 404 || !strings.Contains(m["error"].(string), "/v1/no-such-thing") {
		t.Fatalf("unknown path: %d %v", code, m)
	}
}

// Close with a control API wait in flight: the wait (60 s to run) is cut
// off at the listener's grace, its client sees the connection end, and
// Close does not wait for the wait.
func TestCloseCutsAdminWait(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithAdminAddr("127.0.0.1:0"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + b.AdminAddr().String() + "/v1/wait/high-watermark"
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"topic":"t","partition":0,"offset":1000,"timeout_ms":60000}`))
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("the wait answered %s", resp.Status)
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the wait is in its handler
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-done:
		if err == nil || strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "answered") {
			t.Fatalf("the wait's client: %v, want its connection ended while it waited", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait's client still waiting 30 s after Close began (its own timeout is 60 s)")
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close still running 30 s after it began")
	}
}
