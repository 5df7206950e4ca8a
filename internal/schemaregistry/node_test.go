package schemaregistry_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
)

// TestKafkaJSRegistry runs @kafkajs/confluent-schema-registry with
// kafkajs against the registry and the broker:
// testdata/kafkajs_registry.js. MINIKAFKA_SR_NODE_PATH names a
// node_modules directory holding both (e.g. npm install
// @kafkajs/confluent-schema-registry@3 kafkajs@2 in /tmp/srnode, then
// MINIKAFKA_SR_NODE_PATH=/tmp/srnode/node_modules).
func TestKafkaJSRegistry(t *testing.T) {
	mods := os.Getenv("MINIKAFKA_SR_NODE_PATH")
	if mods == "" {
		t.Skip("MINIKAFKA_SR_NODE_PATH is not set (node_modules with @kafkajs/confluent-schema-registry and kafkajs)")
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
