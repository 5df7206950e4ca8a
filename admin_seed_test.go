package minikafka_test

import (
	"encoding/base64"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// Seeding, reading records and the other waits over HTTP, end to end
// against a broker with -admin-addr, with bad requests answered 4xx.
func TestAdminSeedRecordsHTTP(t *testing.T) {
	b := start(t, minikafka.WithAdminAddr("127.0.0.1:0"))
	base := "http://" + b.AdminAddr().String()
	call := func(method, path, body string, want int) map[string]any {
		t.Helper()
		st, m := adminCall(t, method, base+path, body)
		if st != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, st, m, want)
		}
		return m
	}
	call("POST", "/v1/topics", `{"topic":"s","partitions":2,"configs":{"cleanup.policy":"delete"}}`, 200)
	call("POST", "/v1/topics", `{"topic":"s","partitions":2}`, 409)
	call("POST", "/v1/topics", `{"topic":"bad","partitions":1,"configs":{"no.such.config":"1"}}`, 400)
	call("POST", "/v1/wait/topic", `{"topic":"s","timeout_ms":2000}`, 200)
	m := call("POST", "/v1/topics/s/records", `{"records":[
		{"partition":0,"key":"k","value":"hello","headers":[{"key":"h","value":"1"}],"timestamp_ms":1700000000000},
		{"partition":0,"value_base64":"`+base64.StdEncoding.EncodeToString([]byte{0xff, 0})+`"},
		{"partition":1,"value":"other"}]}`, 200)
	if offs := m["offsets"].([]any); len(offs) != 3 || offs[1].(map[string]any)["offset"] != 1.0 {
		t.Fatalf("offsets %v", m)
	}
	call("POST", "/v1/topics/s/records", `{"records":[{"partition":0,"value":"gone"}],"transaction":"abort"}`, 200)
	call("POST", "/v1/topics/s/records", `{"records":[{"partition":0,"value":"kept"}],"transaction":"commit"}`, 200)
	// A plain record after the transactions: a kgo consumer commits past
	// a record, not past a trailing transaction marker, so without it the
	// lag (high watermark - committed, as Kafka counts it) stays 1.
	call("POST", "/v1/topics/s/records", `{"records":[{"partition":0,"value":"last"}]}`, 200)

	m = call("GET", "/v1/topics/s/partitions/0/records?isolation=read_committed", "", 200)
	recs := m["records"].([]any)
	if len(recs) != 4 || m["next_offset"] != 7.0 {
		t.Fatalf("read_committed records: %v", m)
	}
	r0 := recs[0].(map[string]any)
	if r0["key"] != "k" || r0["value"] != "hello" || r0["timestamp_ms"] != 1700000000000.0 || r0["headers"].([]any)[0].(map[string]any)["value"] != "1" {
		t.Fatalf("first record %v", r0)
	}
	r1 := recs[1].(map[string]any)
	if r1["key"] != nil || r1["value"] != nil || r1["value_base64"] != base64.StdEncoding.EncodeToString([]byte{0xff, 0}) {
		t.Fatalf("binary record %v", r1)
	}
	if v := recs[2].(map[string]any)["value"]; v != "kept" {
		t.Fatalf("third record %v", v)
	}
	if m = call("GET", "/v1/topics/s/partitions/0/records?offset=2&limit=1", "", 200); m["records"].([]any)[0].(map[string]any)["value"] != "gone" {
		t.Fatalf("read_uncommitted from 2: %v", m)
	}

	// A group consumes everything: lag zero and stable waits answer.
	cons := client(t, b, kgo.ConsumerGroup("sg"), kgo.ConsumeTopics("s"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx := ctxT(t)
	for n := 0; n < 5; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		n += len(fs.Records())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	call("POST", "/v1/wait/group-stable", `{"group":"sg","members":1,"timeout_ms":10000}`, 200)
	call("POST", "/v1/wait/lag-zero", `{"group":"sg","topic":"s","timeout_ms":10000}`, 200)
	call("POST", "/v1/wait/group-stable", `{"group":"sg","members":3,"timeout_ms":100}`, 408)

	// The caller's mistakes.
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/topics/s/partitions/0/records?limit=0", "", 400},
		{"GET", "/v1/topics/s/partitions/0/records?offset=x", "", 400},
		{"GET", "/v1/topics/s/partitions/0/records?isolation=dirty", "", 400},
		{"GET", "/v1/topics/nope/partitions/0/records", "", 404},
		{"POST", "/v1/topics/s/records", `{"records":[]}`, 400},
		{"POST", "/v1/topics/s/records", `{"records":[{"value":"a","value_base64":"YQ=="}]}`, 400},
		{"POST", "/v1/topics/s/records", `{"records":[{"value":"a"}],"transaction":"maybe"}`, 400},
		{"POST", "/v1/topics/nope/records", `{"records":[{"value":"a"}]}`, 404},
		{"POST", "/v1/topics", `{"partitions":1}`, 400},
		{"POST", "/v1/wait/topic", `{"topic":"never","timeout_ms":50}`, 408},
		{"POST", "/v1/wait/topic", `{"topic":"s"}`, 400},
		{"POST", "/v1/wait/lag-zero", `{"group":"sg","timeout_ms":50}`, 400},
		{"POST", "/v1/wait/group-stable", `{"group":"sg","members":1,"timeout_ms":1,"extra":true}`, 400},
	} {
		m := call(c.method, c.path, c.body, c.want)
		if msg, _ := m["error"].(string); msg == "" {
			t.Errorf("%s %s: no error message: %v", c.method, c.path, m)
		}
	}
}
