package broker

import (
	"bytes"
	"fmt"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// The hand-written Fetch encoding (with record bytes sent from files) must
// be byte for byte what kmsg encodes, at every version we serve, on the
// copy path (memory FS) and the sendfile path (OS files over TCP).
func TestFetchBodyMatchesKmsg(t *testing.T) {
	for _, osfs := range []bool{false, true} {
		t.Run(fmt.Sprintf("osfs=%v", osfs), func(t *testing.T) {
			b := newTestBroker(t, func(c *Config) {
				if osfs {
					c.FS, c.DataDir = vfs.Default, t.TempDir()
				}
			})
			id := createTopic(t, b, "a", 3)
			createTopic(t, b, "bb", 1)
			for i := 0; i < 4; i++ {
				// Large enough (with the copy threshold) to go out from files.
				produce(t, b, "a", int32(i%2), makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte("k"), value: bytes.Repeat([]byte{byte(i)}, 12000*i)}))
				produce(t, b, "bb", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("x")}))
			}
			for v := int16(4); v <= 18; v++ {
				req := fetchReq(v, "a", id, 0, 0, 0, 1)
				for _, p := range []int32{1, 2, 9} { // data, empty, unknown
					rp := kmsg.NewFetchRequestTopicPartition()
					rp.Partition, rp.PartitionMaxBytes = p, 1<<20
					req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
				}
				if v < 13 {
					rt := kmsg.NewFetchRequestTopic()
					rt.Topic = "bb"
					rp := kmsg.NewFetchRequestTopicPartition()
					rp.FetchOffset, rp.PartitionMaxBytes = 1, 1<<20
					rt.Partitions = append(rt.Partitions, rp)
					req.Topics = append(req.Topics, rt)
				}
				rep := serveReply(b, req)
				fb, ok := rep.Response.(*fetchBody)
				if !ok {
					t.Fatalf("v%d: %T, want *fetchBody", v, rep.Response)
				}
				// Aborted transactions (for read_committed) are encoded too.
				fb.Topics[0].Partitions[1].AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{
					{ProducerID: 7, FirstOffset: 1}, {ProducerID: 9, FirstOffset: 2},
				}
				fb.Topics[0].Partitions[2].AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
				var got []byte
				if osfs {
					before := sendfileRanges.Load()
					got = writeOverTCP(t, fb)
					if sendfileRanges.Load() == before {
						t.Fatalf("v%d: OS files over TCP did not use sendfile", v)
					}
				} else {
					var buf bytes.Buffer
					if err := fb.WriteBody(&buf, nil); err != nil {
						t.Fatal(err)
					}
					got = buf.Bytes()
				}
				if int64(len(got)) != fb.BodyLen() {
					t.Fatalf("v%d: wrote %d bytes, BodyLen %d", v, len(got), fb.BodyLen())
				}
				want := fb.materialize().AppendTo(nil)
				fb.Release()
				if !bytes.Equal(got, want) {
					t.Fatalf("v%d: encoding differs from kmsg\n got %x\nwant %x", v, got, want)
				}
				// And it decodes.
				dec := kmsg.NewPtrFetchResponse()
				dec.Version = v
				if err := dec.ReadFrom(got); err != nil {
					t.Fatalf("v%d: decode: %v", v, err)
				}
			}
		})
	}
}

// writeOverTCP runs WriteBody against a real TCP connection (so sendfile is
// used) and returns what arrived.
func writeOverTCP(t *testing.T, fb *fetchBody) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		var buf bytes.Buffer
		buf.ReadFrom(c)
		got <- buf.Bytes()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.WriteBody(c, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	return <-got
}
