package schemaregistry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// TestCrash: every registration acknowledged before a power cut is there
// after it, with its ID and version, and no ID is given twice.
func TestCrash(t *testing.T) {
	c := minikafkatest.NewCrashable(t, minikafka.WithSchemaRegistry("127.0.0.1:0"))
	u := c.SchemaRegistryURL()
	want := map[string]string{}
	for i := range 20 {
		a := call(t, "POST", fmt.Sprintf("%s/subjects/s-%d/versions", u, i%4), schema(fmt.Sprintf(`{"type":"record","name":"R","fields":[{"name":"f%d","type":"int","default":0}]}`, i)))
		if a.status != 200 {
			t.Fatalf("register %d: %s", i, a.body)
		}
		want[fmt.Sprintf("s-%d/%d", i%4, i/4+1)] = strings.TrimSpace(string(a.body))
	}
	c.Crash()
	u = c.SchemaRegistryURL()
	for sv, id := range want {
		s, v, _ := strings.Cut(sv, "/")
		a := call(t, "GET", fmt.Sprintf("%s/subjects/%s/versions/%s", u, s, v), nil)
		if a.status != 200 || !strings.Contains(string(a.body), strings.Trim(id, "{}")) {
			t.Errorf("%s after the crash: %d %s, want %s", sv, a.status, a.body, id)
		}
	}
	if a := call(t, "POST", u+"/subjects/new/versions", schema(`"string"`)); strings.TrimSpace(string(a.body)) != `{"id":21}` {
		t.Errorf("first registration after the crash: %s, want id 21", a.body)
	}
}

// TestReferences: Protobuf imports and JSON Schema $refs resolved through
// references, and normalize.
func TestReferences(t *testing.T) {
	_, u := start(t)
	must := func(a answer) string {
		t.Helper()
		if a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
		return strings.TrimSpace(string(a.body))
	}
	must(call(t, "POST", u+"/subjects/common.proto/versions", schema("syntax = \"proto3\";\npackage c;\nmessage Money { int64 cents = 1; }\n", "PROTOBUF")))
	order := map[string]any{
		"schemaType": "PROTOBUF",
		"schema":     "syntax = \"proto3\";\npackage o;\nimport \"common.proto\";\nimport \"google/protobuf/timestamp.proto\";\nmessage Order { c.Money total = 1; google.protobuf.Timestamp at = 2; }\n",
		"references": []map[string]any{{"name": "common.proto", "subject": "common.proto", "version": 1}},
	}
	must(call(t, "POST", u+"/subjects/orders-value/versions", order))
	delete(order, "references")
	if a := call(t, "POST", u+"/subjects/orders2-value/versions", order); a.code() != 42201 {
		t.Errorf("an import without its reference: %s", a.body)
	}

	must(call(t, "POST", u+"/subjects/addr/versions", schema(`{"type":"object","properties":{"city":{"type":"string"}}}`, "JSON")))
	person := map[string]any{
		"schemaType": "JSON",
		"schema":     `{"type":"object","properties":{"home":{"$ref":"addr.json"}}}`,
		"references": []map[string]any{{"name": "addr.json", "subject": "addr", "version": 1}},
	}
	must(call(t, "POST", u+"/subjects/person/versions", person))

	// normalize: key order and whitespace do not make another schema.
	id := must(call(t, "POST", u+"/subjects/n/versions?normalize=true", schema(`{"type": "record", "name": "N", "fields": [{"name": "a", "type": "int"}]}`)))
	if again := must(call(t, "POST", u+"/subjects/n/versions?normalize=true", schema(`{"fields":[{"type":"int","name":"a"}],"name":"N","type":"record"}`))); again != id {
		t.Errorf("normalized registration: %s then %s", id, again)
	}
	if got := must(call(t, "POST", u+"/subjects/n?normalize=true", schema(`{"name":"N","type":"record","fields":[{"name":"a","type":"int"}]}`))); !strings.Contains(got, `"version":1`) {
		t.Errorf("normalized lookup: %s", got)
	}
}

// TestReferenceCycle: a cycle of references in a topic written by others
// is refused when a schema leads into it, not followed forever.
func TestReferenceCycle(t *testing.T) {
	b, u := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := minikafkatest.Client(t, b)
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "_schemas"); err != nil {
		t.Fatal(err)
	}
	rec := func(subject, ref string, id int) *kgo.Record {
		return &kgo.Record{Topic: "_schemas",
			Key: fmt.Appendf(nil, `{"keytype":"SCHEMA","subject":%q,"version":1,"magic":1}`, subject),
			Value: fmt.Appendf(nil, `{"subject":%q,"version":1,"id":%d,"schema":"{\"type\":\"record\",\"name\":\"%s\",\"fields\":[]}","references":[{"name":"x","subject":%q,"version":1}],"deleted":false}`,
				subject, id, strings.ToUpper(subject), ref)}
	}
	if err := cl.ProduceSync(ctx, rec("a", "b", 1), rec("b", "a", 2)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	a := call(t, "POST", u+"/subjects/c/versions", map[string]any{"schema": `"int"`,
		"references": []map[string]any{{"name": "A", "subject": "a", "version": 1}}})
	if a.code() != 42201 || !strings.Contains(string(a.body), "cycle") {
		t.Errorf("a reference into a cycle: %d %s", a.status, a.body)
	}
}
