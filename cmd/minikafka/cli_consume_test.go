package main

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// startCLIBroker starts an in-process broker for the client verbs.
func startCLIBroker(t *testing.T, opts ...minikafka.Option) string {
	t.Helper()
	b, err := minikafka.Start(context.Background(), append([]minikafka.Option{minikafka.WithInMemory(),
		minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithGroupInitialRebalanceDelay(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Addrs()[0]
}

// produceValues produces values to topic, each acknowledged.
func produceValues(t *testing.T, addr, topic string, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// nextLine waits up to within for the process's next stdout line.
func (p *proc) nextLine(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case l := <-p.stdout.lines:
		return l
	case <-p.done:
		t.Fatalf("consume exited with %d\nstdout:\n%s\nstderr:\n%s", p.code, p.stdout, p.stderr)
	case <-time.After(within):
		t.Fatalf("no line within %v\nstdout:\n%s\nstderr:\n%s", within, p.stdout, p.stderr)
	}
	return ""
}

// consume -follow is a tail: a record produced while it runs is on its
// stdout (a pipe, so nothing but its own flush puts it there) within a
// second, and SIGINT ends it with exit 0 and, in a group, the commit of
// what it printed.
func TestConsumeFollowTail(t *testing.T) {
	addr := startCLIBroker(t, minikafka.WithTopic("tail", 2), minikafka.WithTopic("tail-tail-g", 2))
	for _, group := range []string{"", "tail-g"} {
		t.Run("group="+group, func(t *testing.T) {
			topic := strings.TrimSuffix("tail-"+group, "-")
			produceValues(t, addr, topic, "before")
			args := []string{"consume", topic, "-follow", "-b", addr}
			if group != "" {
				args = append(args, "-g", group)
			}
			p := launch(t, nil, args...)
			if l := p.nextLine(t, 20*time.Second); l != "before" {
				t.Fatalf("first line %q, want before", l)
			}
			for i, v := range []string{"after-1", "after-2"} {
				start := time.Now()
				produceValues(t, addr, topic, v+group)
				if l := p.nextLine(t, time.Second); l != v+group {
					t.Fatalf("line %d: %q, want %q", i, l, v+group)
				}
				t.Logf("%s shown %v after its produce began", v, time.Since(start))
			}
			p.cmd.Process.Signal(syscall.SIGINT)
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, p.stderr)
			}
			want := "before\nafter-1" + group + "\nafter-2" + group + "\n"
			if got := p.stdout.String(); got != want {
				t.Fatalf("stdout %q, want %q", got, want)
			}
			if s := p.stderr.String(); s != "" {
				t.Fatalf("stderr after SIGINT: %s", s)
			}
			if group == "" {
				return
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			lag, err := kadm.NewClient(cl).Lag(context.Background(), group)
			if err != nil {
				t.Fatal(err)
			}
			if l := lag[group]; l.Error() != nil || l.Lag.Total() != 0 {
				t.Fatalf("group %s after SIGINT: lag %d (%v), want everything printed committed", group, l.Lag.Total(), l.Error())
			}
		})
	}
}

// SIGINT before the end of a bounded consume prints what it read and
// exits 0; an explicit -timeout still ends a follow, with exit 0.
func TestConsumeFollowExplicitTimeout(t *testing.T) {
	addr := startCLIBroker(t, minikafka.WithTopic("quiet", 1))
	start := time.Now()
	stdout, stderr, code := cliRun(t, addr, "", "consume", "quiet", "-follow", "-timeout", "1s")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if d := time.Since(start); d < time.Second || d > 10*time.Second {
		t.Fatalf("-follow -timeout 1s ran %v", d)
	}
}

// consume takes several topics, or a regex over the topic names.
func TestConsumeTopicsAndRegex(t *testing.T) {
	addr := startCLIBroker(t)
	produceValues(t, addr, "orders-eu", "eu1", "eu2")
	produceValues(t, addr, "orders-us", "us1")
	produceValues(t, addr, "payments", "pay1")
	lines := func(s string) []string {
		l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		slices.Sort(l)
		return l
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"consume", "orders-eu", "payments"}, []string{"eu1", "eu2", "pay1"}},
		{[]string{"consume", "-regex", "^orders-"}, []string{"eu1", "eu2", "us1"}},
		{[]string{"consume", "-regex", "^orders-", "-g", "re-g"}, []string{"eu1", "eu2", "us1"}},
		{[]string{"consume", "-regex", "ts$", "-format", "{{.Topic}}:{{.Value}}"}, []string{"payments:pay1"}},
	} {
		stdout, stderr, code := cliRun(t, addr, "", tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if got := lines(stdout); !slices.Equal(got, tc.want) {
			t.Fatalf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"consume", "-regex", "^nothing"}, 1, `no topic matches "^nothing"`},
		{[]string{"consume", "-regex", "("}, 2, "-regex"},
		{[]string{"consume", "-regex", "x", "payments"}, 2, "one or the other"},
		{[]string{"consume", "orders-eu", "nope"}, 1, "topic nope does not exist"},
		{[]string{"consume", "orders-eu", "payments", "-p", "0"}, 2, "-p: name one topic"},
	} {
		_, stderr, code := cliRun(t, addr, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Fatalf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
}

// A tail started before its topic exists waits for it (saying so on
// stderr), as kcat -C and rpk topic consume do, and reads a topic that
// appears from its start (-offset end applies to the topics that were
// there); SIGINT while waiting exits 0.
func TestConsumeFollowWaitsForTopic(t *testing.T) {
	addr := startCLIBroker(t, minikafka.WithTopic("old", 1))
	produceValues(t, addr, "old", "o1")
	p := launch(t, nil, "consume", "old", "later", "-follow", "-offset", "end", "-b", addr)
	if l := p.stderr.nextLine(t, p, 20*time.Second); l != "minikafka consume: waiting for topic later to be created" {
		t.Fatalf("stderr %q", l)
	}
	start := time.Now()
	produceValues(t, addr, "later", "l1") // auto-created
	if l := p.nextLine(t, time.Second); l != "l1" {
		t.Fatalf("first line %q, want l1", l)
	}
	t.Logf("the record of the new topic shown %v after its produce began", time.Since(start))
	produceValues(t, addr, "old", "o2")
	if l := p.nextLine(t, time.Second); l != "o2" {
		t.Fatalf("second line %q, want o2", l)
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 || p.stdout.String() != "l1\no2\n" {
		t.Fatalf("exit %d, stdout %q after SIGINT", code, p.stdout)
	}

	// Interrupted while waiting: nothing read, exit 0.
	p = launch(t, nil, "consume", "never", "-follow", "-b", addr)
	p.stderr.nextLine(t, p, 20*time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 || p.stdout.String() != "" {
		t.Fatalf("exit %d, stdout %q after SIGINT while waiting", code, p.stdout)
	}
	// Without -follow a missing topic is still an error at once.
	if _, stderr, code := cliRun(t, addr, "", "consume", "never"); code != 1 || stderr != "minikafka consume: topic never does not exist\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// nextLine is the next line of l (a process's stderr) within a time.
func (l *lineBuf) nextLine(t *testing.T, p *proc, within time.Duration) string {
	t.Helper()
	select {
	case s := <-l.lines:
		return s
	case <-p.done:
		t.Fatalf("exited with %d\nstdout:\n%s\nstderr:\n%s", p.code, p.stdout, p.stderr)
	case <-time.After(within):
		t.Fatalf("no line within %v\nstdout:\n%s\nstderr:\n%s", within, p.stdout, p.stderr)
	}
	return ""
}

// A tail over -regex reads every matching topic, those created after it
// started too (kgo refreshes the matches every second), and waits when
// none matches yet.
func TestConsumeFollowRegexNewTopics(t *testing.T) {
	addr := startCLIBroker(t)
	produceValues(t, addr, "other", "not-matched")
	p := launch(t, nil, "consume", "-regex", "^rx-", "-follow", "-format", "{{.Topic}} {{.Value}}", "-b", addr)
	if l := p.stderr.nextLine(t, p, 20*time.Second); l != `minikafka consume: waiting for a topic matching "^rx-" to be created` {
		t.Fatalf("stderr %q", l)
	}
	for _, topic := range []string{"rx-a", "rx-b"} {
		start := time.Now()
		produceValues(t, addr, topic, "v")
		if l := p.nextLine(t, 5*time.Second); l != topic+" v" {
			t.Fatalf("line %q, want %q", l, topic+" v")
		}
		t.Logf("%s, a new topic, shown %v after its produce began", topic, time.Since(start))
	}
	produceValues(t, addr, "rx-a", "again")
	if l := p.nextLine(t, time.Second); l != "rx-a again" {
		t.Fatalf("line %q", l)
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 || p.stdout.String() != "rx-a v\nrx-b v\nrx-a again\n" {
		t.Fatalf("exit %d, stdout %q", code, p.stdout)
	}
}
