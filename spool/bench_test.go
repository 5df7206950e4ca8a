package spool

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/vfs"
)

// benchRecords are 256-byte JSON-ish log events: realistic redundancy
// (keys, repeated values, messages made of words) with varying numbers, ids
// and timestamps, so zstd has to work.
// Built once per process.
func benchRecords() [][]byte {
	benchOnce.Do(func() { benchRecs = makeBenchRecords() })
	return benchRecs
}

var (
	benchOnce sync.Once
	benchRecs [][]byte
)

func makeBenchRecords() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	levels := []string{"info", "warn", "error", "debug"}
	// 64Ki distinct records (16 MiB): more than a batch, so zstd cannot
	// find whole records repeated within a segment.
	out := make([][]byte, 1<<16)
	for i := range out {
		b := fmt.Appendf(nil, `{"ts":%d,"level":"%s","host":"edge-%03d","svc":"checkout","trace":"%016x","user":%d,"latency_ms":%d,"path":"/api/v1/orders/%d","msg":"`,
			1764680000000+int64(i)*rng.Int64N(1000), levels[rng.IntN(4)], rng.IntN(50), rng.Uint64(), rng.IntN(1_000_000), rng.IntN(2000), rng.IntN(100000))
		for len(b) < 254 {
			b = append(append(b, benchWords[rng.IntN(len(benchWords))]...), ' ')
		}
		out[i] = append(b[:254], '"', '}')
	}
	return out
}

// BenchmarkAppend256 appends 256-byte records to a spool on the real
// filesystem, with zstd and with zstd plus AES-256-GCM, including the time
// to flush the last batch (every record appended is on disk, fsynced, when
// the clock stops). A consumer-like ack of durable segments every 64Ki
// records keeps the directory small. Reports records/s.
func BenchmarkAppend256(b *testing.B) {
	recs := benchRecords()
	for _, bc := range []struct {
		name   string
		cipher bool
	}{{"zstd", false}, {"zstd+aesgcm", true}} {
		b.Run(bc.name, func(b *testing.B) {
			o := Options{FS: vfs.Default, Dir: b.TempDir(), MaxBytes: 8 << 30, Compression: CodecZstd}
			if bc.cipher {
				o.Cipher = testCipher(b)
			}
			s, _, err := Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(256)
			b.ReportAllocs()
			start, cpu0 := time.Now(), processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Append(recs[i&0xffff]); err != nil {
					b.Fatal(err)
				}
				if i&0xffff == 0xffff {
					if _, err := s.DeleteAcked(s.Stats().DurableSeq - 1); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Flush(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/record")
			}
			st := s.Stats()
			b.ReportMetric(float64(st.DiskBytes)/float64(max(1, st.DiskRecords))/256, "disk/raw")
		})
	}
}

// benchWords is the vocabulary of the records' messages: log text is words,
// not random letters.
var benchWords = strings.Fields(`order payment cart item user session token request response retry
timeout accepted rejected queued shipped cancelled refund invoice customer address warehouse stock
reserved released failed succeeded started finished upstream downstream cache miss hit latency slow
fast error warning notice debug trace span parent child batch flush commit rollback connection
opened closed reset pool worker job scheduled delayed expired renewed validated checksum mismatch
region zone`)

// BenchmarkReadFrom reads sealed zstd segments back in chunks of 1000
// records, as the forwarder does: decode each segment once, serve many reads
// from it. Reports records/s.
func BenchmarkReadFrom(b *testing.B) {
	recs := benchRecords()
	s, _, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), MaxBytes: 8 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 1 << 18
	for i := range n {
		if _, err := s.Append(recs[i&0xffff]); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(256)
	b.ResetTimer()
	start := time.Now()
	seq := int64(0)
	for i := 0; i < b.N; {
		got, err := s.ReadFrom(seq%n, 1000)
		if err != nil || len(got) == 0 {
			b.Fatal(err, len(got))
		}
		i += len(got)
		seq = got[len(got)-1].Last() + 1
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}
