package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// TestCLISchemaGolden: schema register, list, get, check and delete
// against the broker's registry, table and -o json, and the errors,
// against testdata/cli/schema-*.golden (-update rewrites them).
func TestCLISchemaGolden(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSchemaRegistry("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	u := b.SchemaRegistryURL()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1 := write("v1.avsc", `{"type":"record","name":"User","fields":[{"name":"name","type":"string"}]}`)
	v2text := `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}`
	v2 := write("v2.avsc", v2text)
	bad := write("bad.avsc", `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"email","type":"string"}]}`)
	proto := write("m.proto", "syntax = \"proto3\";\nmessage M { int32 a = 1; }\n")
	steps := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"schema-register", "", []string{"schema", "register", "users-value", "-schema", v1}},
		{"schema-register-again", "", []string{"schema", "register", "users-value", "-schema", v1, "-o", "json"}},
		{"schema-register-stdin", v2text, []string{"schema", "register", "users-value", "-schema", "-"}},
		{"schema-register-protobuf", "", []string{"schema", "register", "m-value", "-schema", proto, "-type", "protobuf"}},
		{"schema-check-ok", "", []string{"schema", "check", "users-value", "-schema", v2}},
		{"schema-check-incompatible", "", []string{"schema", "check", "users-value", "-schema", bad}},
		{"schema-register-incompatible", "", []string{"schema", "register", "users-value", "-schema", bad}},
		{"schema-list", "", []string{"schema", "list"}},
		{"schema-list-json", "", []string{"schema", "list", "users-value", "-o", "json"}},
		{"schema-get", "", []string{"schema", "get", "users-value", "-version", "1"}},
		{"schema-get-id", "", []string{"schema", "get", "-id", "3", "-o", "json"}},
		{"schema-delete-version", "", []string{"schema", "delete", "users-value", "-version", "2"}},
		{"schema-delete-permanent-first", "", []string{"schema", "delete", "m-value", "-permanent"}},
		{"schema-delete", "", []string{"schema", "delete", "m-value"}},
		{"schema-delete-permanent", "", []string{"schema", "delete", "m-value", "-permanent", "-o", "json"}},
		{"schema-err-unknown-subject", "", []string{"schema", "get", "nope"}},
		{"schema-err-type", "", []string{"schema", "register", "x", "-schema", v1, "-type", "xml"}},
		{"schema-err-kafka-flag", "", []string{"schema", "list", "-b", "localhost:9092"}},
	}
	for _, s := range steps {
		args := append(append([]string{}, s.args...), "-registry", u)
		stdout, stderr, code := cliRun(t, b.Addr(), s.stdin, args...)
		got := fmt.Sprintf("$ minikafka %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(s.args, " "), code, stdout, stderr)
		got = strings.ReplaceAll(got, dir, "DIR")
		got = strings.ReplaceAll(got, u, "REGISTRY")
		path := filepath.Join("testdata", "cli", s.name+".golden")
		if *updateGolden {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update to create it)", s.name, err)
		}
		if got != string(want) {
			t.Errorf("%s: output differs from %s\n--- got\n%s--- want\n%s", s.name, path, got, want)
		}
	}
}

// TestCLIConsumeRegistry: consume -registry prints registry-framed values
// decoded (Avro here, Protobuf through a reference), others as they are.
func TestCLIConsumeRegistry(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSchemaRegistry("127.0.0.1:0"), minikafka.WithTopic("t", 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	u := b.SchemaRegistryURL()
	post := func(subject, body string) {
		resp, err := http.Post(u+"/subjects/"+subject+"/versions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("register %s: %d", subject, resp.StatusCode)
		}
	}
	post("t-value", `{"schema":"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"string\"}]}"}`)                                                                                            // id 1
	post("money", `{"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";\npackage m;\nmessage Money { int64 cents = 1; }\n"}`)                                                                                      // id 2
	post("t-proto", `{"schemaType":"PROTOBUF","schema":"syntax = \"proto3\";\nimport \"money.proto\";\nmessage Order { m.Money total = 1; }\n","references":[{"name":"money.proto","subject":"money","version":1}]}`) // id 3
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	frame := func(id byte, data ...byte) []byte { return append([]byte{0, 0, 0, 0, id}, data...) }
	recs := []*kgo.Record{
		{Value: frame(1, 6, 'h', 'e', 'y')},          // Avro: string "hey" (zigzag length 3)
		{Value: []byte("plain text")},                // not framed
		{Value: frame(3, 0, 0x0a, 0x02, 0x08, 0x2a)}, // Protobuf Order{total: {cents: 42}}, first message
		{Value: frame(9, 1, 2, 3)},                   // an ID the registry lacks: as it is
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cliRun(t, b.Addr(), "", "consume", "t", "-n", "4", "-registry", u)
	want := "{\"a\":\"hey\"}\nplain text\n{\"total\":{\"cents\":\"42\"}}\n\x00\x00\x00\x00\t\x01\x02\x03\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %s", code, stdout, want, stderr)
	}
	// A framed value that does not decode is an error naming the record.
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: frame(1, 0x7f)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = cliRun(t, b.Addr(), "", "consume", "t", "-offset", "4", "-n", "1", "-registry", u)
	if code != 1 || !strings.Contains(stderr, "t/0 offset 4: decoding the value") {
		t.Errorf("undecodable record: exit %d, %s", code, stderr)
	}
}
