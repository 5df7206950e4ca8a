package minikafka_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
