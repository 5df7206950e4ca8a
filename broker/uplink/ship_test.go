package uplink

import (
	"math"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
)

// testBatch encodes recs as one batch with codec, as a producer without
// idempotence would.
func testBatch(t testing.TB, codec records.Codec, recs ...records.Record) []byte {
	t.Helper()
	b, err := records.AppendBatch(nil, records.BatchSpec{LeaderEpoch: -1, Codec: codec, FirstTimestamp: 1,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	batch := testBatch(t, records.CodecSnappy, records.Record{Key: []byte("k"), Value: []byte("v")}, records.Record{Value: []byte("w")})
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
