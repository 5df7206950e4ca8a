package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkManyPartitionsStopStart: a data dir of 10 000 partitions (100
// topics × 100), each with a record, durability always. Measured per
// iteration: SIGTERM to exit (sigterm-ms) and exec to the first
// ApiVersions answer (restart-ms); first-sigterm-ms is the stop right
// after the writes, when every log has its indexes to write. The data dir
// is built once.
func BenchmarkManyPartitionsStopStart(b *testing.B) {
	const topics, parts = 100, 100
	bin := buildBinary(b)
	// Not b.TempDir: its RemoveAll of 10 000 directories has failed
	// with "directory not empty" on this machine; a leftover is harmless.
	dir, err := os.MkdirTemp("", "mk-partitions-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	addr := freePort(b)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "-data", dir, "-listen", addr, "-log-level", "warn", "-durability", "always")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		answerApiVersions(b, addr, 60*time.Second)
		return cmd
	}
	cmd := start()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	var names []string
	for i := range topics {
		names = append(names, fmt.Sprintf("t%03d", i))
	}
	if _, err := adm.CreateTopics(ctx, parts, 1, nil, names...); err != nil {
		b.Fatal(err)
	}
	for _, n := range names {
		for p := range int32(parts) {
			cl.Produce(ctx, &kgo.Record{Topic: n, Partition: p, Value: []byte("v")}, nil)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	cl.Close()
	// The first stop after the writes has every log's index to write.
	t0 := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	first := time.Since(t0)
	cmd = start()
	var stop, restart time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		stop += time.Since(t0)
		t0 = time.Now()
		cmd = start()
		restart += time.Since(t0)
	}
	b.StopTimer()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	b.ReportMetric(float64(first.Milliseconds()), "first-sigterm-ms")
	b.ReportMetric(float64(stop.Milliseconds())/float64(b.N), "sigterm-ms")
	b.ReportMetric(float64(restart.Milliseconds())/float64(b.N), "restart-ms")
}
