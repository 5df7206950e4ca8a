package broker

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// BenchmarkProducePartitionsCPU is the per-partition produce cost of issue
// 33: the same bytes, in the same batches (16 records of 1 KiB) and
// requests (8 partitions' batches each), produced to a topic of 8 and of
// 1000 partitions, acks=1, durability never, on real files, 2 connections.
// Requests go straight to Serve, so the process CPU is the broker's. An op
// is one request; cpu-ns/byte and allocs/record are the figures to watch:
// the 1000-partition row should stay within 1.2x of the 8-partition one
// (what grows with the partition count is what this catches).
//
// The third case writes the 1000-partition topic with 4 more 1000-partition
// topics already written (5000 logs open, their active segments in the file
// cache), as mkbench's runs leave the broker: a cost that grows with what
// the node holds, not with the partitions written, shows there.
func BenchmarkProducePartitionsCPU(b *testing.B) {
	for _, c := range []struct{ parts, others int }{{8, 0}, {1000, 0}, {1000, 4}} {
		name := fmt.Sprintf("partitions=%d", c.parts)
		if c.others > 0 {
			name += fmt.Sprintf(",other-topics=%d", c.others)
		}
		b.Run(name, func(b *testing.B) {
			benchProducePartitions(b, c.parts, c.others)
		})
	}
}

func benchProducePartitions(b *testing.B, parts, others int) {
	const recSize, perBatch, perReq, conns = 1024, 16, 8, 2
	br := newTestBroker(b, func(c *Config) {
		c.DataDir, c.FS = b.TempDir(), nil
		c.Sync = logstore.SyncPolicy{Mode: logstore.SyncNever}
	})
	createTopic(b, br, "t", int32(parts))
	recs := make([]records.Record, perBatch)
	for i := range recs {
		recs[i] = records.Record{Value: compressibleValue(recSize, uint64(i)), TimestampDelta: int64(i)}
	}
	batch, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	for o := range others {
		// One batch to every partition of another 1000-partition topic.
		name := fmt.Sprintf("o%d", o)
		createTopic(b, br, name, 1000)
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 11, 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = name
		for p := range 1000 {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = int32(p)
			rp.Records = append([]byte(nil), batch...)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		for _, p := range serveReply(br, req).Response.(*kmsg.ProduceResponse).Topics[0].Partitions {
			if p.ErrorCode != 0 {
				b.Fatal(kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	// Request i holds partitions 8i..8i+7 mod parts, so every partition
	// is written in turn, as a spreading producer does. The broker
	// rewrites a batch's header in place as it appends it, one partition
	// after the other, so a connection's requests share one batch buffer
	// (hot in cache, as bytes just read from a socket are), and each
	// connection has its own.
	nreq := max(1, parts/perReq)
	reqs := make([][]*kmsg.ProduceRequest, conns)
	for c := range reqs {
		own := append([]byte(nil), batch...)
		for i := 0; i < nreq; i++ {
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = 11, 1, 5000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "t"
			for j := 0; j < perReq; j++ {
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Partition = int32((i*perReq + j + c*parts/2) % parts)
				rp.Records = own
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			reqs[c] = append(reqs[c], req)
		}
	}
	bytesPer := int64(perReq * perBatch * recSize)
	b.SetBytes(bytesPer)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := processCPU()
	b.ResetTimer()
	for c := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				resp := serveReply(br, reqs[c][i%len(reqs[c])]).Response.(*kmsg.ProduceResponse)
				for _, p := range resp.Topics[0].Partitions {
					if p.ErrorCode != 0 {
						failed.Store(kerr.ErrorForCode(p.ErrorCode))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&ms1)
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	total := float64(b.N) * float64(bytesPer)
	b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/byte")
	b.ReportMetric(cpu.Seconds()/(total/(1<<30)), "cpu-s/GiB")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/(float64(b.N)*perReq*perBatch), "allocs/record")
}
