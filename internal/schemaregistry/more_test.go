package schemaregistry_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

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

// TestProtobufSerialized: a Protobuf schema registered as a base64
// FileDescriptorProto (what Confluent's JavaScript and Python serializers
// send) parses and is checked as the .proto text is, and ?format=serialized
// answers a text-registered schema as a FileDescriptorProto.
func TestProtobufSerialized(t *testing.T) {
	_, u := start(t)
	text := "syntax = \"proto3\";\npackage shop;\nmessage Item { string sku = 1; int32 count = 2; }\n"
	if a := call(t, "POST", u+"/subjects/text/versions", schema(text, "PROTOBUF")); a.status != 200 {
		t.Fatalf("register: %d %s", a.status, a.body)
	}
	for _, path := range []string{"/schemas/ids/1?format=serialized", "/subjects/text/versions/1?format=serialized"} {
		var got struct{ Schema string }
		call(t, "GET", u+path, nil).decode(t, &got)
		raw, err := base64.StdEncoding.DecodeString(got.Schema)
		if err != nil {
			t.Fatalf("%s: not base64: %q", path, got.Schema)
		}
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw, fdp); err != nil || fdp.GetPackage() != "shop" || len(fdp.MessageType) != 1 || fdp.MessageType[0].GetName() != "Item" {
			t.Errorf("%s: %v %v", path, err, fdp)
		}
	}
	if a := call(t, "GET", u+"/schemas/ids/1", nil); !strings.Contains(string(a.body), "message Item") {
		t.Errorf("without format: %s", a.body)
	}

	// The descriptor form registers, and its compatibility is checked.
	desc := func(fieldType descriptorpb.FieldDescriptorProto_Type) string {
		fdp := &descriptorpb.FileDescriptorProto{Name: proto.String("item.proto"), Package: proto.String("shop"), Syntax: proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Item"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("sku"), Number: proto.Int32(1), Type: fieldType.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
			}}}}
		raw, err := proto.Marshal(fdp)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(raw)
	}
	if a := call(t, "POST", u+"/subjects/desc/versions", schema(desc(descriptorpb.FieldDescriptorProto_TYPE_STRING), "PROTOBUF")); a.status != 200 {
		t.Fatalf("register a descriptor: %d %s", a.status, a.body)
	}
	if a := call(t, "POST", u+"/subjects/desc/versions", schema(desc(descriptorpb.FieldDescriptorProto_TYPE_DOUBLE), "PROTOBUF")); a.status != 409 {
		t.Errorf("string became double: %d %s", a.status, a.body)
	}
	if a := call(t, "POST", u+"/subjects/desc/versions", schema("bm90IGEgZGVzY3JpcHRvcg==", "PROTOBUF")); a.status != 422 || a.code() != 42201 {
		t.Errorf("base64 that is no descriptor: %d %s", a.status, a.body)
	}
}
