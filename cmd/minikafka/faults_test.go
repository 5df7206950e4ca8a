package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var adminRE = regexp.MustCompile(`control API at http://(\S+)/v1/`)

// serveAdmin starts the binary with the control API and returns it with
// the API's bound address, read from its startup line.
func serveAdmin(t *testing.T, extra ...string) (*proc, string) {
	t.Helper()
	p := serve(t, nil, append([]string{"-listen", "127.0.0.1:0", "-data", filepath.Join(t.TempDir(), "data"), "-fsync", "never",
		"-admin-addr", "127.0.0.1:0"}, extra...)...)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line := <-p.stdout.lines:
			if m := adminRE.FindStringSubmatch(line); m != nil {
				return p, m[1]
			}
		case <-timeout:
			t.Fatalf("no control API line\nstdout:\n%s", p.stdout)
		}
	}
}

func adminCall(t *testing.T, admin, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+admin+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// The fault API over HTTP against the binary: a fault a kgo producer
// retries through, its fired count, the request log, and bad requests
// answered 4xx with a message while the broker keeps serving.
func TestFaultHTTPBinary(t *testing.T) {
	p, admin := serveAdmin(t)
	if out, errOut, code := cliRun(t, p.addr, "", "topic", "create", "t", "-p", "1"); code != 0 {
		t.Fatalf("topic create: %d %s %s", code, out, errOut)
	}
	st, f := adminCall(t, admin, "POST", "/v1/faults", `{"api_keys":[0],"topic":"t","error":"NOT_LEADER_OR_FOLLOWER","times":2}`)
	if st != 200 || f["error_code"] != float64(6) || f["fired"] != float64(0) {
		t.Fatalf("add fault: %d %v", st, f)
	}
	id := int(f["id"].(float64))
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through the fault: %v", err)
	}
	if st, f := adminCall(t, admin, "GET", "/v1/faults/"+itoa(id), ""); st != 200 || f["fired"] != float64(2) || f["done"] != true {
		t.Fatalf("fault after produce: %d %v", st, f)
	}
	st, rl := adminCall(t, admin, "GET", "/v1/requests?api_key=0", "")
	reqs, _ := rl["requests"].([]any)
	if st != 200 || len(reqs) != 3 || reqs[0].(map[string]any)["error"] != "NOT_LEADER_OR_FOLLOWER" || reqs[2].(map[string]any)["error_code"] != float64(0) {
		t.Fatalf("request log: %d %v", st, rl)
	}
	if st, _ := adminCall(t, admin, "DELETE", "/v1/faults/"+itoa(id), ""); st != 204 {
		t.Fatalf("remove: %d", st)
	}

	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/v1/faults", `{`, "bad JSON"},
		{"POST", "/v1/faults", `{"bogus":1}`, "unknown field"},
		{"POST", "/v1/faults", ``, "empty body"},
		{"POST", "/v1/faults", `{}`, "no action"},
		{"POST", "/v1/faults", `{"error":"NOPE"}`, "not a Kafka error name"},
		{"POST", "/v1/faults", `{"error":"NOT_LEADER_OR_FOLLOWER","error_code":7}`, "is code 6"},
		{"POST", "/v1/faults", `{"error_code":6,"drop":"sideways"}`, "drop"},
		{"POST", "/v1/faults", `{"delay_ms":-1}`, "delay_ms"},
		{"POST", "/v1/faults", `{"api_keys":[999],"error_code":6}`, "not a Kafka API key"},
		{"POST", "/v1/faults", `{"error_code":6,"partition":0}`, "partition needs its topic"},
		{"POST", "/v1/faults", `{"error_code":6,"probability":1.5}`, "probability"},
		{"POST", "/v1/faults", `{"error_code":6,"min_version":5,"max_version":2}`, "min version"},
		{"POST", "/v1/faults", `{"error_code":6,"fired":3}`, "answers, not settings"},
		{"GET", "/v1/faults/abc", ``, "not a positive integer"},
		{"GET", "/v1/faults/999", ``, "no fault 999"},
		{"DELETE", "/v1/faults/999", ``, "no fault 999"},
		{"POST", "/v1/faults/999/release", ``, "no fault 999"},
		{"POST", "/v1/faults/pause-partition", `{}`, "topic is required"},
		{"POST", "/v1/faults/pause-partition", `{"topic":"t","partition":-2}`, "negative"},
		{"POST", "/v1/faults/coordinator", `{"loading":true}`, "group is required"},
		{"POST", "/v1/faults/throttle", `{"throttle_ms":0}`, "positive"},
		{"POST", "/v1/faults/rtt", `{"rtt_ms":1e12}`, "rtt_ms"},
		{"GET", "/v1/requests?limit=x", ``, "limit"},
		{"GET", "/v1/requests?api_key=-3", ``, "api_key"},
	} {
		st, out := adminCall(t, admin, c.method, c.path, c.body)
		msg, _ := out["error"].(string)
		if st < 400 || st >= 500 || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s %s: %d %q, want 4xx naming %q", c.method, c.path, c.body, st, msg, c.want)
		}
	}
	if st, _ := adminCall(t, admin, "GET", "/healthz", ""); st != 200 {
		t.Fatalf("healthz after bad requests: %d", st)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("w")}).FirstErr(); err != nil {
		t.Fatalf("produce after bad requests: %v", err)
	}
	noPanic(t, p)
}

func itoa(n int) string { return jsonNum(n) }

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

// The fault and broker verbs against the binary: add, list, remove,
// pause, broker down (a client cannot produce) and up, the request log,
// and a bad fault answered with the broker's message and exit 1.
func TestFaultCLIBinary(t *testing.T) {
	p, admin := serveAdmin(t)
	run := func(args ...string) (string, string, int) {
		return cliRun(t, p.addr, "", append(args, "-admin-addr", admin)...)
	}
	if out, errOut, code := cliRun(t, p.addr, "", "topic", "create", "t", "-p", "1"); code != 0 {
		t.Fatalf("topic create: %d %s %s", code, out, errOut)
	}
	out, errOut, code := run("fault", "add", "-api-key", "0", "-error", "NOT_LEADER_OR_FOLLOWER", "-times", "1", "-o", "json")
	var f struct {
		ID    uint64 `json:"id"`
		Error string `json:"error"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &f) != nil || f.ID == 0 || f.Error != "NOT_LEADER_OR_FOLLOWER" {
		t.Fatalf("fault add: %d %q %q", code, out, errOut)
	}
	if out, _, code := run("fault", "list"); code != 0 || !strings.Contains(out, "error NOT_LEADER_OR_FOLLOWER") || !strings.Contains(out, "keys [0]") {
		t.Fatalf("fault list: %d %q", code, out)
	}
	if out, errOut, code := cliRun(t, p.addr, "x\n", "produce", "t"); code != 0 {
		// the verb's own client retries through the one NOT_LEADER
		t.Fatalf("produce through the fault: %d %s %s", code, out, errOut)
	}
	if out, _, code := run("fault", "list", "-o", "json"); code != 0 || !strings.Contains(out, `"fired": 1`) {
		t.Fatalf("fault list after produce: %d %q", code, out)
	}
	if _, errOut, code := run("fault", "remove", itoa(int(f.ID))); code != 0 {
		t.Fatalf("fault remove: %d %s", code, errOut)
	}
	if _, errOut, code := run("fault", "remove", "12345"); code == 0 || !strings.Contains(errOut, "no fault 12345") {
		t.Fatalf("remove unknown: %d %q", code, errOut)
	}
	if _, errOut, code := run("fault", "add", "-error", "NOPE"); code == 0 || !strings.Contains(errOut, "not a Kafka error name") {
		t.Fatalf("bad fault: %d %q", code, errOut)
	}
	if out, _, code := run("fault", "pause", "t", "-partition", "0"); code != 0 || !strings.Contains(out, "topic t-0") {
		t.Fatalf("pause: %d %q", code, out)
	}
	if _, errOut, code := run("fault", "remove", "-all"); code != 0 {
		t.Fatalf("remove -all: %d %s", code, errOut)
	}
	if out, _, code := run("broker", "down"); code != 0 || !strings.Contains(out, "down") {
		t.Fatalf("broker down: %d %q", code, out)
	}
	if _, _, code := cliRun(t, p.addr, "", "topic", "list", "-timeout", "1s"); code == 0 {
		t.Fatal("topic list worked while the broker was down")
	}
	if out, _, code := run("broker", "up"); code != 0 || !strings.Contains(out, "up") {
		t.Fatalf("broker up: %d %q", code, out)
	}
	if out, errOut, code := cliRun(t, p.addr, "", "topic", "list"); code != 0 || !strings.Contains(out, "t") {
		t.Fatalf("topic list after up: %d %q %q", code, out, errOut)
	}
	if out, _, code := run("fault", "requests", "-limit", "5"); code != 0 || !strings.Contains(out, "Metadata") {
		t.Fatalf("requests: %d %q", code, out)
	}
	noPanic(t, p)
}
