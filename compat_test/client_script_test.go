package compat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Python and Node clients run as subprocesses: `<interpreter> <script>
// <op> <bootstrap> <topic>` with the op's parameters as JSON on stdin; the
// script prints one JSON answer on stdout, or exits non-zero with the
// client's error on stderr.
func init() {
	clients = append(clients,
		clientCase{"confluent-kafka-python", func(t *testing.T, addrs []string) (client, caps) {
			c := newScriptClient(t, addrs, "/usr/bin/python3", "confluent_client.py")
			return c, caps{
				// confluent-kafka-python 1.7 has no delete_records (added in 2.4).
				codecs: allCodecs, timestamps: true, idempotent: true, nonIdempotent: true,
				consumeNoGroup: true, reportsOffsets: true, groups: true, txn: true,
				admin: c, adminOps: []string{"topics", "partitions", "configs", "groups"},
				version: c.version(t),
			}
		}},
		clientCase{"kafka-python", func(t *testing.T, addrs []string) (client, caps) {
			c := newScriptClient(t, addrs, "/usr/bin/python3", "kafkapython_client.py")
			return c, caps{
				// kafka-python 2.0 has neither an idempotent producer nor delete_records.
				codecs: allCodecs, timestamps: true, idempotent: false, nonIdempotent: true,
				consumeNoGroup: true, reportsOffsets: true, groups: true,
				admin: c, adminOps: []string{"topics", "partitions", "configs", "groups"},
				version: c.version(t),
			}
		}},
		clientCase{"kafkajs", func(t *testing.T, addrs []string) (client, caps) {
			c := newScriptClient(t, addrs, "node", "kafkajs_client.js")
			return c, caps{
				// kafkajs consumes only as a group member: its consume runs
				// in the group scenarios; its produce is read back by kgo.
				codecs: allCodecs, timestamps: true, idempotent: true, nonIdempotent: true,
				consumeNoGroup: false, reportsOffsets: true, timeAfterAllIsEnd: true, groups: true, txn: true,
				admin: c, adminOps: []string{"topics", "partitions", "configs", "delete-records", "groups"},
				version: c.version(t),
			}
		}},
	)
}

type scriptClient struct {
	addrs  []string
	interp string
	script string
}

func newScriptClient(t *testing.T, addrs []string, interp, script string) *scriptClient {
	t.Helper()
	interp = lookPath(t, interp)
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	c := &scriptClient{addrs: addrs, interp: interp, script: abs}
	// "check" imports the client library: a missing package fails here,
	// naming the install command.
	if err := c.call(t, "check", "", nil, nil); err != nil {
		t.Fatalf("%s cannot load its Kafka client: %v; %s", script, err, installHint)
	}
	return c
}

func (c *scriptClient) call(t *testing.T, op, topic string, in, out any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.interp, c.script, op, strings.Join(c.addrs, ","), topic)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	if err != nil {
		return fmt.Errorf("%s %s (%v): %v: %s", filepath.Base(c.script), op, time.Since(start).Round(time.Millisecond), err, lastLines(stderr.String(), 15))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("%s %s: bad JSON answer %q: %v (stderr: %s)", filepath.Base(c.script), op, stdout.String(), err, lastLines(stderr.String(), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

func (c *scriptClient) version(t *testing.T) string {
	var v struct{ Version string }
	if err := c.call(t, "version", "", nil, &v); err != nil {
		t.Fatalf("%v; %s", err, installHint)
	}
	return v.Version
}

func (c *scriptClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	var out struct{ Records []rec }
	err := c.call(t, "produce", topic, map[string]any{"records": recs, "codec": o.Codec, "idempotent": o.Idempotent}, &out)
	return out.Records, err
}

func (c *scriptClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	var out struct{ Records []rec }
	err := c.call(t, "consume", topic, map[string]any{"partitions": parts, "count": want}, &out)
	return out.Records, err
}

func (c *scriptClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	var out struct{ Offset int64 }
	err := c.call(t, "list_offset", topic, map[string]any{"partition": part, "spec": spec}, &out)
	return out.Offset, err
}

func (c *scriptClient) createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error {
	return c.call(t, "create_topic", topic, map[string]any{"partitions": parts, "configs": configs}, nil)
}

func (c *scriptClient) deleteTopic(t *testing.T, topic string) error {
	return c.call(t, "delete_topic", topic, nil, nil)
}

func (c *scriptClient) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	var out struct{ Topics map[string]int32 }
	err := c.call(t, "metadata", "", map[string]any{"topics": topics}, &out)
	return out.Topics, err
}

func (c *scriptClient) createPartitions(t *testing.T, topic string, total int32) error {
	return c.call(t, "create_partitions", topic, map[string]any{"total": total}, nil)
}

func (c *scriptClient) describeConfig(t *testing.T, topic, key string) (string, error) {
	var out struct{ Value *string }
	if err := c.call(t, "describe_config", topic, map[string]any{"key": key}, &out); err != nil {
		return "", err
	}
	if out.Value == nil {
		return "", fmt.Errorf("config %s not described", key)
	}
	return *out.Value, nil
}

func (c *scriptClient) alterConfig(t *testing.T, topic, key, value string) error {
	return c.call(t, "alter_config", topic, map[string]any{"key": key, "value": value}, nil)
}

func (c *scriptClient) deleteRecords(t *testing.T, topic string, part int32, before int64) (int64, error) {
	var out struct{ Low int64 }
	err := c.call(t, "delete_records", topic, map[string]any{"partition": part, "before": before}, &out)
	return out.Low, err
}

func (c *scriptClient) listGroups(t *testing.T) ([]string, error) {
	var out struct{ Groups []string }
	err := c.call(t, "list_groups", "", nil, &out)
	return out.Groups, err
}

func (c *scriptClient) describeGroup(t *testing.T, group string) (string, error) {
	var out struct{ State string }
	err := c.call(t, "describe_group", "", map[string]any{"group": group}, &out)
	return out.State, err
}

// groupConsume joins group, reads until count records arrived, commits and
// leaves (the group scenarios).
func (c *scriptClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	var out struct{ Records []rec }
	err := c.call(t, "group_consume", topic, map[string]any{"group": group, "count": count}, &out)
	return out.Records, err
}
