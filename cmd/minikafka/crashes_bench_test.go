package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkRestartAfterCrashes: each iteration starts the binary on the
// same data dir, produces a fixed load (4000 uncompressed 1 KB records to
// one partition, acks=all, durability always, a group commit; or
// MINIKAFKA_BENCH_RECORDS records), SIGKILLs it and times the next start
// to its first ApiVersions answer. Reported: the first and the last restart and
// the data dir's size, so restart time can be set against the number of
// crashes and the data kept.
func BenchmarkRestartAfterCrashes(b *testing.B) {
	bin := buildBinary(b)
	dir := b.TempDir()
	addr := freePort(b)
	start := func() (*exec.Cmd, time.Duration) {
		t0 := time.Now()
		cmd := exec.Command(bin, "-data", dir, "-listen", addr, "-log-level", "warn", "-durability", "always")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		answerApiVersions(b, addr, 60*time.Second)
		return cmd, time.Since(t0)
	}
	cmd, _ := start()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, "load"); err != nil {
		b.Fatal(err)
	}
	cl.Close()
	value := []byte(strings.Repeat("x", 1000))
	perCycle := 4000
	if n, err := strconv.Atoi(os.Getenv("MINIKAFKA_BENCH_RECORDS")); err == nil && n > 0 {
		perCycle = n // the same data in fewer cycles: crashes against data
	}
	var first, last time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("load"), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			b.Fatal(err)
		}
		for range perCycle {
			cl.Produce(ctx, &kgo.Record{Value: value}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "load", Partition: 0, At: int64(i), LeaderEpoch: -1})
		if _, err := kadm.NewClient(cl).CommitOffsets(ctx, fmt.Sprintf("g%d", i%5), offs); err != nil {
			b.Fatal(err)
		}
		cl.Close()
		cmd.Process.Kill()
		cmd.Wait()
		b.StartTimer()
		var took time.Duration
		cmd, took = start()
		if i == 0 {
			first = took
		}
		last = took
		if os.Getenv("MINIKAFKA_BENCH_VERBOSE") != "" {
			b.Logf("restart %d: %v, data %d KiB", i+1, took, dirSize(dir)>>10)
		}
	}
	b.StopTimer()
	cmd.Process.Kill()
	cmd.Wait()
	b.ReportMetric(float64(first.Microseconds())/1000, "first-restart-ms")
	b.ReportMetric(float64(last.Microseconds())/1000, "last-restart-ms")
	b.ReportMetric(float64(dirSize(dir)>>20), "data-MiB")
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}
