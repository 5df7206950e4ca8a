package broker

// Transaction and idempotence benchmarks.
//
//	go test ./broker -run XXX -bench 'TxnProduce|IdempotenceCost' -benchtime 200x
//
// BenchmarkTxnProduce: one iteration is one transaction of 100 records of
// 1 KiB to one partition, committed; minikafka with durability "always"
// (every transactional step durable before it is acknowledged) against
// kfake persisting with SyncWrites, in the same run.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

func BenchmarkTxnProduce(b *testing.B) {
	const perTxn, size = 100, 1024
	for _, peer := range peers(true) {
		b.Run(peer.name, func(b *testing.B) {
			const topic = "txbench"
			addr := peer.start(b, topic, 1)
			cl := newClient(b, addr, kgo.DefaultProduceTopic(topic), kgo.TransactionalID("bench-"+peer.name),
				kgo.ProducerBatchCompression(kgo.NoCompression()))
			ctx := context.Background()
			value := make([]byte, size)
			txn := func() {
				if err := cl.BeginTransaction(); err != nil {
					b.Fatal(err)
				}
				var failed atomic.Int64
				var wg sync.WaitGroup
				wg.Add(perTxn)
				for i := 0; i < perTxn; i++ {
					cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
						if err != nil {
							failed.Add(1)
						}
						wg.Done()
					})
				}
				wg.Wait()
				if failed.Load() > 0 {
					b.Fatalf("%d records failed", failed.Load())
				}
				if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
					b.Fatal(err)
				}
			}
			txn() // warm up: producer ID, coordinator, connections
			b.SetBytes(perTxn * size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				txn()
			}
			b.StopTimer()
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/s, "txn/s")
			b.ReportMetric(float64(b.N*perTxn)/s, "rec/s")
		})
	}
}

// BenchmarkIdempotenceCost: acks=all produce of 1 KiB records to 8
// partitions from 2 producers, idempotent (kgo's default) against plain,
// minikafka on real files with durability "never" so that the broker's
// per-batch work, not the disk, is what is compared.
func BenchmarkIdempotenceCost(b *testing.B) {
	for _, idem := range []bool{true, false} {
		b.Run(fmt.Sprintf("idempotent=%v", idem), func(b *testing.B) {
			br := newTestBroker(b, func(c *Config) {
				c.FS, c.DataDir = vfs.Default, b.TempDir()
				c.Sync = logstore.SyncPolicy{Mode: logstore.SyncNever}
			})
			createTopic(b, br, "idem", 8)
			addr := listen(b, br)
			opts := []kgo.Opt{kgo.DefaultProduceTopic("idem"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks())}
			if !idem {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
			clients := []*kgo.Client{newClient(b, addr, opts...), newClient(b, addr, opts...)}
			for _, cl := range clients {
				if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			value := make([]byte, 1024)
			b.SetBytes(1024)
			b.ResetTimer()
			produceSpread(b, clients, b.N, value)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rec/s")
		})
	}
}
