package minikafka

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAdminFaultBody sends arbitrary bodies to POST /v1/faults and the
// broker-level fault routes: every answer is 200 or a 4xx with a message,
// never a 500 or a panic.
func FuzzAdminFaultBody(f *testing.F) {
	for _, s := range []string{
		`{"api_keys":[0],"topic":"t","error":"NOT_LEADER_OR_FOLLOWER","times":2}`,
		`{"drop":"after","times":1}`,
		`{"delay_ms":5,"delay_max_ms":10,"probability":0.5,"seed":7}`,
		`{"hold":true,"min_version":3}`,
		`{"error_code":-1,"partition":0}`,
		`{"throttle_ms":100,"client_id":"x","listener":"PLAINTEXT","connection":3}`,
		`{`, ``, `[]`, `{"error":"NOPE"}`,
	} {
		f.Add(s)
	}
	b, err := Start(context.Background(), WithInMemory(), WithListenAddr("127.0.0.1:0"))
	if err != nil {
		f.Fatal(err)
	}
	defer b.Close()
	h := adminHandler(b, "")
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/faults", "/v1/faults/pause-partition", "/v1/faults/coordinator", "/v1/faults/throttle", "/v1/faults/rtt"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if rec.Code >= 500 || (rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"error"`)) {
				t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
			}
		}
		b.ClearFaults()
	})
}
