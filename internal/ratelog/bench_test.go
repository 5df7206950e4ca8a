package ratelog

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// The cost of one refused request's log line during a flood: through the
// limiter (counted, not written) against slog writing every line.
func BenchmarkFloodLimited(b *testing.B) {
	l := New(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour)
	defer l.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Warn("metadata: invalid topic name", "client", "127.0.0.1:50312", "api", int16(3), "topic", "bad*name")
		}
	})
}

func BenchmarkFloodUnlimited(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			log.Warn("metadata: invalid topic name", "client", "127.0.0.1:50312", "api", int16(3), "topic", "bad*name")
		}
	})
}
