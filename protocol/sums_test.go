package protocol

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/crc32c"
)

// A large Produce frame reaches the handler with sums taken while it was
// read, and they give each partition's records the CRC32C computed
// directly; a small Produce frame and other requests come without.
func TestProduceFrameSums(t *testing.T) {
	type seen struct {
		key     int16
		summed  bool
		matches bool
	}
	got := make(chan seen, 4)
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		s := seen{key: req.Key, summed: req.Sums != nil, matches: true}
		if pr, ok := req.Body.(*kmsg.ProduceRequest); ok && req.Sums != nil {
			for _, tp := range pr.Topics {
				for _, p := range tp.Partitions {
					for _, cut := range [][2]int{{0, len(p.Records)}, {21, len(p.Records)}, {1000, 70000}} {
						sum, ok := req.Sums.Checksum(p.Records[cut[0]:cut[1]])
						s.matches = s.matches && ok && sum == crc32c.Checksum(p.Records[cut[0]:cut[1]])
					}
				}
			}
		}
		got <- s
		return Reply{}, false
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)

	rng := rand.New(rand.NewPCG(3, 4))
	produce := func(partitions, size int) *kmsg.ProduceRequest {
		r := kmsg.NewPtrProduceRequest()
		r.Version, r.Acks, r.TimeoutMillis = 9, 1, 1000
		tp := kmsg.NewProduceRequestTopic()
		tp.Topic = "t"
		for i := range partitions {
			p := kmsg.NewProduceRequestTopicPartition()
			p.Partition = int32(i)
			p.Records = make([]byte, size)
			for j := range p.Records {
				p.Records[j] = byte(rng.Uint32())
			}
			tp.Partitions = append(tp.Partitions, p)
		}
		r.Topics = append(r.Topics, tp)
		return r
	}
	send(t, c, frame(1, nil, produce(3, 300<<10)))
	if s := <-got; s.key != 0 || !s.summed || !s.matches {
		t.Fatalf("large produce: %+v", s)
	}
	mustReadFrame(t, c)
	send(t, c, frame(2, nil, produce(1, 100)))
	if s := <-got; s.summed {
		t.Fatalf("small produce summed: %+v", s)
	}
	mustReadFrame(t, c)
	send(t, c, frame(3, nil, metadataReq(12, "t")))
	if s := <-got; s.summed {
		t.Fatalf("metadata summed: %+v", s)
	}
	mustReadFrame(t, c)
}
