package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMain doubles as the broker children of TestRunTiny: with
// MKBENCH_CHILD set, the test binary is a broker process instead.
func TestMain(m *testing.M) {
	switch os.Getenv("MKBENCH_CHILD") {
	case "kfake":
		os.Exit(ServeKfake(os.Args[1:], os.Stdout, os.Stderr))
	case "minikafka":
		os.Exit(ServeMinikafka(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	closeFetchTargets()
	os.Exit(code)
}

// TestRunTiny runs small versions of the consume (with its produce fill, RSS and
// reopen), latency, share and cluster scenarios against both brokers as child processes,
// so the harness cannot rot unnoticed.
func TestRunTiny(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := Run(ctx, Config{
		Minikafka:    Cmd{Path: self, Env: []string{"MKBENCH_CHILD=minikafka"}},
		Kfake:        Cmd{Path: self, Env: []string{"MKBENCH_CHILD=kfake"}},
		Others:       []NamedCmd{{Name: "base", Cmd: Cmd{Path: self, Env: []string{"MKBENCH_CHILD=minikafka"}}}},
		Scenarios:    []string{"consume", "latency", "share", "cluster"},
		Runs:         1,
		ProduceBytes: 256 << 10,
		ConsumeBytes: 1 << 20,
		LatencyRate:  1000,
		LatencyFor:   300 * time.Millisecond,
		Dir:          t.TempDir(),
		Log:          &log,
	})
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	table := Table(rows)
	t.Log("\n" + table)
	want := map[string]bool{"rss": false, "consume": false, "reopen": false, "latency": false, "start-up": false, "share": false, "cluster": false}
	for _, r := range rows {
		if _, ok := want[r.Scenario]; ok {
			want[r.Scenario] = true
		}
		if r.Minikafka == "" || strings.Contains(r.Minikafka, "NaN") || strings.HasPrefix(r.Minikafka, "0.0 ") {
			t.Errorf("row %s/%s: minikafka figure %q", r.Scenario, r.Metric, r.Minikafka)
		}
		// Config.Others run in the latency runs too, with their figures.
		if r.Scenario == "latency" && r.Kfake != "" && !strings.HasPrefix(r.Others, "base: ") {
			t.Errorf("latency row %q: other builds' figures %q", r.Metric, r.Others)
		}
	}
	for s, seen := range want {
		if !seen {
			t.Errorf("no %s row in\n%s", s, table)
		}
	}
	if n := strings.Count(table, "\n"); n != len(rows)+2 {
		t.Errorf("table has %d lines for %d rows", n, len(rows))
	}
}

func TestPercentiles(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	if got := pct(xs, 0.5); got != 500 {
		t.Errorf("p50 = %v", got)
	}
	if got := pct(xs, 0.99); got != 990 {
		t.Errorf("p99 = %v", got)
	}
	if got := pct(xs, 0.999); got != 999 {
		t.Errorf("p999 = %v", got)
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median = %v", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("median = %v", got)
	}
}

// TestProduceDeleteAfter: with Config.DeleteTopics a produce run's topic is
// gone once the run is measured, on both brokers (so kfake races at its
// best); without it the topic stays.
func TestProduceDeleteAfter(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, child := range []string{"minikafka", "kfake"} {
		t.Run(child, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-listen", "127.0.0.1:0", "-data", dir, "-durability", "never", "-log-level", "warn"}
			if child == "kfake" {
				args = []string{"-data-dir", dir}
			}
			p, err := startProc(ctx, child, Cmd{Path: self, Env: []string{"MKBENCH_CHILD=" + child}}, args, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer p.stop()
			spec := produceSpec{recSize: 1024, parts: 2, producers: 1, bytes: 64 << 10, codec: kgo.NoCompression()}
			if _, err := runProduce(ctx, p, "kept", spec); err != nil {
				t.Fatal(err)
			}
			spec.deleteAfter = true
			s, err := runProduce(ctx, p, "dropped", spec)
			if err != nil {
				t.Fatal(err)
			}
			if s.records != 64 {
				t.Errorf("the deleted topic's run measured %d records, want 64", s.records)
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			topics, err := kadm.NewClient(cl).ListTopics(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !topics.Has("kept") || topics.Has("dropped") {
				t.Errorf("topics after the runs: %v; want kept and not dropped", topics.Names())
			}
		})
	}
}
