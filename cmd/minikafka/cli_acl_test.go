package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
)

// TestCLIACLGolden: acl create, list and delete against a broker with the
// authorizer on (SASL PLAIN, admin the super user), table and -o json; the
// broker's per-ACL refusals, an unauthorized user and a broker without an
// authorizer, against testdata/cli/acl-*.golden (-update rewrites them).
func TestCLIACLGolden(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSASL(map[string]string{"admin": "admin-pw", "bob": "bob-pw"}, "PLAIN"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	off, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { off.Close() })
	addr, offAddr := b.Addrs()[0], off.Addrs()[0]
	admin := []string{"-sasl-mechanism", "PLAIN", "-sasl-user", "admin"}
	steps := []struct {
		name string
		args []string
	}{
		{"acl-create", append([]string{"acl", "create", "-allow-principal", "User:alice", "-allow-principal", "User:bob",
			"-operation", "read", "-operation", "Describe", "-topic", "orders", "-group", "billing"}, admin...)},
		{"acl-create-prefixed-deny", append([]string{"acl", "create", "-deny-principal", "User:mallory", "-deny-host", "10.0.0.1",
			"-topic", "ord", "-resource-pattern-type", "prefixed", "-o", "json"}, admin...)},
		{"acl-create-cluster-txn", append([]string{"acl", "create", "-allow-principal", "User:*", "-allow-host", "192.0.2.7",
			"-operation", "IDEMPOTENT_WRITE", "-cluster", "-operation", "write", "-transactional-id", "tx-1"}, admin...)},
		{"acl-err-invalid-operation", append([]string{"acl", "create", "-allow-principal", "User:alice", "-operation", "Write",
			"-group", "billing", "-topic", "orders"}, admin...)},
		{"acl-err-invalid-principal", append([]string{"acl", "create", "-allow-principal", "alice", "-topic", "orders"}, admin...)},
		{"acl-err-no-principal", append([]string{"acl", "create", "-topic", "orders"}, admin...)},
		{"acl-err-no-resource", append([]string{"acl", "create", "-allow-principal", "User:alice"}, admin...)},
		{"acl-err-create-pattern", append([]string{"acl", "create", "-allow-principal", "User:alice", "-topic", "orders",
			"-resource-pattern-type", "match"}, admin...)},
		{"acl-err-unknown-operation", append([]string{"acl", "create", "-allow-principal", "User:alice", "-topic", "orders",
			"-operation", "Fly"}, admin...)},
		{"acl-err-host-without-principal", append([]string{"acl", "create", "-allow-principal", "User:alice", "-deny-host", "10.0.0.1",
			"-topic", "orders"}, admin...)},
		{"acl-list", append([]string{"acl", "list"}, admin...)},
		{"acl-list-json", append([]string{"acl", "list", "-cluster", "-o", "json"}, admin...)},
		{"acl-list-match", append([]string{"acl", "list", "-topic", "orders", "-resource-pattern-type", "match"}, admin...)},
		{"acl-list-literal", append([]string{"acl", "list", "-topic", "orders", "-resource-pattern-type", "literal"}, admin...)},
		{"acl-list-principal", append([]string{"acl", "list", "-principal", "User:bob"}, admin...)},
		{"acl-delete", append([]string{"acl", "delete", "-topic", "orders", "-allow-principal", "User:bob"}, admin...)},
		{"acl-delete-operation", append([]string{"acl", "delete", "-group", "billing", "-operation", "describe", "-o", "json"}, admin...)},
		{"acl-delete-nothing", append([]string{"acl", "delete", "-topic", "nothing"}, admin...)},
		{"acl-err-delete-no-resource", append([]string{"acl", "delete", "-allow-principal", "User:alice"}, admin...)},
		{"acl-list-after-delete", append([]string{"acl", "list"}, admin...)},
		{"acl-err-not-authorized-list", []string{"acl", "list", "-sasl-mechanism", "PLAIN", "-sasl-user", "bob", "-sasl-password", "bob-pw"}},
		{"acl-err-not-authorized-create", []string{"acl", "create", "-allow-principal", "User:bob", "-topic", "orders",
			"-sasl-mechanism", "PLAIN", "-sasl-user", "bob", "-sasl-password", "bob-pw"}},
		{"acl-err-not-authorized-delete", []string{"acl", "delete", "-topic", "orders",
			"-sasl-mechanism", "PLAIN", "-sasl-user", "bob", "-sasl-password", "bob-pw"}},
		{"acl-err-disabled-create", []string{"acl", "create", "-b", offAddr, "-allow-principal", "User:alice", "-topic", "orders"}},
		{"acl-err-disabled-list", []string{"acl", "list", "-b", offAddr}},
		{"acl-err-disabled-delete", []string{"acl", "delete", "-b", offAddr, "-topic", "orders"}},
	}
	for _, s := range steps {
		var stdout, stderr bytes.Buffer
		env := cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, lookupEnv: func(k string) (string, bool) {
			switch k {
			case "MINIKAFKA_BROKERS":
				return addr, true
			case "MINIKAFKA_SASL_PASSWORD":
				return "admin-pw", true
			}
			return "", false
		}}
		code := runCLI(context.Background(), s.args, env)
		shown := make([]string, len(s.args))
		for i, a := range s.args {
			shown[i] = a
			if strings.ContainsAny(a, " *<>") {
				shown[i] = "'" + a + "'"
			}
		}
		got := fmt.Sprintf("$ minikafka %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(shown, " "), code, stdout.String(), stderr.String())
		got = strings.NewReplacer(addr, "BROKER", offAddr, "BROKER-WITHOUT-AUTHORIZER").Replace(got)
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
