package logstore

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// BenchmarkCompact measures one cleaning pass over a log of
// COMPACT_BENCH_MB (default 64) MiB of sealed 8 MiB segments on the OS
// filesystem (page cache): batches of 64 records with 200-byte values over
// 50,000 random keys, so most records are superseded. Each iteration cleans
// a fresh copy. In the same run it reads the same segment files
// sequentially (1 MiB reads, no parsing) as the baseline: clean-MiB/s is
// log bytes cleaned per second, read-MiB/s the baseline, x-read their
// ratio; the cpu-s/GiB figures (process CPU time) are steadier than wall
// time on a shared machine.
func BenchmarkCompact(b *testing.B) {
	for _, codec := range []records.Codec{records.CodecNone, records.CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) { benchCompact(b, codec) })
	}
}

func benchCompact(b *testing.B, codec records.Codec) {
	size := int64(64 << 20)
	if s := os.Getenv("COMPACT_BENCH_MB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			size = int64(n) << 20
		}
	}
	root := b.TempDir()
	tmpl := filepath.Join(root, "template")
	cfg := DefaultConfig()
	cfg.SegmentBytes = 8 << 20
	cfg.RetentionMs = -1
	l, _, err := Open(Options{FS: vfs.Default, Dir: tmpl, Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 200)
	recs := make([]records.Record, 64)
	ts := time.Now().UnixMilli()
	for l.Size() < size {
		for i := range recs {
			for j := range val {
				val[j] = byte('a' + rng.IntN(26))
			}
			recs[i] = records.Record{TimestampDelta: int64(i), Key: []byte(fmt.Sprintf("key-%06d", rng.IntN(50000))), Value: append([]byte(nil), val...)}
		}
		batch, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: codec}, recs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	logBytes := l.Size()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}

	var cleanDur, readDur, cleanCPU, readCPU time.Duration
	var recordsCleaned, removed int64
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(root, fmt.Sprint("run", i))
		copyDir(b, tmpl, dir)
		l, _, err := Open(Options{FS: vfs.Default, Dir: dir, Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		res, err := l.Compact(CompactOptions{})
		cleanDur += time.Since(start)
		cleanCPU += processCPU() - cpu0
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		recordsCleaned += res.Records
		removed += res.Removed
		l.Close()
		os.RemoveAll(dir)
		start, cpu0 = time.Now(), processCPU()
		readSegments(b, tmpl)
		readDur += time.Since(start)
		readCPU += processCPU() - cpu0
	}
	mib := float64(logBytes) * float64(b.N) / (1 << 20)
	b.ReportMetric(mib/cleanDur.Seconds(), "clean-MiB/s")
	b.ReportMetric(float64(recordsCleaned)/cleanDur.Seconds(), "records/s")
	b.ReportMetric(mib/readDur.Seconds(), "read-MiB/s")
	b.ReportMetric(readDur.Seconds()/cleanDur.Seconds(), "x-read")
	b.ReportMetric(float64(removed)/float64(recordsCleaned), "removed-frac")
	gib := mib / 1024
	b.ReportMetric(cleanCPU.Seconds()/gib, "clean-cpu-s/GiB")
	b.ReportMetric(readCPU.Seconds()/gib, "read-cpu-s/GiB")
}

func copyDir(b *testing.B, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			b.Fatal(err)
		}
		src.Close()
		// Synced now, so the clean's fsyncs do not also flush the copy.
		if err := dst.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := dst.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the process's user+system CPU time (the benchmark runs
// nothing else meanwhile), steadier than wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readSegments reads every .log file in dir sequentially, 1 MiB at a time.
func readSegments(b *testing.B, dir string) {
	buf := make([]byte, 1<<20)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".log" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := f.Read(buf); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
