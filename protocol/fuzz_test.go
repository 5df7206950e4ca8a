package protocol

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzSeeds are valid frames, frames cut short, and malformed ones.
func fuzzSeeds() [][]byte {
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "fuzz", "1"
	md := metadataReq(12, "a", "b")
	prod := kmsg.NewPtrProduceRequest()
	prod.Version = 9
	prod.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = []byte{0, 1, 2, 3}
	pt.Partitions = append(pt.Partitions, pp)
	prod.Topics = append(prod.Topics, pt)

	valid := frame(1, kmsg.StringPtr("c"), av)
	meta := frame(2, nil, md, []byte("tag"))
	var big [4]byte
	binary.BigEndian.PutUint32(big[:], 1<<30)
	return [][]byte{
		valid,
		meta,
		frame(3, kmsg.StringPtr("p"), prod),
		append(append([]byte{}, valid...), meta...),
		valid[:len(valid)-1],
		rawFrame(18, 99, 4, []byte{0, 0, 0}),
		rawFrame(9999, 0, 5, nil),
		rawFrame(3, 1, 6, []byte{0, 5, 'x'}),
		big[:],
		{0xff, 0xff, 0xff, 0xff},
		{},
	}
}

// FuzzServerFrames throws arbitrary bytes at a live server, then checks
// that the server only ever wrote whole frames, closed the connection
// after the client's EOF, and still answers ApiVersions on a fresh
// connection.
func FuzzServerFrames(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	s := startServer(f, Config{MaxRequestBytes: 1 << 20}, &fakeHandler{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		// A write may fail once the server has closed on bad input.
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
		out, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("server did not close the connection after EOF")
		}
		for len(out) > 0 {
			if len(out) < 8 {
				t.Fatalf("partial response frame: % x", out)
			}
			n := binary.BigEndian.Uint32(out)
			if uint64(n) > uint64(len(out)-4) {
				t.Fatalf("partial response frame: length %d, %d bytes left", n, len(out)-4)
			}
			out = out[4+n:]
		}
		apiVersionsRoundTrip(t, s)
	})
}
