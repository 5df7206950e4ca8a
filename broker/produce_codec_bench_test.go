package broker

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// compressibleValue is n bytes of words from a small vocabulary, about 3:1
// with lz4/zstd (like internal/bench's compressible payload: text, JSON).
func compressibleValue(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
		"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", `"id":`, `"ts":`, "{", "}", ",", " "}
	b := make([]byte, 0, n+16)
	for len(b) < n {
		if r.IntN(4) == 0 {
			b = fmt.Append(b, r.IntN(100000))
		} else {
			b = append(b, words[r.IntN(len(words))]...)
		}
	}
	return b[:n]
}

// BenchmarkProduceCodecCPU measures the broker's own CPU per GiB of
// uncompressed record data for each codec, with compressed batches passed
// through (the -validate-compressed-records=false opt-out) and validated
// by streaming through their records (the default): 1 KiB compressible records,
// 64 per batch, 8 partitions each fed by its own goroutine, acks=all,
// durability always on real files. Requests go straight to Serve (no
// client in the process), so the process CPU is the broker's. The extra
// cost of a codec is its cpu-s/GiB minus none's in the same run.
func BenchmarkProduceCodecCPU(b *testing.B) {
	const recSize, perBatch, parts = 1024, 64, 8
	// Each codec's two modes run back to back, so that their difference
	// is measured under the same load on a shared machine.
	for _, codec := range []records.Codec{records.CodecNone, records.CodecLZ4, records.CodecZstd, records.CodecGzip, records.CodecSnappy} {
		for _, full := range []bool{false, true} {
			mode := "passthrough"
			if full {
				mode = "full"
			}
			if full && codec == records.CodecNone {
				continue // uncompressed batches are always validated
			}
			b.Run(mode+"/"+codec.String(), func(b *testing.B) {
				dir := b.TempDir()
				br := newTestBroker(b, func(c *Config) {
					c.DataDir, c.FS = dir, nil
					c.Sync = logstore.SyncPolicy{Mode: logstore.SyncAlways}
					c.PassCompressedRecords = !full
				})
				createTopic(b, br, "t", parts)
				runProduceCPU(b, br, codecBatches(b, codec, parts, perBatch, recSize), recSize*perBatch)
			})
		}
	}
}

// codecBatches builds one produce request per partition of topic "t", each
// a batch of perBatch compressible records in codec.
func codecBatches(b *testing.B, codec records.Codec, parts, perBatch, recSize int) []*kmsg.ProduceRequest {
	reqs := make([]*kmsg.ProduceRequest, parts)
	for p := range reqs {
		recs := make([]records.Record, perBatch)
		for i := range recs {
			recs[i] = records.Record{Value: compressibleValue(recSize, uint64(p*perBatch+i)), TimestampDelta: int64(i)}
		}
		batch, err := records.AppendBatch(nil, records.BatchSpec{Codec: codec, FirstTimestamp: time.Now().UnixMilli(),
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
		if err != nil {
			b.Fatal(err)
		}
		reqs[p] = produceReq(11, -1, "t", [16]byte{}, int32(p), batch)
	}
	return reqs
}

// runProduceCPU serves reqs b.N times in all, one goroutine per request,
// and reports the process CPU per GiB of record data (bytesPer per
// request).
func runProduceCPU(b *testing.B, br *Broker, reqs []*kmsg.ProduceRequest, bytesPer int) {
	b.SetBytes(int64(bytesPer))
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	cpu0 := processCPU()
	b.ResetTimer()
	for p := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				rep := serveReply(br, reqs[p])
				resp := rep.Response
				if rep.Wait != nil {
					resp, _ = rep.Wait()
				}
				if c := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; c != 0 {
					failed.Store(kerr.ErrorForCode(c))
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	reportCPU(b, cpu0, int64(b.N)*int64(bytesPer))
}

// BenchmarkRecompressCPU is what compression.type costs: lz4 batches (1 KiB
// compressible records, 64 per batch, 8 partitions, acks=all, fsync
// always) produced to a topic that keeps the producer's codec, and to
// topics that store zstd, gzip, snappy or uncompressed. The extra cost of
// recompression is a row's cpu-s/GiB minus producer's in the same run.
func BenchmarkRecompressCPU(b *testing.B) {
	const recSize, perBatch, parts = 1024, 64, 8
	for _, ct := range []string{"producer", "zstd", "gzip", "snappy", "uncompressed"} {
		b.Run("lz4-to-"+ct, func(b *testing.B) {
			dir := b.TempDir()
			br := newTestBroker(b, func(c *Config) {
				c.DataDir, c.FS = dir, nil
				c.Sync = logstore.SyncPolicy{Mode: logstore.SyncAlways}
			})
			createTopic(b, br, "t", parts, "compression.type", ct)
			runProduceCPU(b, br, codecBatches(b, records.CodecLZ4, parts, perBatch, recSize), recSize*perBatch)
		})
	}
}
