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

// TestConfluentPython runs confluent-kafka-python 2.x (its
// SchemaRegistryClient and its Avro, Protobuf and JSON Schema serdes,
// with librdkafka underneath)
// against the registry and the broker: testdata/confluent_python.py. It
// needs an interpreter with confluent-kafka[avro,json,protobuf,schemaregistry] 2.x,
// the venv compat_test/install.sh makes (~/.cache/minikafka/srvenv), or
// the interpreter MINIKAFKA_SR_PYTHON names. Without it the test fails:
// as every client test here, it is never skipped.
func TestConfluentPython(t *testing.T) {
	py := os.Getenv("MINIKAFKA_SR_PYTHON")
	if py == "" {
		home, _ := os.UserHomeDir()
		py = filepath.Join(home, ".cache", "minikafka", "srvenv", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("no Python with confluent-kafka 2.x and its schema registry extras at %s (%v); run: bash compat_test/install.sh", py, err)
	}
	b, u := start(t, minikafka.WithTopic("payments", 1), minikafka.WithTopic("payments-proto", 1), minikafka.WithTopic("payments-json", 1))
	cmd := exec.Command(py, "testdata/confluent_python.py", u, b.Addr(), "payments")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got struct {
		ID1, ID2       int
		ID1Again       bool  `json:"id1_again"`
		CompatibleV2   bool  `json:"compatible_v2"`
		CompatibleBad  bool  `json:"compatible_bad"`
		BadError       []int `json:"bad_error"`
		Latest         []int `json:"latest"`
		Versions       []int `json:"versions"`
		LookupVersion  int   `json:"lookup_version"`
		MissingVersion []int `json:"missing_version"`
		Consumed       []map[string]any
		ProtoID        int     `json:"proto_id"`
		JSONID         int     `json:"json_id"`
		JSONBad        *string `json:"json_bad"`
		Proto          map[string]any
		JSON           map[string]any
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	t.Logf("%s", stdout.String())
	switch {
	case got.ID1 != 1 || !got.ID1Again || got.ID2 != 2:
		t.Errorf("ids: %+v", got)
	case !got.CompatibleV2 || got.CompatibleBad:
		t.Errorf("compatibility: %+v", got)
	case len(got.BadError) != 2 || got.BadError[0] != 409 || got.BadError[1] != 409:
		t.Errorf("incompatible registration: %v", got.BadError)
	case len(got.Latest) != 2 || got.Latest[0] != 2 || got.Latest[1] != 2 || len(got.Versions) != 2 || got.LookupVersion != 1:
		t.Errorf("versions: %+v", got)
	case len(got.MissingVersion) != 2 || got.MissingVersion[0] != 404 || got.MissingVersion[1] != 40402:
		t.Errorf("missing version: %v", got.MissingVersion)
	case len(got.Consumed) != 2 || got.Consumed[1]["currency"] != "USD" || got.Consumed[0]["amount"] != 12.5:
		t.Errorf("consumed: %v", got.Consumed)
	case got.ProtoID != 3 || got.JSONID != 4:
		t.Errorf("protobuf and JSON ids: %d %d", got.ProtoID, got.JSONID)
	case got.JSONBad == nil || !strings.Contains(*got.JSONBad, "409"):
		t.Errorf("incompatible JSON schema: %v", got.JSONBad)
	case got.Proto["code"] != "T-9" || got.Proto["seats"] != 2.0:
		t.Errorf("protobuf consumed: %v", got.Proto)
	case got.JSON["name"] != "ada" || got.JSON["age"] != 36.0:
		t.Errorf("JSON consumed: %v", got.JSON)
	}
}
