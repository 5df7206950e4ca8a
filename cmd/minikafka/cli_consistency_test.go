package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// runMain runs the binary's entry point in-process.
func runMain(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &out, &errOut, nil)
	return out.String(), errOut.String(), code
}

// A mistyped command is named, with the closest one, instead of the
// broker's flags; -h lists every command.
func TestUnknownCommandAndHelp(t *testing.T) {
	for word, want := range map[string]string{
		"topics":  "minikafka: unknown command \"topics\"; did you mean topic?\nRun 'minikafka -h' for the commands.\n",
		"prodcue": "minikafka: unknown command \"prodcue\"; did you mean produce?\nRun 'minikafka -h' for the commands.\n",
		"xyzzy":   "minikafka: unknown command \"xyzzy\"\nRun 'minikafka -h' for the commands.\n",
	} {
		stdout, stderr, code := runMain(t, nil, word, "list")
		if code != 2 || stdout != "" || stderr != want {
			t.Errorf("minikafka %s list: exit %d, stdout %q, stderr %q; want exit 2 and %q", word, code, stdout, stderr, want)
		}
	}
	help, _, code := runMain(t, nil, "-h")
	if code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	cmds, _, ok := strings.Cut(help, "Broker flags:")
	if !ok {
		t.Fatalf("-h has no broker flags section:\n%s", help)
	}
	for _, n := range append(commandNames(), "fault", "broker", "inspect", "wait", "seed", "user", "forward-status") {
		if !strings.Contains(cmds, "\n  "+n+" ") {
			t.Errorf("-h does not list %s:\n%s", n, cmds)
		}
	}
}

// produce fails naming the topic where the broker does not create topics
// on first use (where it does, the golden produce-auto-create creates it).
func TestProduceMissingTopicNoAutoCreate(t *testing.T) {
	addr := startCLIBroker(t, minikafka.WithAutoCreateTopics(false))
	_, stderr, code := cliRun(t, addr, "x\n", "produce", "nope")
	if code != 1 || stderr != "minikafka produce: topic nope does not exist (and the broker does not create topics on first use)\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// forward-status takes -b (and MINIKAFKA_BROKERS) as every client verb.
func TestForwardStatusTakesB(t *testing.T) {
	addr := startCLIBroker(t)
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"forward-status", "-b", addr}},
		{nil, []string{"forward-status", "-b", addr, "-o", "table"}},
		{nil, []string{"forward-status", "-brokers", addr}},
		{map[string]string{"MINIKAFKA_BROKERS": addr}, []string{"forward-status"}},
	} {
		stdout, stderr, code := runMain(t, tc.env, tc.args...)
		if code != 0 || stdout != "no forwarded partitions on "+addr+"\n" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", tc.args, code, stdout, stderr)
		}
	}
}

// group describe lists every partition of the group's topics and counts
// the ones without a commit from their log start, so its total is what
// inspect lag (Broker.GroupLag) reports.
func TestGroupDescribeLagCountsUncommitted(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithTopic("three", 3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	addr := b.Addrs()[0]
	var lines strings.Builder
	for i := range 35 {
		lines.WriteString([]string{"0", "1", "2"}[i%3] + " v\n")
	}
	if _, stderr, code := cliRun(t, addr, lines.String(), "produce", "three", "-f", "%p %v"); code != 0 {
		t.Fatal(stderr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// One partition of three committed, at offset 5 of its 12.
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "three", Partition: 0, At: 5, LeaderEpoch: -1})
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "half", commit); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cliRun(t, addr, "", "group", "describe", "half", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []describedGroup
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	lags, err := b.GroupLag("half", "three")
	if err != nil {
		t.Fatal(err)
	}
	var inspectTotal int64
	for _, l := range lags {
		inspectTotal += l.Lag
	}
	if inspectTotal != 35-5 {
		t.Fatalf("inspect lag total %d, want 30", inspectTotal)
	}
	g := got[0]
	if g.Total != inspectTotal || len(g.Lag) != 3 {
		t.Fatalf("group describe: total %d over %d partitions, want %d over 3 as inspect lag: %+v", g.Total, len(g.Lag), inspectTotal, g.Lag)
	}
	for _, l := range g.Lag {
		if (l.Partition == 0) != (l.Committed >= 0) {
			t.Fatalf("partition %d: committed %d", l.Partition, l.Committed)
		}
	}
	table, _, _ := cliRun(t, addr, "", "group", "describe", "half")
	if !strings.Contains(table, "TOTAL-LAG 30") || !strings.Contains(table, "three  1          -          12") {
		t.Fatalf("table:\n%s", table)
	}
}

// A bad flag or flag value, for the broker as for a verb, is one line
// naming the command and the flag, then where the flags are listed, exit
// 2; not flag's default of the whole flag list (150 lines for the broker).
func TestBadFlagsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "bogus.config=1"}, "minikafka: flag provided but not defined: -c\nRun 'minikafka -h' for the flags.\n"},
		{[]string{"-node-id", "x"}, "minikafka: invalid value \"x\" for flag -node-id: parse error\nRun 'minikafka -h' for the flags.\n"},
		{[]string{"-durability", "sometimes"}, "minikafka: invalid value \"sometimes\" for flag -durability: unknown durability policy \"sometimes\" (want always, never or interval=D)\nRun 'minikafka -h' for the flags.\n"},
		{[]string{"-in-memory", "extra"}, "minikafka: unexpected arguments: [\"extra\"]\nRun 'minikafka -h' for the flags.\n"},
		{[]string{"forward-status", "-bogus"}, "minikafka forward-status: flag provided but not defined: -bogus\nRun 'minikafka forward-status -h' for its flags.\n"},
		{[]string{"produce", "t", "-z", "brotli"}, "minikafka produce: -z \"brotli\": want none, gzip, snappy, lz4 or zstd\n"},
		{[]string{"consume", "t", "-n", "x"}, "minikafka consume: invalid value \"x\" for flag -n: parse error\nRun 'minikafka consume -h' for its flags.\n"},
		{[]string{"fault", "add", "-bogus"}, "minikafka fault add: flag provided but not defined: -bogus\nRun 'minikafka fault add -h' for its flags.\n"},
		{[]string{"wait", "-bogus"}, "minikafka wait: want the command before its flags (minikafka wait <command> [flags]), not \"-bogus\"\nRun 'minikafka wait -h' for its commands.\n"},
		{[]string{"group", "descirbe", "g"}, "minikafka group: unknown command \"descirbe\"; did you mean describe?\nRun 'minikafka group -h' for its commands.\n"},
	} {
		stdout, stderr, code := runMain(t, nil, tc.args...)
		if code != 2 || stdout != "" || stderr != tc.want {
			t.Errorf("minikafka %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
	// -h prints the whole list on stdout (so it can be piped to grep or
	// less, as rpk's and kcat's help can), exit 0.
	for args, want := range map[string]string{"-h": "  -listen", "topic create -h": "  -timeout", "forward-status -h": "  -timeout",
		"topic -h": "  create TOPIC...", "produce -h": "  -f ", "wait -h": "  topic "} {
		stdout, stderr, code := runMain(t, nil, strings.Fields(args)...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: minikafka") || !strings.Contains(stdout, want) {
			t.Errorf("minikafka %s: exit %d, stdout %q, stderr %q; want exit 0 and the usage on stdout", args, code, stdout, stderr)
		}
	}
	// A verb without its command prints the usage as an error: stderr, exit 2.
	if stdout, stderr, code := runMain(t, nil, "topic"); code != 2 || stdout != "" || !strings.HasPrefix(stderr, "Usage: minikafka topic") {
		t.Errorf("minikafka topic: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A per-item operation says each failure once: the table lists what was
// done, stderr each failure (a refusal the same for every item once),
// as topic create does.
func TestPerItemFailuresSaidOnce(t *testing.T) {
	addr := startCLIBroker(t, minikafka.WithTopic("busy", 3))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("busy-g"), kgo.ConsumeTopics("busy"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	adm := kadm.NewClient(member)
	for {
		pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		member.PollFetches(pctx)
		pcancel()
		dg, err := adm.DescribeGroups(ctx, "busy-g")
		if err == nil && dg["busy-g"].State == "Stable" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("group never stable: %v", err)
		}
	}
	stdout, stderr, code := cliRun(t, addr, "", "group", "seek", "busy-g", "-to", "start", "-topics", "busy")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "minikafka group seek: group busy-g is not empty: stop its members first (") {
		t.Fatalf("seek of a live group: exit %d, stdout %q, stderr %q; want one line for the three partitions", code, stdout, stderr)
	}
	stdout, stderr, code = cliRun(t, addr, "", "topic", "alter-config", "busy", "ghost", "-set", "retention.ms=1000")
	if code != 1 || stdout != "TOPIC  STATUS\nbusy   OK\n" || stderr != "minikafka topic alter-config: topic ghost does not exist\n" {
		t.Fatalf("alter-config of one topic and a missing one: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// forward-status takes -o json as every client verb (and -json as before).
func TestForwardStatusOutputJSON(t *testing.T) {
	addr := startCLIBroker(t)
	for _, flag := range [][]string{{"-o", "json"}, {"-json"}} {
		stdout, stderr, code := runMain(t, nil, append([]string{"forward-status", "-b", addr}, flag...)...)
		if code != 0 || stdout != "[]\n" {
			t.Errorf("forward-status %v: exit %d, stdout %q, stderr %q", flag, code, stdout, stderr)
		}
	}
	if _, stderr, code := runMain(t, nil, "forward-status", "-b", addr, "-o", "yaml"); code != 2 || stderr != "minikafka forward-status: -o \"yaml\": want table or json\n" {
		t.Errorf("-o yaml: exit %d, stderr %q", code, stderr)
	}
}
