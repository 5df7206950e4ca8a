package minikafka_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

func adminCall(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: not JSON: %q", method, url, raw)
	}
	return resp.StatusCode, m
}

// Inspection and waits over HTTP after a kgo producer and group consumer,
// and the caller's mistakes answered 4xx with a message.
func TestAdminInspectHTTP(t *testing.T) {
	b := start(t, minikafka.WithAdminAddr("127.0.0.1:0"))
	base := "http://" + b.AdminAddr().String()
	ctx := ctxT(t)
	if _, err := kadm.NewClient(client(t, b)).CreateTopic(ctx, 1, 1, nil, "h"); err != nil {
		t.Fatal(err)
	}
	prod := client(t, b)
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "h", Value: []byte("a")}, &kgo.Record{Topic: "h", Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	st, m := adminCall(t, "POST", base+"/v1/wait/high-watermark", `{"topic":"h","partition":0,"offset":2,"timeout_ms":5000}`)
	if st != 200 || m["ok"] != true {
		t.Fatalf("wait: %d %v", st, m)
	}
	st, m = adminCall(t, "GET", base+"/v1/topics/h/partitions/0", "")
	if st != 200 || m["high_watermark"] != 2.0 || m["log_start_offset"] != 0.0 {
		t.Fatalf("partition: %d %v", st, m)
	}
	cons := client(t, b, kgo.ConsumerGroup("hg"), kgo.ConsumeTopics("h"), kgo.DisableAutoCommit())
	for n := 0; n < 2; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	st, m = adminCall(t, "GET", base+"/v1/groups/hg", "")
	if st != 200 || m["state"] != "Stable" || m["members"] != 1.0 || len(m["offsets"].([]any)) != 1 {
		t.Fatalf("group: %d %v", st, m)
	}
	st, m = adminCall(t, "GET", base+"/v1/groups/hg/lag/h", "")
	if st != 200 || m["total_lag"] != 0.0 {
		t.Fatalf("lag: %d %v", st, m)
	}

	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"GET", "/v1/topics/nope/partitions/0", "", 404, "unknown topic"},
		{"GET", "/v1/topics/h/partitions/x", "", 400, "partition"},
		{"GET", "/v1/topics/h/partitions/7", "", 404, "unknown topic or partition"},
		{"GET", "/v1/groups/nog", "", 404, "unknown group"},
		{"GET", "/v1/groups/hg/lag/nope", "", 404, "unknown topic"},
		{"POST", "/v1/wait/high-watermark", `{"topic":`, 400, "bad JSON"},
		{"POST", "/v1/wait/high-watermark", `{"topic":"h","bogus":1}`, 400, "unknown field"},
		{"POST", "/v1/wait/high-watermark", `{"topic":"h","partition":0,"offset":1}`, 400, "timeout_ms"},
		{"POST", "/v1/wait/high-watermark", `{"topic":"h","partition":0,"offset":99,"timeout_ms":20}`, 408, "high watermark 2"},
	} {
		st, m := adminCall(t, c.method, base+c.path, c.body)
		if msg, _ := m["error"].(string); st != c.status || !strings.Contains(msg, c.msg) {
			t.Errorf("%s %s %s: %d %v, want %d %q", c.method, c.path, c.body, st, m, c.status, c.msg)
		}
	}
}
