package protocol

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
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
			done := make(chan error, 1)
			go func() {
				br := bufio.NewReaderSize(c, 64<<10)
				var hdr [4]byte
				for range b.N {
					if _, err := io.ReadFull(br, hdr[:]); err != nil {
						done <- err
						return
					}
					if _, err := br.Discard(int(binary.BigEndian.Uint32(hdr[:]))); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
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
