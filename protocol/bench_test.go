package protocol

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkPipelined measures the server's per-request overhead: small
// produce-sized requests pipelined 16 deep on one connection, answered
// at once by a handler that returns a prebuilt response.
func BenchmarkPipelined(b *testing.B) {
	for _, size := range []int{100, 16 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			resp := kmsg.NewPtrProduceResponse()
			resp.Version = 9
			h := HandlerFunc(func(_ context.Context, req *Request) Reply { return Reply{Response: resp} })
			s := startServer(b, Config{}, h)
			c := dial(b, s)
			c.SetDeadline(time.Time{})

			f := produceFrame(1, size)

			const window = 16
			done := readResponses(c, b.N, nil)
			b.SetBytes(int64(len(f)))
			b.ResetTimer()
			bw := bufio.NewWriterSize(c, 64<<10)
			for i := range b.N {
				bw.Write(f)
				if i%window == window-1 {
					bw.Flush()
				}
			}
			bw.Flush()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkFrameRead is the cost of reading large produce frames whose
// sizes vary from one request to the next, as a producer's do (256 KiB to
// 6 MiB, one connection, 4 in flight): the frame-read path the request
// budget sits on. CPU-ns/B is the process's CPU time (client and server,
// both in this process) per frame byte; B/op and allocs/op show buffers
// grown or allocated instead of reused. A regression here is what cost
// the broker +70 % produce CPU once (issue 33).
func BenchmarkFrameRead(b *testing.B) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	h := HandlerFunc(func(_ context.Context, req *Request) Reply { return Reply{Response: resp} })
	s := startServer(b, Config{}, h)
	c := dial(b, s)
	c.SetDeadline(time.Time{})
	rng := rand.New(rand.NewPCG(1, 2))
	frames := make([][]byte, 32)
	var total int64
	for i := range frames {
		frames[i] = produceFrame(int32(i), 256<<10+rng.IntN(6<<20-256<<10))
		total += int64(len(frames[i]))
	}
	const window = 4
	sem := make(chan struct{}, window)
	done := readResponses(c, b.N, sem)
	b.ReportAllocs()
	b.SetBytes(total / int64(len(frames)))
	cpu0 := processCPU()
	b.ResetTimer()
	var sent int64
	for i := range b.N {
		sem <- struct{}{}
		f := frames[i%len(frames)]
		if _, err := c.Write(f); err != nil {
			b.Fatal(err)
		}
		sent += int64(len(f))
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(sent), "CPU-ns/B")
}

// BenchmarkFrameReadHuge: produce frames of 17-34 MiB, the requests kgo
// sends to a topic of 1000 partitions (one batch per partition, grown as
// the producer speeds up), two connections at a time, each replaced by a
// new one (untrusted: its first frame is read in growth mode) every four
// frames, as mkbench's runs do. faults/MiB is the page faults the process
// took per MiB read: a huge frame read into fresh memory faults in and
// zeroes every page (issue 33's 1000-partition produce CPU).
func BenchmarkFrameReadHuge(b *testing.B) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	h := HandlerFunc(func(_ context.Context, req *Request) Reply { return Reply{Response: resp} })
	s := startServer(b, Config{}, h)
	sizes := []int{17 << 20, 23 << 20, 28 << 20, 34 << 20}
	frames := make([][]byte, len(sizes))
	var total int64
	for i, n := range sizes {
		frames[i] = produceFrame(int32(i), n)
		total += int64(len(frames[i]))
	}
	b.SetBytes(total / int64(len(frames)))
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	cpu0 := processCPU()
	b.ResetTimer()
	var sent atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(next.Load()), 7))
			for next.Load() < int64(b.N) {
				c := dial(b, s)
				c.SetDeadline(time.Time{})
				for k := 0; k < 4 && next.Add(1) <= int64(b.N); k++ {
					f := frames[rng.IntN(len(frames))]
					if _, err := c.Write(f); err != nil {
						b.Error(err)
						return
					}
					mustReadFrame(b, c)
					sent.Add(int64(len(f)))
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	b.ReportMetric(float64(processCPU()-cpu0)/float64(sent.Load()), "CPU-ns/B")
	b.ReportMetric(float64(ru1.Minflt-ru0.Minflt)/(float64(sent.Load())/(1<<20)), "faults/MiB")
}

// processCPU is the process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readResponses reads and discards n response frames from c in the
// background, taking a slot back from sem (if set) after each; the channel
// gets the first error, or nil after the n-th.
func readResponses(c io.Reader, n int, sem chan struct{}) <-chan error {
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(c, 64<<10)
		var hdr [4]byte
		for range n {
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				done <- err
				return
			}
			if _, err := br.Discard(int(binary.BigEndian.Uint32(hdr[:]))); err != nil {
				done <- err
				return
			}
			if sem != nil {
				<-sem
			}
		}
		done <- nil
	}()
	return done
}
