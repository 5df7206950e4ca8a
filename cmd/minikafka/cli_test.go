package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

var updateGolden = flag.Bool("update", false, "rewrite cmd/minikafka/testdata/cli/*.golden from this run")

// cliRun runs a client verb against addr and returns what it printed and
// its exit code.
func cliRun(t *testing.T, addr, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, lookupEnv: func(k string) (string, bool) {
		if k == "MINIKAFKA_BROKERS" {
			return addr, true
		}
		return "", false
	}}
	code = runCLI(context.Background(), args, env)
	return out.String(), errOut.String(), code
}

// TestCLIGolden runs every client verb against a broker and compares what
// it prints, table and -o json, and its exit code with
// testdata/cli/<step>.golden (go test -run TestCLIGolden -update rewrites
// them). Values that differ from run to run (the address, topic and
// cluster IDs) are replaced by placeholders first.
func TestCLIGolden(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithGroupInitialRebalanceDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	addr := b.Addrs()[0]
	replace := []string{addr, "BROKER"}
	ids := func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		md, err := adm.Metadata(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		replace = []string{addr, "BROKER", md.Cluster, "CLUSTER-ID"}
		for _, td := range md.Topics {
			replace = append(replace, kafkaUUID(td.ID), "ID-"+td.Topic)
		}
	}
	lines := "0 a 1700000000000 first\n1 b 1700000001000 second\n2 c 1700000002000 third\n0 d 1700000003000 fourth\n"
	steps := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"topic-create", "", []string{"topic", "create", "t1", "one", "-p", "3", "-c", "retention.ms=86400000"}},
		{"topic-create-exists", "", []string{"topic", "create", "t1"}},
		{"topic-create-one", "", []string{"topic", "create", "solo", "-p", "1", "-o", "json"}},
		{"topic-list", "", []string{"topic", "list"}},
		{"topic-list-json", "", []string{"topic", "list", "-o", "json"}},
		{"produce-format", lines, []string{"produce", "t1", "-f", "%p %k %t %v", "-H", "src=cli"}},
		{"produce-solo-json", "1700000010000 x1\n1700000011000 x2\n1700000012000 x3\n", []string{"produce", "solo", "-o", "json", "-k", "same", "-f", "%t %v"}},
		{"produce-bad-line", "no-separator\n", []string{"produce", "t1", "-f", "%k %v"}},
		{"topic-create-tiny", "", []string{"topic", "create", "tiny", "-p", "1", "-c", "max.message.bytes=200"}},
		{"produce-refused", strings.Repeat("x", 500) + "\n", []string{"produce", "tiny", "-acks", "1"}},
		// A missing topic is created where the broker creates topics on
		// first use; -f reads \t and \n escapes, a \n separator spans lines.
		{"produce-auto-create", "k1\tv1\nk2\tv2\n", []string{"produce", "fresh", "-f", `%k\t%v`}},
		{"produce-multiline", "k3\nv3\nk4\nv4\n", []string{"produce", "fresh", "-f", `%k\n%v\n`}},
		{"produce-bad-escape", "x\n", []string{"produce", "fresh", "-f", `%k\q%v`}},
		{"consume-fresh", "", []string{"consume", "fresh", "-format", "{{.Offset}} {{.Key}}={{.Value}}"}},
		{"topic-describe", "", []string{"topic", "describe", "t1"}},
		{"topic-describe-json", "", []string{"topic", "describe", "solo", "-o", "json"}},
		{"consume-partition-template", "", []string{"consume", "t1", "-p", "0", "-format", "{{.Partition}}/{{.Offset}} {{.Key}}={{.Value}} {{.Timestamp}}"}},
		{"consume-json", "", []string{"consume", "solo", "-o", "json"}},
		{"consume-last", "", []string{"consume", "solo", "-offset", "-1"}},
		{"consume-offset-n", "", []string{"consume", "solo", "-offset", "1", "-n", "1"}},
		{"consume-time", "", []string{"consume", "t1", "-p", "0", "-offset", "@1700000002500"}},
		{"consume-end", "", []string{"consume", "solo", "-offset", "end"}},
		{"consume-group", "", []string{"consume", "solo", "-g", "cli-group"}},
		{"consume-group-again", "", []string{"consume", "solo", "-g", "cli-group"}},
		{"group-list", "", []string{"group", "list"}},
		{"group-describe", "", []string{"group", "describe", "cli-group"}},
		{"group-seek-start", "", []string{"group", "seek", "cli-group", "-to", "start"}},
		{"group-describe-json", "", []string{"group", "describe", "cli-group", "-o", "json"}},
		{"group-seek-copy", "", []string{"group", "seek", "copy", "-to", "group:cli-group"}},
		{"group-delete", "", []string{"group", "delete", "copy"}},
		{"group-offset-delete", "", []string{"group", "offset-delete", "cli-group", "solo"}},
		{"group-describe-after-offset-delete", "", []string{"group", "describe", "cli-group"}},
		{"err-group-offset-delete-unknown", "", []string{"group", "offset-delete", "nope", "solo:0"}},
		{"user-create", "", []string{"user", "create", "alice", "-password", "s3cret"}},
		{"user-create-512", "", []string{"user", "create", "alice", "-password", "s3cret", "-mechanism", "SCRAM-SHA-512", "-iterations", "4096"}},
		{"user-list", "", []string{"user", "list"}},
		{"user-list-json", "", []string{"user", "list", "-o", "json"}},
		{"user-delete", "", []string{"user", "delete", "alice"}},
		{"user-list-after-delete", "", []string{"user", "list"}},
		{"err-user-delete-unknown", "", []string{"user", "delete", "bob"}},
		{"err-user-create-no-password", "", []string{"user", "create", "bob"}},
		{"err-control-verb-b", "", []string{"fault", "list", "-b", "127.0.0.1:9092"}},
		{"topic-alter-config", "", []string{"topic", "alter-config", "t1", "-set", "retention.ms=1000", "-set", "cleanup.policy=compact"}},
		{"topic-describe-after-alter", "", []string{"topic", "describe", "t1", "-o", "json"}},
		{"topic-add-partitions", "", []string{"topic", "add-partitions", "one", "-n", "2"}},
		{"topic-trim", "", []string{"topic", "trim", "solo", "-offset", "2"}},
		{"cluster-info", "", []string{"cluster", "info"}},
		{"cluster-info-json", "", []string{"cluster", "info", "-o", "json"}},
		{"cluster-config", "", []string{"cluster", "config"}},
		{"topic-delete", "", []string{"topic", "delete", "one"}},
		{"produce-one", "only\n", []string{"produce", "single"}},
		// Errors: one line naming what is wrong, exit 1 for a failed
		// operation, 2 for a bad command line.
		{"err-describe-unknown", "", []string{"topic", "describe", "nope"}},
		{"err-consume-unknown", "", []string{"consume", "nope"}},
		{"err-delete-unknown", "", []string{"topic", "delete", "nope"}},
		{"err-delete-some-unknown", "", []string{"topic", "delete", "nope", "single", "nope2"}},
		{"err-group-unknown", "", []string{"group", "describe", "nope"}},
		{"err-bad-flag", "", []string{"topic", "create", "x", "-bogus"}},
		{"err-bad-flag-value", "", []string{"topic", "create", "x", "-p", "three"}},
		{"err-bad-config-syntax", "", []string{"topic", "create", "x", "-c", "retention.ms"}},
		{"err-unknown-command-typo", "", []string{"topic", "lsit"}},
		{"err-flag-before-command", "", []string{"topic", "-b", "localhost:9092", "list"}},
		// The broker's error_message, the specific reason, is shown.
		{"err-create-bad-name", "", []string{"topic", "create", "bad/name"}},
		{"err-create-bad-config", "", []string{"topic", "create", "x", "-c", "bogus.config=1"}},
		{"err-create-bad-value", "", []string{"topic", "create", "x", "-c", "retention.ms=soon"}},
		{"err-create-replication", "", []string{"topic", "create", "x", "-r", "3"}},
		{"err-alter-config-bogus", "", []string{"topic", "alter-config", "t1", "-set", "bogus.config=1"}},
		{"err-add-partitions-too-many", "", []string{"topic", "add-partitions", "t1", "-n", "20000"}},
		{"err-unknown-command", "", []string{"topic", "frobnicate"}},
		{"err-missing-arg", "", []string{"consume"}},
		{"err-bad-output", "", []string{"topic", "list", "-o", "yaml"}},
		{"err-bad-offset", "", []string{"consume", "solo", "-offset", "soon"}},
		{"err-unreachable", "", []string{"topic", "list", "-b", "127.0.0.1:1", "-timeout", "3s"}},
	}
	for _, s := range steps {
		stdout, stderr, code := cliRun(t, addr, s.stdin, s.args...)
		ids() // after the step: the topics it created have IDs now
		shown := make([]string, len(s.args))
		for i, a := range s.args {
			shown[i] = a
			if strings.ContainsAny(a, " {}%") {
				shown[i] = "'" + a + "'"
			}
		}
		got := fmt.Sprintf("$ minikafka %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(shown, " "), code, stdout, stderr)
		got = strings.NewReplacer(replace...).Replace(got)
		if strings.HasPrefix(s.name, "cluster-info") {
			_, port, _ := strings.Cut(addr, ":")
			got = strings.ReplaceAll(got, port, "PORT")
		}
		if s.name == "err-unreachable" {
			// The dial error's wording is the OS's: keep its start.
			if i := strings.Index(got, "cannot reach a broker at 127.0.0.1:1"); i >= 0 {
				got = got[:i+len("cannot reach a broker at 127.0.0.1:1")] + "\n"
			}
		}
		path := filepath.Join("testdata", "cli", s.name+".golden")
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
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

// TestCLIGroupDescribeLive: group describe of a live KIP-848 group shows
// its member, the partitions assigned to it and the lag on each.
func TestCLIGroupDescribeLive(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	addr := b.Addrs()[0]
	if _, _, code := cliRun(t, addr, "", "topic", "create", "live", "-p", "2"); code != 0 {
		t.Fatal("create failed")
	}
	if _, stderr, code := cliRun(t, addr, "0 a\n0 b\n1 c\n", "produce", "live", "-f", "%p %v"); code != 0 {
		t.Fatal(stderr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("live-g"), kgo.ConsumeTopics("live"),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var first *kgo.Record
	for first == nil {
		fs := cl.PollRecords(ctx, 1)
		if ctx.Err() != nil {
			t.Fatal("no record consumed")
		}
		if rs := fs.Records(); len(rs) > 0 {
			first = rs[0]
		}
	}
	if err := cl.CommitRecords(ctx, first); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cliRun(t, addr, "", "group", "describe", "live-g", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []describedGroup
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	g := got[0]
	if g.Type != "consumer" || g.State != "Stable" || len(g.Members) != 1 || g.Protocol != "uniform" {
		t.Fatalf("described %+v", g)
	}
	if a := g.Members[0].Assigned["live"]; len(a) != 2 {
		t.Fatalf("member assigned %v, want both partitions", g.Members[0].Assigned)
	}
	lag := map[int32]describedLag{}
	for _, l := range g.Lag {
		lag[l.Partition] = l
	}
	p := first.Partition
	want := map[int32]int64{0: 2, 1: 1}
	if l := lag[p]; l.Committed != first.Offset+1 || l.Lag != want[p]-first.Offset-1 || l.MemberID != g.Members[0].MemberID {
		t.Fatalf("partition %d: %+v after committing offset %d", p, l, first.Offset+1)
	}
	if g.Total != 2 {
		t.Fatalf("total lag %d, want 2 (3 records, one committed)", g.Total)
	}
}
