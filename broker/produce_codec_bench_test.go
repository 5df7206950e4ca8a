package broker

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/recordcheck"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
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

// BenchmarkValidateVsDecode sets produce validation beside the codec's own
// decode, in process, per codec, on one batch of 64 compressible 1 KiB
// records compressed as kgo compresses (pierrec lz4 frame with content
// checksum; zstd EncodeAll, 64 KiB window; s2.EncodeSnappy; gzip):
//
//   - decode: the codec's decoder, reused (Reset), streaming to io.Discard
//     (snappy: s2.Decode of the block into a reused buffer);
//   - validate: the broker's check of the batch (the Scanner through the
//     slot's decoders, every record's fields and lengths, timestamps).
//
// MB/s are of uncompressed records; cpu-ns/op is process CPU (immune to
// other processes on a shared machine). ratio runs both alternately, 50
// batches each per round, and reports validate/decode CPU: the issue's
// target is ≤ 1.2.
func BenchmarkValidateVsDecode(b *testing.B) {
	recs := make([]records.Record, 64)
	for i := range recs {
		recs[i] = records.Record{Value: compressibleValue(1024, uint64(i)), TimestampDelta: int64(i)}
	}
	plain, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	h, _ := records.Validate(plain)
	raw := plain[records.BatchHeaderLen:]
	cfg, err := topicconfig.Parse(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, codec := range []records.Codec{records.CodecLZ4, records.CodecZstd, records.CodecSnappy, records.CodecGzip} {
		body := kgoCompress(b, codec, raw)
		batch, err := records.AppendBody(nil, h, codec, body)
		if err != nil {
			b.Fatal(err)
		}
		bh, err := records.Validate(batch)
		if err != nil {
			b.Fatal(err)
		}
		decode := codecDecoder(b, codec, len(raw))
		validate := func() {
			if _, err := recordcheck.Check(&bh, batch, "t", 0, false, false, cfg, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		if n := decode(body); n != len(raw) {
			b.Fatalf("%s decodes to %d bytes, want %d", codec, n, len(raw))
		}
		for _, m := range []struct {
			name string
			run  func()
		}{{"decode", func() { decode(body) }}, {"validate", validate}} {
			b.Run(codec.String()+"/"+m.name, func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					m.run()
				}
				reportCPUPerOp(b, cpu0)
			})
		}
		b.Run(codec.String()+"/ratio", func(b *testing.B) {
			var dec, val time.Duration
			for b.Loop() {
				c0 := processCPU()
				for range 50 {
					decode(body)
				}
				c1 := processCPU()
				for range 50 {
					validate()
				}
				c2 := processCPU()
				dec, val = dec+c1-c0, val+c2-c1
			}
			b.ReportMetric(float64(val)/float64(dec), "validate/decode")
		})
	}
}

// kgoCompress compresses raw as franz-go's producer does.
func kgoCompress(b *testing.B, codec records.Codec, raw []byte) []byte {
	var buf bytes.Buffer
	switch codec {
	case records.CodecLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case records.CodecZstd:
		e, err := zstd.NewWriter(nil, zstd.WithWindowSize(64<<10), zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
		if err != nil {
			b.Fatal(err)
		}
		return e.EncodeAll(raw, nil)
	case records.CodecSnappy:
		return s2.EncodeSnappy(nil, raw)
	case records.CodecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	}
	return buf.Bytes()
}

// codecDecoder returns a function decoding a body with codec's own
// decoder, reused across calls, to io.Discard; it returns the bytes out.
func codecDecoder(b *testing.B, codec records.Codec, size int) func([]byte) int {
	var br bytes.Reader
	switch codec {
	case records.CodecLZ4:
		zr := lz4.NewReader(nil)
		return func(body []byte) int {
			br.Reset(body)
			zr.Reset(&br)
			n, err := io.Copy(io.Discard, zr)
			if err != nil {
				b.Fatal(err)
			}
			return int(n)
		}
	case records.CodecZstd:
		zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			b.Fatal(err)
		}
		return func(body []byte) int {
			br.Reset(body)
			if err := zr.Reset(&br); err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, zr)
			if err != nil {
				b.Fatal(err)
			}
			return int(n)
		}
	case records.CodecSnappy:
		dst := make([]byte, size)
		return func(body []byte) int {
			out, err := s2.Decode(dst, body)
			if err != nil {
				b.Fatal(err)
			}
			return len(out)
		}
	case records.CodecGzip:
		var zr gzip.Reader
		return func(body []byte) int {
			br.Reset(body)
			if err := zr.Reset(&br); err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, &zr)
			if err != nil {
				b.Fatal(err)
			}
			return int(n)
		}
	}
	b.Fatalf("no decoder for %s", codec)
	return nil
}
