package groupstore

import (
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCommitAlways commits 100 partitions per call from many
// goroutines with SyncAlways: concurrent commits share fsyncs.
func BenchmarkCommitAlways(b *testing.B) {
	s, _ := open(b, Options{Dir: b.TempDir(), Sync: SyncAlways})
	defer s.Close()
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		cs := make([]Commit, 100)
		for pb.Next() {
			i := n.Add(1)
			for p := range cs {
				cs[p] = Commit{"topic", int32(p), Offset{Offset: i, LeaderEpoch: -1, ExpireMs: -1}}
			}
			if err := s.Commit("g", cs); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "partition-commits/s")
}

// BenchmarkCommitLatencyAlways is one single-partition commit at a time
// under SyncAlways (one fsync each): p50 and p99.
func BenchmarkCommitLatencyAlways(b *testing.B) {
	s, _ := open(b, Options{Dir: b.TempDir(), Sync: SyncAlways})
	defer s.Close()
	lat := make([]time.Duration, 0, b.N)
	for i := range b.N {
		t0 := time.Now()
		if err := s.Commit("g", []Commit{{"topic", 0, Offset{Offset: int64(i), LeaderEpoch: -1, ExpireMs: -1}}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat)
}

// BenchmarkRawAppendFsync is the floor the store is measured against: a
// 40-byte append plus fsync on a plain file, one at a time.
func BenchmarkRawAppendFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 40)
	lat := make([]time.Duration, 0, b.N)
	for range b.N {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
