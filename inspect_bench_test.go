package minikafka_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

// How long after a produce is acknowledged a WaitHighWatermark for it
// returns (negative: before the ack reached the client). Reports median
// and p99 in µs.
func BenchmarkWaitHighWatermarkLatency(b *testing.B) {
	ctx := context.Background()
	br, err := minikafka.Start(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(br.Addrs()...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "wl"); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done := make(chan time.Time, 1)
		go func(off int64) {
			if err := br.WaitHighWatermark(ctx, "wl", 0, off); err != nil {
				panic(err)
			}
			done <- time.Now()
		}(int64(i + 1))
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "wl", Value: []byte("x")}).FirstErr(); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		lat = append(lat, (<-done).Sub(acked))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
