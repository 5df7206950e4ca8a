package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
)

// BenchmarkCLIVsKcat: `minikafka produce` of 1 M 100-byte lines from
// stdin, then `minikafka consume -n 1000000`, against kcat doing the same
// (idempotent producer, acks=all, for both), each as its own process
// against one in-memory broker, alternating. Reported as records/s per
// tool and direction; -benchtime 1x runs each once per b.N.
//
//	go test -run XXX -bench CLIVsKcat -benchtime 3x ./cmd/minikafka
func BenchmarkCLIVsKcat(b *testing.B) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		b.Fatalf("kcat is not installed (%v); run: bash compat_test/install.sh", err)
	}
	const n, size = 1_000_000, 100
	dir := b.TempDir()
	bin := filepath.Join(dir, "minikafka")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	lines := filepath.Join(dir, "lines")
	f, err := os.Create(lines)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "%0*d\n", size, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	br, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	addr := br.Addrs()[0]
	timed := func(stdin string, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		if stdin != "" {
			in, err := os.Open(stdin)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			cmd.Stdin = in
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
		}
		return time.Since(start)
	}
	rate := map[string]float64{}
	for i := range b.N {
		for _, tool := range []string{"minikafka", "kcat"} {
			topic := fmt.Sprintf("%s-%d", tool, i)
			timed("", bin, "topic", "create", topic, "-p", "4", "-b", addr)
			var prod, cons time.Duration
			if tool == "minikafka" {
				prod = timed(lines, bin, "produce", topic, "-b", addr)
				cons = timed("", bin, "consume", topic, "-n", fmt.Sprint(n), "-b", addr)
			} else {
				prod = timed(lines, kcat, "-P", "-b", addr, "-t", topic, "-X", "enable.idempotence=true", "-X", "acks=all")
				cons = timed("", kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-c", fmt.Sprint(n), "-e", "-q")
			}
			rate[tool+"-produce"] += float64(n) / prod.Seconds()
			rate[tool+"-consume"] += float64(n) / cons.Seconds()
			timed("", bin, "topic", "delete", topic, "-b", addr)
		}
	}
	for k, v := range rate {
		b.ReportMetric(v/float64(b.N), k+"-rec/s")
	}
	b.ReportMetric(rate["minikafka-produce"]/rate["kcat-produce"], "produce-ratio")
	b.ReportMetric(rate["minikafka-consume"]/rate["kcat-consume"], "consume-ratio")
}
