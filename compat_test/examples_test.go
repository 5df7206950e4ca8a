package compat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The examples for other languages (examples/python: a pytest fixture
// with confluent-kafka-python; examples/node: a kafkajs script) run
// against the binary here, so CI keeps them working.
func TestExamplesOtherLanguages(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "minikafka")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/minikafka").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "MINIKAFKA_BIN="+bin)
	t.Run("python", func(t *testing.T) {
		if err := exec.Command("/usr/bin/python3", "-c", "import pytest, confluent_kafka").Run(); err != nil {
			t.Fatalf("pytest or confluent-kafka missing (%v); %s", err, installHint)
		}
		cmd := exec.Command("/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "../examples/python")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pytest examples/python: %v\n%s", err, out)
		}
	})
	t.Run("node", func(t *testing.T) {
		node := lookPath(t, "node")
		cmd := exec.Command(node, "../examples/node/faults.js")
		abs, err := filepath.Abs("node_modules")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(env, "NODE_PATH="+abs)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("node examples/node/faults.js: %v\n%s; %s", err, out, installHint)
		}
	})
}
