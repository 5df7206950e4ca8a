package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
