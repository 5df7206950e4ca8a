package minikafka_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
)

// TestSchemaRegistryOption: off unless asked for; on loopback for a bare
// port; the wildcard refused without WithSchemaRegistryAny; Close stops it.
func TestSchemaRegistryOption(t *testing.T) {
	ctx := context.Background()
	b, err := minikafka.Start(ctx, minikafka.WithInMemory())
	if err != nil {
		t.Fatal(err)
	}
	if b.SchemaRegistryURL() != "" || b.SchemaRegistryAddr() != nil {
		t.Errorf("registry on without the option: %q", b.SchemaRegistryURL())
	}
	b.Close()

	if _, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithSchemaRegistry("0.0.0.0:0")); err == nil || !strings.Contains(err.Error(), "every interface") {
		t.Errorf("wildcard without Any: %v", err)
	}
	if _, err := minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithSchemaRegistry("nonsense")); err == nil {
		t.Error("a bad address was accepted")
	}

	b, err = minikafka.Start(ctx, minikafka.WithInMemory(), minikafka.WithSchemaRegistry(":0"))
	if err != nil {
		t.Fatal(err)
	}
	u := b.SchemaRegistryURL()
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("a bare port should mean loopback: %s", u)
	}
	resp, err := http.Post(u+"/subjects/s/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"id":1}` {
		t.Errorf("register: %d %s", resp.StatusCode, body)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(u + "/subjects"); err == nil {
		t.Error("the registry still answers after Close")
	}
}
