package broker

import (
	"context"
	"crypto/rand"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A consumer limited by consumer_byte_rate reads at that rate within 10 %
// (fetch answers over it come back empty with throttle_time_ms, as
// Kafka's), measured from 1 s to 5 s of a kgo consumer reading a full
// topic.
func TestFetchQuotaKgo(t *testing.T) {
	const limit = 1 << 20
	b := newTestBroker(t, func(c *Config) {
		c.QuotaWindowSamples, c.QuotaWindowSize = 11, 50*time.Millisecond
	})
	addr := listen(t, b)
	createTopic(t, b, "fq", 1)
	// Batches of one record, fetches of one batch: a throttled fetch is
	// answered empty, so an answer only goes out when the window has room
	// for it, and the rate stays below the quota by about one answer per
	// window (Kafka's window, 11 MiB at 1 MiB/s, makes that nothing; the
	// 11 × 50 ms here, 550 KiB, leaves it about 5 % below).
	prod := newClient(t, addr, kgo.DefaultProduceTopic("fq"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(20<<10))
	val := make([]byte, 16<<10)
	for i := 0; i < 640; i++ { // 10 MiB, more than 5 s at the limit
		rand.Read(val)
		prod.Produce(context.Background(), &kgo.Record{Value: append([]byte(nil), val...)}, nil)
	}
	if err := prod.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	alterQuota(t, newAdmin(t, addr), kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("reader")}},
		kadm.AlterClientQuotaOp{Key: "consumer_byte_rate", Value: limit})
	var throttles throttleCounter
	cons := newClient(t, addr, kgo.ClientID("reader"), kgo.ConsumeTopics("fq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(20<<10), kgo.FetchMaxPartitionBytes(20<<10), kgo.WithHooks(&throttles))
	ctx := testCtx(t)
	var read, atFrom int64 = 0, -1
	start := time.Now()
	for time.Since(start) < 5*time.Second {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { read += int64(len(r.Value)) })
		if atFrom < 0 && time.Since(start) >= time.Second {
			atFrom = read
		}
	}
	rate := float64(read-atFrom) / (time.Since(start) - time.Second).Seconds()
	t.Logf("fetch rate %.0f B/s, limit %d (%.1f%%), %d throttled answers", rate, limit, 100*rate/limit, throttles.n.Load())
	if rate < 0.9*limit || rate > 1.1*limit {
		t.Fatalf("fetch rate %.0f B/s is not within 10%% of %d", rate, limit)
	}
	if throttles.n.Load() == 0 {
		t.Fatal("no fetch answer carried throttle_time_ms")
	}
}

type throttleCounter struct{ n atomic.Int64 }

func (h *throttleCounter) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// request_percentage: a client over its share of handler time gets
// throttle_time_ms, at most one quota window (Kafka caps the request
// quota's throttle there).
func TestRequestQuota(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.QuotaWindowSamples, c.QuotaWindowSize = 2, 300*time.Millisecond })
	addr := listen(t, b)
	alterQuota(t, newAdmin(t, addr), kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("busy")}},
		kadm.AlterClientQuotaOp{Key: "request_percentage", Value: 0.0001})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var max int32
	for i := int32(1); i <= 5; i++ {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		writeReq(t, nc, "busy", i, md)
		r := kmsg.NewPtrMetadataResponse()
		r.Version = 9
		readResp(t, nc, r, i)
		if r.ThrottleMillis > max {
			max = r.ThrottleMillis
		}
	}
	if max <= 0 || max > 300 {
		t.Fatalf("largest throttle_time_ms %d, want in (0, 300]", max)
	}
}
