// Command mkbench runs the out-of-process benchmarks of issue 3: the
// minikafka binary and kfake (cmd/kfakebroker), each as its own process,
// driven alternately by the same kgo load generator, medians of -runs.
//
//	go run ./internal/bench/cmd/mkbench -scenario all [-o results.md]
//
// It builds both binaries with `go build` into a temp directory first (run it
// from the module), unless -minikafka and -kfake name prebuilt ones.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/minikafka/minikafka/internal/bench"
)

func main() {
	scenario := flag.String("scenario", "all", "comma-separated scenarios: "+strings.Join(bench.AllScenarios, ", ")+", or all")
	runs := flag.Int("runs", 5, "runs per broker per scenario (medians)")
	produceMiB := flag.Int64("produce-mib", 64, "payload MiB per produce run")
	consumeMiB := flag.Int64("consume-mib", 256, "MiB produced once then read per consume run (also the RSS and reopen size)")
	latRate := flag.Int("latency-rate", 10000, "records/s in the latency runs")
	latFor := flag.Duration("latency-for", 5*time.Second, "duration of each latency run")
	dir := flag.String("dir", "", "parent of the brokers' data directories (default: a new temp dir)")
	mkBin := flag.String("minikafka", "", "prebuilt minikafka binary (default: go build ./cmd/minikafka)")
	kfBin := flag.String("kfake", "", "prebuilt kfakebroker binary (default: go build ./internal/bench/cmd/kfakebroker)")
	var mkArgs []string
	flag.Func("minikafka-arg", "extra `flag` for every minikafka process, before the harness's own (repeatable; e.g. -minikafka-arg=-cpuprofile=f with cmd/mkprof)", func(v string) error {
		mkArgs = append(mkArgs, v)
		return nil
	})
	var others []bench.NamedCmd
	flag.Func("other", "another minikafka `name=binary` (an older build) run in the same produce and latency runs, alternating (repeatable)", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("want name=binary, got %q", v)
		}
		// The name goes into topic names: Kafka's legal characters only.
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return fmt.Errorf("name %q: only letters, digits, '.', '_' and '-' (it goes into topic names)", name)
		}
		others = append(others, bench.NamedCmd{Name: name, Cmd: bench.Cmd{Path: path}})
		return nil
	})
	kafka := flag.String("kafka", "", "also race Apache Kafka: a `script` taking PORT DATA_DIR CONTROLLER_PORT [key=value...] (scripts/kafka-broker.sh) in the produce-*, compression, latency, consume and share runs")
	kafkaWarmMiB := flag.Int64("kafka-warmup-mib", 64, "MiB produced to Apache Kafka after each start, not measured (JVM warm-up)")
	deleteTopics := flag.Bool("delete-topics", false, "delete each produce and compression run's topic after it: kfake keeps every record in memory, so with this it races at its best, and without it its heap grows run by run (its worst case)")
	pauseIdle := flag.Bool("pause-idle", false, "stop (SIGSTOP) the other brokers while one is measured, continue them after (an idle JVM's background CPU otherwise inflates the others' figures on 2 cores)")
	rdshare := flag.String("librdkafka-share", "", "in the share scenario, also read with librdkafka's share consumer: the `binary` internal/bench/cmd/rdshare/build.sh prints")
	codecs := flag.String("codecs", "", "comma-separated codecs of the compression scenario (none, lz4, zstd, gzip, snappy); default all")
	out := flag.String("o", "", "also write the markdown table to this `file`")
	quiet := flag.Bool("q", false, "no per-run progress on stderr")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *scenario, *runs, *produceMiB, *consumeMiB, *latRate, *latFor, *dir, *mkBin, *kfBin, mkArgs, others, *kafka, *kafkaWarmMiB, *rdshare, *pauseIdle, *deleteTopics, *codecs, *out, *quiet); err != nil {
		fmt.Fprintf(os.Stderr, "mkbench: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scenario string, runs int, produceMiB, consumeMiB int64, latRate int, latFor time.Duration, dir, mkBin, kfBin string, mkArgs []string, others []bench.NamedCmd, kafka string, kafkaWarmMiB int64, rdshare string, pauseIdle, deleteTopics bool, codecs, out string, quiet bool) error {
	for _, c := range splitNonEmpty(codecs) {
		if !slices.Contains([]string{"none", "lz4", "zstd", "gzip", "snappy"}, c) {
			return fmt.Errorf("-codecs: unknown codec %q (want none, lz4, zstd, gzip, snappy)", c)
		}
	}
	tmp, err := os.MkdirTemp(dir, "mkbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	build := func(bin *string, pkg, name string) error {
		if *bin != "" {
			return nil
		}
		*bin = filepath.Join(tmp, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *bin, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build %s: %w", pkg, err)
		}
		return nil
	}
	if err := build(&mkBin, "./cmd/minikafka", "minikafka"); err != nil {
		return err
	}
	if err := build(&kfBin, "./internal/bench/cmd/kfakebroker", "kfakebroker"); err != nil {
		return err
	}
	cfg := bench.Config{
		Minikafka:       bench.Cmd{Path: mkBin, Args: mkArgs},
		Kfake:           bench.Cmd{Path: kfBin},
		Others:          others,
		Kafka:           bench.Cmd{Path: kafka},
		KafkaWarmup:     kafkaWarmMiB << 20,
		LibrdkafkaShare: rdshare,
		PauseIdle:       pauseIdle,
		DeleteTopics:    deleteTopics,
		Scenarios:       strings.Split(scenario, ","),
		Codecs:          splitNonEmpty(codecs),
		Runs:            runs,
		ProduceBytes:    produceMiB << 20,
		ConsumeBytes:    consumeMiB << 20,
		LatencyRate:     latRate,
		LatencyFor:      latFor,
		Dir:             tmp,
	}
	if !quiet {
		cfg.Log = os.Stderr
	}
	load0 := bench.LoadAvg()
	t0 := time.Now()
	rows, err := bench.Run(ctx, cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "mkbench %s, %s UTC, %d CPUs, %s\n\n", strings.Join(os.Args[1:], " "), t0.UTC().Format("2006-01-02 15:04"), runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(&b, "Runs %d per broker per scenario, alternating, medians; produce %d MiB per run; consume %d MiB; latency %d rec/s for %s. Load average (1/5/15 min) at start %s, at end %s; took %s.\n\n",
		runs, produceMiB, consumeMiB, latRate, latFor, load0, bench.LoadAvg(), time.Since(t0).Round(time.Second))
	b.WriteString(bench.Table(rows))
	fmt.Print(b.String())
	if out != "" {
		if werr := os.WriteFile(out, []byte(b.String()), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// splitNonEmpty splits a comma-separated list; "" is none.
func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
