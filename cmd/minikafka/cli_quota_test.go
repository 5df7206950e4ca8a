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

// TestCLIQuotaGolden: quota alter and describe, table and -o json, and the
// errors, against testdata/cli/quota-*.golden (-update rewrites them).
func TestCLIQuotaGolden(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	addr := b.Addrs()[0]
	steps := []struct {
		name string
		args []string
	}{
		{"quota-alter-user", []string{"quota", "alter", "-user", "alice", "-set", "producer_byte_rate=1048576", "-set", "consumer_byte_rate=2097152"}},
		{"quota-alter-default-client", []string{"quota", "alter", "-user", "alice", "-client", "<default>", "-set", "request_percentage=25.5"}},
		{"quota-alter-default-user", []string{"quota", "alter", "-user", "<default>", "-set", "controller_mutation_rate=10", "-o", "json"}},
		{"quota-alter-validate", []string{"quota", "alter", "-client", "app", "-set", "producer_byte_rate=10", "-validate"}},
		{"quota-describe", []string{"quota", "describe"}},
		{"quota-describe-user", []string{"quota", "describe", "-user", "alice", "-o", "json"}},
		{"quota-describe-strict", []string{"quota", "describe", "-user", "alice", "-strict"}},
		{"quota-alter-delete", []string{"quota", "alter", "-user", "alice", "-delete", "consumer_byte_rate"}},
		{"quota-describe-after-delete", []string{"quota", "describe", "-user", "alice", "-strict"}},
		{"quota-err-unknown-key", []string{"quota", "alter", "-user", "bob", "-set", "bogus=1"}},
		{"quota-err-fraction", []string{"quota", "alter", "-user", "bob", "-set", "producer_byte_rate=1.5"}},
		{"quota-err-no-entity", []string{"quota", "alter", "-set", "producer_byte_rate=1"}},
		{"quota-err-bad-value", []string{"quota", "alter", "-user", "bob", "-set", "producer_byte_rate=fast"}},
	}
	for _, s := range steps {
		stdout, stderr, code := cliRun(t, addr, "", s.args...)
		shown := make([]string, len(s.args))
		for i, a := range s.args {
			shown[i] = a
			if strings.ContainsAny(a, " <>") {
				shown[i] = "'" + a + "'"
			}
		}
		got := fmt.Sprintf("$ minikafka %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(shown, " "), code, stdout, stderr)
		got = strings.ReplaceAll(got, addr, "BROKER")
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
