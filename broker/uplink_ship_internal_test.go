package broker

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/internal/records"
)

// A spooled batch shipped as it is that the upstream refuses as corrupt is
// decoded here: one that does not decode is dropped loudly (it could never
// be shipped), so the partition goes on with the next batch instead of
// retrying forever.
func TestUplinkDropsUndecodableBatch(t *testing.T) {
	up := newTestBroker(t) // validates compressed records by default
	upAddr := listen(t, up)
	b := newTestBroker(t, func(c *Config) {
		c.Uplink = &UplinkConfig{Brokers: []string{upAddr}, Forward: []ForwardRule{{Pattern: "f"}}}
	})
	createTopic(t, b, "f", 1)
	f := b.forwardOf(b.lookupTopic("f", [16]byte{}).partition(0))
	if f == nil {
		t.Fatal("not forwarded")
	}
	// Larger than mergeBelow, so it is shipped as it is; its record's
	// length prefix claims more bytes than the batch holds.
	bad := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: make([]byte, 20<<10)})
	bad[records.BatchHeaderLen] = 0x7e // zigzag varint 63: the record is 63 bytes
	binary.BigEndian.PutUint32(bad[17:], records.Checksum(bad))
	good := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte("k"), value: []byte("after")})
	if _, err := f.sp.AppendSpan(bad, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sp.AppendSpan(good, 1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := b.ForwardStats()[0]
		if s.Lag == 0 {
			// The error was cleared by the next batch's success;
			// the counter keeps it.
			if s.Forwarded != 1 || s.Errors != 1 || s.LastError != "" {
				t.Fatalf("stats %+v", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stuck: %+v", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(upAddr), kgo.ConsumeTopics("f"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []*kgo.Record
	for len(got) == 0 && ctx.Err() == nil {
		got = append(got, cl.PollFetches(ctx).Records()...)
	}
	if len(got) != 1 || string(got[0].Value) != "after" {
		t.Fatalf("upstream holds %v", got)
	}
}

// Sequences wrap past MaxInt32 to 0 as Kafka's producer does.
func TestNextSeqWraps(t *testing.T) {
	for _, c := range []struct{ seq, n, want int32 }{
		{0, 5, 5},
		{math.MaxInt32 - 5, 5, math.MaxInt32},
		{math.MaxInt32 - 1, 3, 1}, // MaxInt32-1, MaxInt32, 0 taken; next is 1
		{math.MaxInt32, 1, 0},
	} {
		if got := nextSeq(c.seq, c.n); got != c.want {
			t.Errorf("nextSeq(%d, %d) = %d, want %d", c.seq, c.n, got, c.want)
		}
	}
}

// stamp writes the producer fields and leaves a batch that validates.
func TestStampProducer(t *testing.T) {
	batch := makeBatch(t, records.CodecSnappy, -1, 0, 0, testRec{key: []byte("k"), value: []byte("v")}, testRec{value: []byte("w")})
	records.SetPartitionLeaderEpoch(batch, 7)
	stamp(batch, upProducer{id: 42, epoch: 3, seq: 1000})
	h, err := records.Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	if h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != 1000 || h.PartitionLeaderEpoch != -1 || h.NumRecords != 2 || h.Compression() != records.CodecSnappy {
		t.Fatalf("header %+v", h)
	}
}
