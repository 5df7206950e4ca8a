package schemaregistry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// syncBuffer is a log sink for the broker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startOn(t *testing.T, dir string) *minikafka.Broker {
	t.Helper()
	b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSchemaRegistry("127.0.0.1:0"), minikafka.WithDurability("never"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRestart: IDs and versions survive a restart on the same data dir,
// and an ID is not given again, even the highest one after its schema was
// permanently deleted.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	b := startOn(t, dir)
	u := b.SchemaRegistryURL()
	var want []string
	for i, s := range []string{recA,
		`{"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"y","type":"int","default":0}]}`} {
		if a := call(t, "POST", u+"/subjects/a/versions", schema(s)); a.status != 200 {
			t.Fatalf("register %d: %s", i, a.body)
		}
	}
	call(t, "POST", u+"/subjects/b/versions", schema(`"string"`))
	call(t, "PUT", u+"/config/a", map[string]any{"compatibility": "FULL"})
	// id 4, then deleted for good: the next start must not give 4 again.
	call(t, "POST", u+"/subjects/gone/versions", schema(`"long"`))
	call(t, "DELETE", u+"/subjects/gone", nil)
	if a := call(t, "DELETE", u+"/subjects/gone?permanent=true", nil); a.status != 200 {
		t.Fatalf("hard delete: %s", a.body)
	}
	for _, p := range []string{"/subjects/a/versions/1", "/subjects/a/versions/2", "/subjects/b/versions/1", "/config/a", "/subjects"} {
		want = append(want, string(call(t, "GET", u+p, nil).body))
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = startOn(t, dir)
	defer b.Close()
	u = b.SchemaRegistryURL()
	for i, p := range []string{"/subjects/a/versions/1", "/subjects/a/versions/2", "/subjects/b/versions/1", "/config/a", "/subjects"} {
		if got := string(call(t, "GET", u+p, nil).body); got != want[i] {
			t.Errorf("after restart %s = %s, want %s", p, got, want[i])
		}
	}
	if a := call(t, "POST", u+"/subjects/c/versions", schema(`"double"`)); strings.TrimSpace(string(a.body)) != `{"id":5}` {
		t.Errorf("first ID after restart: %s, want 5 (4 was given before)", a.body)
	}
}

// TestTopicFormat: the _schemas topic is readable by any Kafka client and
// holds Confluent's records; records written by others (Confluent's
// DELETE_SUBJECT, a damaged one) are read at start, the damaged one
// reported and skipped.
func TestTopicFormat(t *testing.T) {
	var logs syncBuffer
	b, u := start(t, minikafka.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := minikafkatest.Client(t, b)
	// Before the registry's first request: as if another registry wrote
	// the topic.
	recs := []*kgo.Record{
		{Key: []byte(`{"keytype":"SCHEMA","subject":"t","version":1,"magic":1}`),
			Value: []byte(`{"subject":"t","version":1,"id":7,"schema":"\"string\"","deleted":false}`)},
		{Key: []byte(`{"keytype":"SCHEMA","subject":"t","version":2,"magic":1}`), Value: []byte(`{not json`)},
		{Key: []byte(`not a key`), Value: []byte(`{}`)},
		{Key: []byte(`{"keytype":"SCHEMA","subject":"u","version":1,"magic":1}`),
			Value: []byte(`{"subject":"u","version":1,"id":8,"schemaType":"JSON","schema":"{\"type\":\"string\"}","deleted":false}`)},
		{Key: []byte(`{"keytype":"DELETE_SUBJECT","subject":"u","magic":0}`), Value: []byte(`{"subject":"u","version":1}`)},
		{Key: []byte(`{"keytype":"CONFIG","subject":null,"magic":0}`), Value: []byte(`{"compatibilityLevel":"FULL_TRANSITIVE"}`)},
	}
	for _, r := range recs {
		r.Topic = "_schemas"
	}
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "_schemas"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if a := call(t, "GET", u+"/subjects/t/versions/1", nil); a.status != 200 || !strings.Contains(string(a.body), `"id":7`) {
		t.Fatalf("a record written by another registry: %d %s", a.status, a.body)
	}
	if n := strings.Count(logs.String(), "does not decode; skipped"); n != 2 {
		t.Errorf("%d damaged records reported, want 2; logs:\n%s", n, logs.String())
	}
	if a := call(t, "GET", u+"/subjects", nil); strings.TrimSpace(string(a.body)) != `["t"]` {
		t.Errorf("subjects (u was soft-deleted by DELETE_SUBJECT): %s", a.body)
	}
	if a := call(t, "GET", u+"/config", nil); !strings.Contains(string(a.body), "FULL_TRANSITIVE") {
		t.Errorf("config: %s", a.body)
	}
	if a := call(t, "POST", u+"/subjects/t/versions", schema(`"bytes"`)); strings.TrimSpace(string(a.body)) != `{"id":9}` {
		t.Errorf("register after foreign records: %s", a.body)
	}

	// Read the topic back as any consumer would.
	rd := minikafkatest.Client(t, b, kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var last *kgo.Record
	for n := 0; n < len(recs)+1; {
		fs := rd.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { n++; last = r })
	}
	if string(last.Key) != `{"keytype":"SCHEMA","subject":"t","version":2,"magic":1}` {
		t.Errorf("key = %s", last.Key)
	}
	var v map[string]any
	if err := json.Unmarshal(last.Value, &v); err != nil || v["id"] != 9.0 || v["schema"] != `"bytes"` || v["deleted"] != false {
		t.Errorf("value = %s (%v)", last.Value, err)
	}
}
