package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// Over TCP a large Produce request's batch checksums come from the sums the
// connection took while reading it (protocol.Request.Sums). A byte flipped
// deep inside one partition's batch, in a chunk whose sum is combined
// rather than recomputed, is still CORRUPT_MESSAGE for that partition
// alone; the others are appended and read back intact.
func TestLargeProduceCorruptionCaught(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 3)
	w := dialWire(t, listen(t, b))

	value := make([]byte, 1000)
	recs := make([]testRec, 200) // ~200 KiB per batch: several 32 KiB chunks
	for i := range recs {
		for j := range value {
			value[j] = byte(i + j)
		}
		recs[i] = testRec{value: append([]byte(nil), value...)}
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	for i := range 3 {
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition = int32(i)
		p.Records = makeBatch(t, records.CodecNone, -1, 0, 0, recs...)
		tp.Partitions = append(tp.Partitions, p)
	}
	tp.Partitions[1].Records[len(tp.Partitions[1].Records)/2] ^= 0x40
	req.Topics = append(req.Topics, tp)

	resp := w.roundTrip(req).(*kmsg.ProduceResponse)
	for i, p := range resp.Topics[0].Partitions {
		want := int16(0)
		if i == 1 {
			want = kerr.CorruptMessage.Code
		}
		if p.ErrorCode != want {
			t.Fatalf("partition %d: %v, want %v", i, kerr.ErrorForCode(p.ErrorCode), kerr.ErrorForCode(want))
		}
	}
	for _, part := range []int32{0, 2} {
		f := kmsg.NewPtrFetchRequest()
		f.Version, f.MaxBytes = 12, 10<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "t"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = part, 10<<20
		ft.Partitions = append(ft.Partitions, fp)
		f.Topics = append(f.Topics, ft)
		got := w.roundTrip(f).(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.HighWatermark != int64(len(recs)) {
			t.Fatalf("partition %d: %v, high watermark %d", part, kerr.ErrorForCode(got.ErrorCode), got.HighWatermark)
		}
		if _, err := records.Validate(got.RecordBatches); err != nil {
			t.Fatalf("partition %d reads back: %v", part, err)
		}
	}
}
