package logstore

import (
	"slices"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// BenchmarkAppendLatencyCheckpoint is the regression benchmark for
// produce's tail latency while the active segment crosses its recovery
// checkpoint size (issue 33): one appender, 1 KiB records one per batch,
// durability never, on the real filesystem, a checkpoint every 256 KiB so
// that about one append in 250 crosses one. Each op is one Append; the
// p99.9 of their latencies is reported as p99.9-ns. With the checkpoint's
// fsync on the append path (as it was) the crossing appends wait for an
// fsync and p99.9 is a disk flush (milliseconds); off it, p99.9 is an
// ordinary append (microseconds).
func BenchmarkAppendLatencyCheckpoint(b *testing.B) {
	const checkpoint = 256 << 10
	l, _, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), Config: DefaultConfig(),
		Sync: SyncPolicy{Mode: SyncNever}, RecoveryCheckpointBytes: checkpoint})
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
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(bt)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := l.Append(bt); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	b.ReportMetric(q(0.5), "p50-ns")
	b.ReportMetric(q(0.99), "p99-ns")
	b.ReportMetric(q(0.999), "p99.9-ns")
	b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
	b.ReportMetric(float64(int64(b.N)*int64(len(bt))/checkpoint), "checkpoints")
}
