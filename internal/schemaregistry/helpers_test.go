package schemaregistry_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// start runs a broker with the registry on a free loopback port.
func start(t testing.TB, opts ...minikafka.Option) (*minikafka.Broker, string) {
	t.Helper()
	b := minikafkatest.New(t, append([]minikafka.Option{minikafka.WithSchemaRegistry("127.0.0.1:0")}, opts...)...)
	u := b.SchemaRegistryURL()
	if u == "" {
		t.Fatal("no schema registry URL")
	}
	return b, u
}

// answer is a response: its status, media type and body.
type answer struct {
	status int
	ctype  string
	body   []byte
}

// code is the error_code of an error answer (0 if none).
func (a answer) code() int {
	var e struct {
		Code int `json:"error_code"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

func (a answer) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("decoding %s: %v", a.body, err)
	}
}

// call sends a request with body (a string as is, anything else as JSON).
func call(t testing.TB, method, url string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: out}
}

// schema is a register body.
func schema(text string, typ ...string) map[string]any {
	m := map[string]any{"schema": text}
	if len(typ) > 0 {
		m["schemaType"] = typ[0]
	}
	return m
}
