package minikafka_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
)

// wireRequest encodes a request frame with a v1 or v2 header.
func wireRequest(corr int32, req kmsg.Request) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 0xffff) // null client id
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// roundTrip sends one request on c and decodes the response into resp.
func roundTrip(c net.Conn, corr int32, req kmsg.Request, resp kmsg.Response) error {
	if _, err := c.Write(wireRequest(corr, req)); err != nil {
		return err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:])-4)
	if _, err := io.ReadFull(c, body); err != nil {
		return err
	}
	if got := int32(binary.BigEndian.Uint32(hdr[4:])); got != corr {
		return fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && resp.Key() != 18 {
		body = body[1:] // response header v1 tags
	}
	return resp.ReadFrom(body)
}

// BenchmarkStartToFirstMetadata: Start, connect, and get a Metadata answer
// (the Close afterwards is not timed): in memory; on disk in a fresh
// directory, as every minikafkatest.New is; and reopening a directory
// that was used once.
func BenchmarkStartToFirstMetadata(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		benchStart(b, func() []minikafka.Option { return []minikafka.Option{minikafka.WithInMemory()} })
	})
	for _, d := range []string{"always", "never"} {
		b.Run("fresh-dir-"+d, func(b *testing.B) {
			parent := b.TempDir()
			n := 0
			benchStart(b, func() []minikafka.Option {
				n++
				return []minikafka.Option{minikafka.WithDataDir(fmt.Sprintf("%s/%d", parent, n)), minikafka.WithDurability(d)}
			})
		})
	}
	b.Run("reopen", func(b *testing.B) {
		dir := b.TempDir()
		benchStart(b, func() []minikafka.Option { return []minikafka.Option{minikafka.WithDataDir(dir)} })
	})
}

func benchStart(b *testing.B, opts func() []minikafka.Option) {
	b.ReportAllocs()
	b.StopTimer()
	for range b.N {
		o := append(opts(), minikafka.WithListenAddr("127.0.0.1:0"))
		b.StartTimer()
		br, err := minikafka.Start(context.Background(), o...)
		if err != nil {
			b.Fatal(err)
		}
		c, err := net.Dial("tcp", br.Addr())
		if err != nil {
			b.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		resp := kmsg.NewPtrMetadataResponse()
		if err := roundTrip(c, 1, req, resp); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(resp.Brokers) != 1 {
			b.Fatalf("metadata brokers %+v", resp.Brokers)
		}
		c.Close()
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
