package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
)

// A forwarded partition keeps its producers' idempotence state after the
// records that built it were shipped and deleted and the broker lost
// power: a retry of the last batch is still recognized (its first offset
// answered, nothing appended), and a batch after a gap in the sequence is
// refused as out of order rather than accepted ahead of the lost ones.
func TestForwardedProducerStateSurvivesCrash(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("ps"), minikafka.WithTopic("ps", 1))
	ctx := context.Background()
	const pid, epoch = 4242, 0
	batch := func(seq int32, n int) []byte {
		recs := make([]records.Record, n)
		for i := range recs {
			recs[i] = records.Record{Value: []byte("v"), OffsetDelta: int32(i)}
		}
		b, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	produce := func(b []byte) (int16, int64) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(local.addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "ps"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := cl.Request(ctx, produceByName{req})
		if err != nil {
			t.Fatal(err)
		}
		p := kresp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		return p.ErrorCode, p.BaseOffset
	}
	if code, base := produce(batch(0, 5)); code != 0 || base != 0 {
		t.Fatalf("first batch: %v at %d", kerr.ErrorForCode(code), base)
	}
	if code, base := produce(batch(5, 5)); code != 0 || base != 5 {
		t.Fatalf("second batch: %v at %d", kerr.ErrorForCode(code), base)
	}
	waitFor(t, 20*time.Second, "shipped and deleted locally", func() bool {
		st := local.b.ForwardStats()
		return len(st) == 1 && st[0].Lag == 0 && st[0].LogStartOffset == 10
	})
	local.Crash()
	if code, base := produce(batch(5, 5)); code != 0 || base != 5 {
		t.Fatalf("retry of the last batch after the crash: %v at %d, want its offset 5", kerr.ErrorForCode(code), base)
	}
	if code, _ := produce(batch(20, 1)); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("a batch after a sequence gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
	if code, base := produce(batch(10, 1)); code != 0 || base != 10 {
		t.Fatalf("the next batch in sequence: %v at %d", kerr.ErrorForCode(code), base)
	}
	checkEnd := func() int64 {
		po, err := local.b.PartitionOffsets("ps", 0)
		if err != nil {
			t.Fatal(err)
		}
		return po.HighWatermark
	}
	if end := checkEnd(); end != 11 {
		t.Fatalf("high watermark %d, want 11 (no duplicate appended)", end)
	}
}

// produceByName caps Produce at v12, the last that names topics (v13
// sends topic IDs, which this test's request does not carry).
type produceByName struct{ *kmsg.ProduceRequest }

func (produceByName) MaxVersion() int16 { return 12 }
