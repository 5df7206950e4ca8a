package minikafka_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
)

// brokerFuzzSeeds are valid requests of the main APIs (so mutations reach
// the broker's handlers, not just the framing) and a few broken frames.
func brokerFuzzSeeds(t testing.TB) [][]byte {
	batch, err := records.AppendBatch(nil, records.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, FirstTimestamp: 1700000000000},
		[]records.Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("second")}})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := records.AppendBatch(nil, records.BatchSpec{Codec: records.CodecGzip, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]records.Record{{Value: []byte("zipped")}})
	if err != nil {
		t.Fatal(err)
	}
	produce := func(v int16, recs []byte) []byte {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = v, -1, 1000
		tp := kmsg.NewProduceRequestTopic()
		tp.Topic = "t"
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = recs
		tp.Partitions = append(tp.Partitions, p)
		req.Topics = append(req.Topics, tp)
		return wireRequest(1, req)
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = 12, 10, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	md.Topics = append(md.Topics, mt)

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)

	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 5
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "fuzz-created", 2, 1
	ct.Topics = append(ct.Topics, ctt)

	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "fuzz", "1"

	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4

	return [][]byte{
		produce(9, batch),
		produce(7, gz),
		produce(3, batch[:len(batch)-1]),
		wireRequest(2, fetch),
		wireRequest(3, md),
		wireRequest(4, lo),
		wireRequest(5, ct),
		wireRequest(6, av),
		wireRequest(7, ip),
		{0, 0, 0, 8, 0, 18, 0, 99, 0, 0, 0, 9},
		{0xff, 0xff, 0xff, 0xff},
	}
}

// FuzzBrokerFrames throws arbitrary bytes at a live in-memory broker; after
// each input a fresh connection must still get an ApiVersions answer.
func FuzzBrokerFrames(f *testing.F) {
	for _, s := range brokerFuzzSeeds(f) {
		f.Add(s)
	}
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(),
		minikafka.WithMaxRequestBytes(1<<20), minikafka.WithTopic("t", 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if err := b.Close(); err != nil {
			f.Errorf("Close: %v", err)
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(data) // may fail once the broker closed on bad input
		c.(*net.TCPConn).CloseWrite()
		out, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("broker did not close the connection after EOF")
		}
		for len(out) > 0 {
			if len(out) < 8 || uint64(binary.BigEndian.Uint32(out)) > uint64(len(out)-4) {
				t.Fatalf("partial response frame: % x", out[:min(len(out), 16)])
			}
			out = out[4+binary.BigEndian.Uint32(out):]
		}

		c2, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		c2.SetDeadline(time.Now().Add(10 * time.Second))
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "check", "1"
		resp := kmsg.NewPtrApiVersionsResponse()
		if err := roundTrip(c2, 99, req, resp); err != nil {
			t.Fatalf("ApiVersions after the input: %v", err)
		}
		if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			t.Fatalf("ApiVersions after the input: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
		}
	})
}
