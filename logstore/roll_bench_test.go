//go:build unix

package logstore

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// BenchmarkAppendLatencyRoll is the regression benchmark for produce's
// tail latency across segment rolls (issue 33): 1 KiB records one per
// batch, durability never, on the real filesystem, one appender.
//
// seg=8MiB,paced: 8 MiB segments, appends paced at 10 000/s (a roll about
// every 0.75 s), as a producer at a steady rate sends them. Latency counts
// from when an append was due, so appends held up behind a slow one count
// the wait (no coordinated omission): a roll that fsyncs 8 MiB of dirty
// pages and writes index files under the log's mutex turns into a queue of
// late appends at p99.9.
//
// seg=256KiB: 256 KiB segments, appends back to back, so one append in 250
// rolls and p99.9 is the rolling append's own latency: an fsync and two
// index files under the old code, a file creation now.
//
// cpu-ns/op is the process's CPU
// (user+system, background seals included) per append; roll-max-ns the
// longest of the rolling appends themselves (each segment holds the same
// number of batches, so they are known), call-p99.9-ns and call-max-ns the
// appends' own latencies from the call: p99.9 also counts the scheduling
// delays of a loaded machine. Run with a fixed count, e.g.
// -benchtime=40000x.
func BenchmarkAppendLatencyRoll(b *testing.B) {
	b.Run("seg=8MiB,paced", func(b *testing.B) { benchRoll(b, 8<<20, 100*time.Microsecond) })
	b.Run("seg=256KiB", func(b *testing.B) { benchRoll(b, 256<<10, 0) })
}

func benchRoll(b *testing.B, segmentBytes int64, interval time.Duration) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = segmentBytes
	l, _, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), Config: cfg, Sync: SyncPolicy{Mode: SyncNever}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	val := make([]byte, 1024)
	for i := range val {
		val[i] = byte(i * 13)
	}
	bt, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]records.Record{{Value: val}})
	if err != nil {
		b.Fatal(err)
	}
	perSegment := int(cfg.SegmentBytes) / len(bt) // the append after these rolls
	var rollMax time.Duration
	lat := make([]time.Duration, 0, b.N)
	own := make([]time.Duration, 0, b.N) // from the call, not from when due
	b.SetBytes(int64(len(bt)))
	cpu0 := cpuTime()
	b.ResetTimer()
	next := time.Now()
	for i := 0; i < b.N; i++ {
		now := time.Now()
		if d := next.Sub(now); d > time.Millisecond {
			time.Sleep(d)
			now = time.Now()
		}
		start := now
		if interval > 0 && next.Before(now) {
			start = next // behind schedule: the wait counts
		}
		t0 := time.Now()
		if _, err := l.Append(bt); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		if i > 0 && i%perSegment == 0 {
			rollMax = max(rollMax, end.Sub(t0))
		}
		lat = append(lat, end.Sub(start))
		own = append(own, end.Sub(t0))
		next = next.Add(interval)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	b.ReportMetric(q(0.5), "p50-ns")
	b.ReportMetric(q(0.99), "p99-ns")
	b.ReportMetric(q(0.999), "p99.9-ns")
	b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
	slices.Sort(own)
	b.ReportMetric(float64(own[min(len(own)-1, int(0.999*float64(len(own))))]), "call-p99.9-ns")
	b.ReportMetric(float64(own[len(own)-1]), "call-max-ns")
	b.ReportMetric(float64(rollMax), "roll-max-ns")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(int64(b.N)*int64(len(bt))/cfg.SegmentBytes), "rolls")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
