package broker

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dynConfigPy is what librdkafka's 0081_admin does with a broker config,
// through confluent-kafka-python (librdkafka): set a per-broker dynamic key,
// have a static one refused, and read the source back.
const dynConfigPy = `
import json, sys
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
a = AdminClient({"bootstrap.servers": sys.argv[1]})
out = {}
def alter(cfg):
    r = ConfigResource(ConfigResource.Type.BROKER, "1", set_config=cfg)
    try:
        for _, f in a.alter_configs([r]).items():
            f.result(timeout=20)
        return "ok"
    except Exception as e:
        return str(e)
out["dynamic"] = alter({"sasl.kerberos.min.time.before.relogin": "58000"})
out["static"] = alter({"log.dirs": "/elsewhere"})
for _, f in a.describe_configs([ConfigResource(ConfigResource.Type.BROKER, "1")]).items():
    e = f.result(timeout=20)["sasl.kerberos.min.time.before.relogin"]
    out["value"], out["source"], out["read_only"] = e.value, ConfigSource(e.source).name, e.is_read_only
print(json.dumps(out))
`

func TestDynamicBrokerConfigsLibrdkafkaPython(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c", dynConfigPy, addr)
	outb, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("confluent-kafka-python (run: bash compat_test/install.sh): %v\n%s", err, stderr)
	}
	var out struct {
		Dynamic, Static, Value, Source string
		ReadOnly                       bool `json:"read_only"`
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	if out.Dynamic != "ok" || out.Value != "58000" || out.Source != "DYNAMIC_BROKER_CONFIG" || out.ReadOnly {
		t.Fatalf("dynamic key: %+v", out)
	}
	if !strings.Contains(out.Static, "Cannot update these configs dynamically: Set(log.dirs)") {
		t.Fatalf("static key: %q", out.Static)
	}
}
