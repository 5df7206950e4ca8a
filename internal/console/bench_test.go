package console_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// BenchmarkBrowserPage measures, in Chromium, how long the message
// browser takes from clicking Go to 50 rows painted, for pages at random
// offsets of one big partition: MINIKAFKA_CONSOLE_BENCH_MIB MiB (default
// 1024) of 1 KiB records, built once before the clock starts.
//
//	go test ./console -run '^$' -bench BrowserPage -benchtime 50x
func BenchmarkBrowserPage(b *testing.B) {
	chromium(b)
	mib := 1024
	if v := os.Getenv("MINIKAFKA_CONSOLE_BENCH_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MINIKAFKA_CONSOLE_BENCH_MIB=%q", v)
		}
		mib = n
	}
	br := minikafkatest.New(b, minikafka.WithHTTPAddr("127.0.0.1:0"), minikafka.WithTopic("big", 1))
	cl := minikafkatest.Client(b, br, kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(1<<16),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the partition's bytes on disk are the records' bytes
	ctx := context.Background()
	value := make([]byte, 1024)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	records := mib << 10 // 1 KiB each
	start := time.Now()
	errs := make(chan error, 1)
	for i := range records {
		cl.Produce(ctx, &kgo.Record{Topic: "big", Key: strconv.AppendInt(nil, int64(i), 10), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	built := time.Since(start)
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == "big" {
				size += p.Size
			}
		})
	})
	end, _ := ends.Lookup("big", 0)
	if end.Offset != int64(records) {
		b.Fatalf("end offset %d, want %d", end.Offset, records)
	}
	b.Logf("built a partition of %d records, %.1f MiB in its log, in %v", records, float64(size)/(1<<20), built.Round(time.Millisecond))

	page := newBrowser(b, "http://"+br.HTTPAddr().String())
	page.open("/browse/big?partition=0")
	page.waitText("#count", "50 records")
	var ms []float64
	for b.Loop() { // b.Loop runs the setup above once
		off := rand.IntN(records - 50)
		ms = append(ms, page.timePage(strconv.Itoa(off)))
	}
	slices.Sort(ms)
	p50, p99 := ms[len(ms)/2], ms[min(len(ms)-1, len(ms)*99/100)]
	b.ReportMetric(p50, "ms/page-p50")
	b.ReportMetric(p99, "ms/page-p99")
	b.ReportMetric(ms[len(ms)-1], "ms/page-max")
	if p50 >= 200 {
		b.Errorf("median page render %.1f ms, want < 200 ms", p50)
	}
}
