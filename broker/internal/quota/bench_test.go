package quota

import (
	"testing"
	"time"
)

// BenchmarkRateRecord is one sensor recording (a produce's bytes).
func BenchmarkRateRecord(b *testing.B) {
	r := NewRate(DefaultWindow, time.Now())
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Record(1000, 1e15, now.Add(time.Duration(i)*time.Microsecond))
	}
}

// BenchmarkResolve is a connection's quota lookup when its cache is stale
// (the worst case: all eight levels probed, the last one matching).
func BenchmarkResolve(b *testing.B) {
	s := NewSet([]Entry{{Entity: Entity{{Type: TypeClient}}, Values: map[string]float64{ProducerByteRate: 1}}}, 1)
	b.ReportAllocs()
	for b.Loop() {
		s.Resolve(ProducerByteRate, "alice", "app")
	}
}
