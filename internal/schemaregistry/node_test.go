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
	mods := nodeModules(t, filepath.Join("@kafkajs", "confluent-schema-registry"))
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

// TestConfluentJSRegistry runs @confluentinc/schemaregistry, Confluent's
// JavaScript client with its Avro, JSON Schema and Protobuf serdes, with
// kafkajs carrying the bytes: testdata/confluent_schemaregistry.js, from
// compat_test/node_modules or MINIKAFKA_SR_NODE_PATH, as
// TestKafkaJSRegistry. Its Protobuf serializer registers the file as a
// base64 FileDescriptorProto and its deserializer asks for
// ?format=serialized.
func TestConfluentJSRegistry(t *testing.T) {
	mods := nodeModules(t, filepath.Join("@confluentinc", "schemaregistry"))
	b, u := start(t, minikafka.WithTopic("orders", 1), minikafka.WithTopic("orders-json", 1), minikafka.WithTopic("orders-proto", 1))
	cmd := exec.Command("node", "testdata/confluent_schemaregistry.js", u, b.Addr(), "orders")
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Logf("%s", stdout.String())
	var got struct {
		AvroV1         int      `json:"avro_v1"`
		AvroV1Again    int      `json:"avro_v1_again"`
		AvroV2         int      `json:"avro_v2"`
		AvroCompatible bool     `json:"avro_compatible"`
		AvroBad        []int    `json:"avro_bad"`
		AvroVersions   []int    `json:"avro_versions"`
		JSONID         int      `json:"json_id"`
		JSONInvalid    string   `json:"json_invalid"`
		ProtoID        int      `json:"proto_id"`
		ProtoSubjects  []string `json:"proto_subjects"`
		Avro, JSON     []map[string]any
		Proto          []map[string]any
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	switch {
	case got.AvroV1 != 1 || got.AvroV1Again != 1 || got.AvroV2 != 2 || !got.AvroCompatible || len(got.AvroVersions) != 2:
		t.Errorf("avro: %+v", got)
	case len(got.AvroBad) != 2 || got.AvroBad[0] != 409:
		t.Errorf("incompatible avro: %v", got.AvroBad)
	case got.JSONInvalid != "SerializationError":
		t.Errorf("a record the JSON schema refuses was serialized: %q", got.JSONInvalid)
	case got.JSONID != 3 || got.ProtoID != 4 || len(got.ProtoSubjects) != 1 || got.ProtoSubjects[0] != "orders-proto-value":
		t.Errorf("ids: %+v", got)
	case len(got.Avro) != 2 || got.Avro[0]["id"] != "o-1" || got.Avro[1]["note"] != "gift" || got.Avro[1]["qty"] != 5.0:
		t.Errorf("avro consumed: %v", got.Avro)
	case len(got.JSON) != 1 || got.JSON[0]["sku"] != "A-1" || got.JSON[0]["price"] != 9.5:
		t.Errorf("json consumed: %v", got.JSON)
	case len(got.Proto) != 1 || got.Proto[0]["sku"] != "B-2" || got.Proto[0]["count"] != 4.0:
		t.Errorf("protobuf consumed: %v", got.Proto)
	}
}

// nodeModules is MINIKAFKA_SR_NODE_PATH or compat_test/node_modules; the
// test fails without pkg in it.
func nodeModules(t *testing.T, pkg string) string {
	t.Helper()
	mods := os.Getenv("MINIKAFKA_SR_NODE_PATH")
	if mods == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", "compat_test", "node_modules"))
		if err != nil {
			t.Fatal(err)
		}
		mods = abs
	}
	if _, err := os.Stat(filepath.Join(mods, pkg)); err != nil {
		t.Fatalf("no %s in %s (%v); run: bash compat_test/install.sh", pkg, mods, err)
	}
	return mods
}
