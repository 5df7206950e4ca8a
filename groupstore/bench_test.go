package groupstore

import (
	"sync/atomic"
	"testing"
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
