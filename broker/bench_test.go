package broker

// Benchmarks against kfake (franz-go's in-process fake broker) with the
// same kgo client in the same run. Both brokers run in this process, so
// ns/op includes the client's work; compare the minikafka/kfake pairs.
//
//	go test ./broker -run XXX -bench 'Produce|Consume' -benchtime 200000x
//
// Produce: acks=all (kgo's default, idempotent), minikafka with durability
// "never" on real files.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

type benchPeer struct {
	name  string
	start func(b *testing.B, topic string, parts int32) string // returns the seed address
}

var benchPeers = peers(false)

// peers returns minikafka on real files and in-memory kfake, or with
// fsyncAlways minikafka under durability "always" and kfake persisting to
// disk with SyncWrites (an fsync per batch).
func peers(fsyncAlways bool) []benchPeer {
	return []benchPeer{
		{"minikafka", func(b *testing.B, topic string, parts int32) string {
			br := newTestBroker(b, func(c *Config) {
				c.FS, c.DataDir = vfs.Default, b.TempDir()
				c.Sync = logstore.SyncPolicy{Mode: logstore.SyncNever}
				if fsyncAlways {
					c.Sync.Mode = logstore.SyncAlways
				}
			})
			createTopic(b, br, topic, parts)
			return listen(b, br)
		}},
		{"kfake", func(b *testing.B, topic string, parts int32) string {
			opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(parts, topic)}
			if fsyncAlways {
				opts = append(opts, kfake.DataDir(b.TempDir()), kfake.SyncWrites())
			}
			c, err := kfake.NewCluster(opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			return c.ListenAddrs()[0]
		}},
	}
}

// produceSpread sends n records of value spread over clients, waits for
// every acknowledgement and fails b if any record failed.
func produceSpread(b *testing.B, clients []*kgo.Client, n int, value []byte) {
	var failed atomic.Int64
	var wg sync.WaitGroup
	for p, cl := range clients {
		k := n / len(clients)
		if p == 0 {
			k += n % len(clients)
		}
		wg.Add(k)
		go func() {
			for i := 0; i < k; i++ {
				cl.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.Add(1)
					}
					wg.Done()
				})
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d records failed", failed.Load())
	}
}

func benchProduce(b *testing.B, recSize int, parts int32, producers int) {
	benchProducePeers(b, benchPeers, recSize, parts, producers)
}

func benchProducePeers(b *testing.B, peers []benchPeer, recSize int, parts int32, producers int) {
	for _, peer := range peers {
		b.Run(peer.name, func(b *testing.B) {
			const topic = "bench"
			addr := peer.start(b, topic, parts)
			clients := make([]*kgo.Client, producers)
			for i := range clients {
				clients[i] = newClient(b, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
				// Warm up: metadata, producer ID, connections.
				if err := clients[i].ProduceSync(context.Background(), &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
			value := make([]byte, recSize)
			b.SetBytes(int64(recSize))
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			produceSpread(b, clients, b.N, value)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rec/s")
			reportCPU(b, cpu0, int64(b.N)*int64(recSize))
		})
	}
}

// BenchmarkProduce100B: 100-byte records, 1 partition, 1 producer.
func BenchmarkProduce100B(b *testing.B) { benchProduce(b, 100, 1, 1) }

// BenchmarkProduce1KiB8P2: 1 KiB records, 8 partitions, 2 producers.
func BenchmarkProduce1KiB8P2(b *testing.B) { benchProduce(b, 1024, 8, 2) }

// BenchmarkProduce1KiB8P2Always: as above with durability "always" (acks=all
// answered after fsync); kfake with SyncWrites.
func BenchmarkProduce1KiB8P2Always(b *testing.B) { benchProducePeers(b, peers(true), 1024, 8, 2) }

// BenchmarkConsume: one consumer reads 64 MiB of 1 KiB records from offset
// 0 per iteration (the data is produced once, untimed).
func BenchmarkConsume(b *testing.B) { benchConsumePeers(b, benchPeers, 64<<20, 50<<20, 10<<20) }

// benchConsumePeers produces total bytes of 1 KiB records to each peer
// once, then times re-reading them all with fetches of at most
// fetchBytes (partBytes per partition).
func benchConsumePeers(b *testing.B, peers []benchPeer, total int, fetchBytes, partBytes int32) {
	const recSize = 1024
	n := total / recSize
	for _, peer := range peers {
		b.Run(peer.name, func(b *testing.B) {
			const topic = "bench"
			addr := peer.start(b, topic, 1)
			cl := newClient(b, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
			value := make([]byte, recSize)
			var wg sync.WaitGroup
			wg.Add(n)
			for i := 0; i < n; i++ {
				cl.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						panic(err)
					}
					wg.Done()
				})
			}
			wg.Wait()
			b.SetBytes(int64(total))
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cons := newClient(b, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
					kgo.FetchMaxBytes(fetchBytes), kgo.FetchMaxPartitionBytes(partBytes))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				got := 0
				for got < n {
					fs := cons.PollFetches(ctx)
					if ctx.Err() != nil {
						b.Fatalf("consumed %d of %d", got, n)
					}
					if errs := fs.Errors(); len(errs) > 0 {
						b.Fatal(fmt.Sprint(errs))
					}
					got += fs.NumRecords()
				}
				cancel()
				cons.Close()
			}
			b.StopTimer()
			reportCPU(b, cpu0, int64(b.N)*int64(total))
		})
	}
}

// processCPU is this process's user+system CPU time. Broker and client share
// the process, so the figure is for both; with the same client on both
// sides, the difference between the peers is the brokers' difference.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, cpu0 time.Duration, bytes int64) {
	if bytes > 0 {
		b.ReportMetric((processCPU()-cpu0).Seconds()/(float64(bytes)/(1<<30)), "cpu-s/GiB")
	}
}
