package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// seed, inspect and wait end to end against the binary, through its
// control API, with the caller's mistakes answered by a clear message and
// a non-zero exit.
func TestInspectSeedWaitCLIBinary(t *testing.T) {
	p, admin := serveAdmin(t)
	run := func(args ...string) (string, string, int) {
		return cliRun(t, p.addr, "", append(args, "-admin-addr", admin)...)
	}
	must := func(want string, args ...string) string {
		t.Helper()
		out, errOut, code := run(args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("%v: exit %d, out %q, err %q; want %q", args, code, out, errOut, want)
		}
		return out
	}
	must("true", "seed", "topic", "seeded", "-partitions", "2", "-config", "cleanup.policy=delete")
	// A wait prints what holds, one line (no stray "true").
	if out := must("topic seeded exists", "wait", "topic", "seeded", "-timeout", "5s"); out != "topic seeded exists\n" {
		t.Fatalf("wait topic printed %q", out)
	}
	must("seeded  0          1", "seed", "records", "seeded", "k1=v1", "v2")
	must("seeded", "seed", "records", "seeded", "-transaction", "abort", "gone")
	must("seeded", "seed", "records", "seeded", "-transaction", "commit", "kept")
	must("seeded/0 high watermark reached 6\n", "wait", "high-watermark", "seeded", "0", "6", "-timeout", "5s")

	out := must("v1", "inspect", "records", "seeded", "0", "-committed")
	if strings.Contains(out, "gone") || !strings.Contains(out, "kept") || !strings.Contains(out, "null") {
		t.Fatalf("read_committed records:\n%s", out)
	}
	if out := must("gone", "inspect", "records", "seeded", "0", "-offset", "2", "-limit", "1"); strings.Contains(out, "kept") {
		t.Fatalf("one record from offset 2:\n%s", out)
	}
	js := must(`"next_offset"`, "inspect", "records", "seeded", "0", "-o", "json")
	var page struct {
		Records []struct {
			Value *string `json:"value"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(js), &page); err != nil || len(page.Records) != 4 {
		t.Fatalf("json records: %v %q", err, js)
	}
	must("6", "inspect", "partition", "seeded", "0")
	js = must("CompleteAbort", "inspect", "transactions", "-o", "json")
	var txns struct {
		Transactions []struct {
			ID string `json:"transactional_id"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(js), &txns); err != nil || len(txns.Transactions) != 2 {
		t.Fatalf("transactions: %v %q", err, js)
	}
	must("CompleteCommit", "inspect", "transactions", txns.Transactions[1].ID)
	must("has no transaction open\n", "wait", "transaction", txns.Transactions[0].ID, "-timeout", "5s")
	must("PRODUCER ID", "inspect", "producers", "seeded", "0")
	if out, errOut, code := run("inspect", "members", "nobody"); code == 0 || !strings.Contains(errOut, "unknown group") {
		t.Fatalf("members of an unknown group: %d %q %q", code, out, errOut)
	}
	// A refusal is the broker's words after the command, as for the
	// Kafka verbs (no HTTP method and path).
	if _, errOut, code := run("inspect", "partition", "nope", "0"); code != 1 || errOut != "minikafka inspect partition: unknown topic or partition nope/0\n" {
		t.Fatalf("inspect of an unknown partition: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := run("fault", "remove", "999"); code != 1 || errOut != "minikafka fault remove: no fault 999\n" {
		t.Fatalf("removing an unknown fault: exit %d, stderr %q", code, errOut)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "records", "nope", "0"}, "unknown topic or partition"},
		{[]string{"inspect", "records", "seeded", "x"}, "partition \"x\""},
		{[]string{"seed", "topic", "seeded"}, "already exists"},
		{[]string{"seed", "records", "nope", "v"}, "UNKNOWN_TOPIC_OR_PARTITION"},
		{[]string{"seed", "records", "seeded", "-transaction", "maybe", "v"}, "transaction"},
		{[]string{"wait", "topic", "never", "-timeout", "100ms"}, "waiting for"},
		{[]string{"wait", "group-stable", "g", "many"}, "members"},
		{[]string{"inspect", "group"}, "GROUP"},
		{[]string{"inspect", "transactions", "nope"}, "unknown transactional id"},
		{[]string{"wait", "transaction", "nope", "-timeout", "200ms"}, "waiting for"},
	} {
		out, errOut, code := run(c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, out %q, err %q; want an error containing %q", c.args, code, out, errOut, c.want)
		}
	}
	noPanic(t, p)
}

// Storage faults from the CLI against a binary started with
// -storage-faults: a full disk fails produce with a storage error, and
// produce works again once the switch is off; a broker started without
// the flag says so.
func TestStorageFaultsCLIBinary(t *testing.T) {
	p, admin := serveAdmin(t, "-storage-faults")
	run := func(args ...string) (string, string, int) {
		return cliRun(t, p.addr, "", append(args, "-admin-addr", admin)...)
	}
	if out, errOut, code := cliRun(t, p.addr, "", "topic", "create", "d", "-p", "1"); code != 0 {
		t.Fatalf("topic create: %d %s %s", code, out, errOut)
	}
	if out, _, code := run("fault", "storage", "-full", "on"); code != 0 || !strings.Contains(out, "true") {
		t.Fatalf("full on: %d %q", code, out)
	}
	if out, errOut, code := cliRun(t, p.addr, "x\n", "produce", "d", "-timeout", "2s"); code == 0 {
		t.Fatalf("produce on a full disk succeeded: %q %q", out, errOut)
	}
	out, _, code := run("fault", "storage", "-o", "json")
	var st struct {
		Full   bool  `json:"full"`
		Failed int64 `json:"failed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Full || st.Failed == 0 {
		t.Fatalf("state while full: %d %q", code, out)
	}
	if _, errOut, code := run("fault", "storage", "-full", "off"); code != 0 {
		t.Fatalf("full off: %d %s", code, errOut)
	}
	if out, errOut, code := cliRun(t, p.addr, "y\n", "produce", "d", "-timeout", "10s"); code != 0 {
		t.Fatalf("produce after the disk has room again: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := run("fault", "storage", "-full", "maybe"); code == 0 || !strings.Contains(errOut, "want on or off") {
		t.Fatalf("bad switch: %d %q", code, errOut)
	}
	noPanic(t, p)

	plain, plainAdmin := serveAdmin(t)
	if _, errOut, code := cliRun(t, plain.addr, "", "fault", "storage", "-admin-addr", plainAdmin); code == 0 || !strings.Contains(errOut, "-storage-faults") {
		t.Fatalf("without -storage-faults: %d %q", code, errOut)
	}
}
