package schemaregistry_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
)

// TestKafkaJSRegistry runs @kafkajs/confluent-schema-registry with
// kafkajs against the registry and the broker:
// testdata/kafkajs_registry.js, both from compat_test/node_modules
// (compat_test/install.sh installs them) or the node_modules directory
// MINIKAFKA_SR_NODE_PATH names. Without them the test fails: as every
// client test here, it is never skipped.
func TestKafkaJSRegistry(t *testing.T) {
	mods := os.Getenv("MINIKAFKA_SR_NODE_PATH")
	if mods == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", "compat_test", "node_modules"))
		if err != nil {
			t.Fatal(err)
		}
		mods = abs
	}
	if _, err := os.Stat(filepath.Join(mods, "@kafkajs", "confluent-schema-registry")); err != nil {
		t.Fatalf("no @kafkajs/confluent-schema-registry in %s (%v); run: bash compat_test/install.sh", mods, err)
	}
	b, u := start(t, minikafka.WithTopic("events", 1))
	cmd := exec.Command("node", "testdata/kafkajs_registry.js", u, b.Addr(), "events")
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Logf("%s", stdout.String())
	var got struct {
		ID, Again, Latest int
		Bad               string
		JSONID            int `json:"json_id"`
		Consumed          []map[string]any
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	switch {
	case got.ID != 1 || got.Again != 1 || got.Latest != 1 || got.JSONID != 2:
		t.Errorf("ids: %+v", got)
	case !strings.Contains(got.Bad, "incompatible"):
		t.Errorf("incompatible registration: %q", got.Bad)
	case len(got.Consumed) != 3 || got.Consumed[0]["kind"] != "click" || got.Consumed[1]["n"] != 2.0 || got.Consumed[2]["a"] != 7.0:
		t.Errorf("consumed: %v", got.Consumed)
	}
}
