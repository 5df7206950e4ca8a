package fetchsession

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func fetchReq(id, epoch int32, parts ...int32) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.SessionID, r.SessionEpoch = 12, id, epoch
	if len(parts) > 0 {
		t := kmsg.NewFetchRequestTopic()
		t.Topic = "t"
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset = p, 5
			t.Partitions = append(t.Partitions, rp)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

// A full fetch opens a session; the next incremental fetch must carry
// epoch 1, gets the session's partitions back, and its answer leaves out
// a partition whose offsets did not change and that has no records.
func TestSessionRoundTrip(t *testing.T) {
	c := New(2)
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	sc, parts, code := c.Begin(fetchReq(0, 0, 0, 1), 12, clock)
	if code != 0 || parts != nil || sc.Incremental() {
		t.Fatalf("full fetch: %+v %v %d", sc, parts, code)
	}
	sent := []Sent{
		{Key: Key{Topic: "t", Partition: 0}, Offset: 5, HighWatermark: 10, LastStable: 10, HasRecords: true},
		{Key: Key{Topic: "t", Partition: 1}, Offset: 5, HighWatermark: 7, LastStable: 7},
	}
	omit, id := c.Finish(sc, len(sent), func(i int) Sent { return sent[i] }, clock)
	if omit != nil || id == 0 || c.Len() != 1 {
		t.Fatalf("create: omit %v id %d len %d", omit, id, c.Len())
	}
	if _, _, code := c.Begin(fetchReq(id, 2), 12, clock); code != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("wrong epoch: %d", code)
	}
	if _, _, code := c.Begin(fetchReq(id, 1), 13, clock); code != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("topic IDs changed: %d", code)
	}
	sc, parts, code = c.Begin(fetchReq(id, 1), 12, clock)
	if code != 0 || !sc.Incremental() || len(parts) != 2 {
		t.Fatalf("incremental: %d %v", code, parts)
	}
	// The partition that returned records went to the back.
	if parts[0].Key.Partition != 1 || parts[1].Key.Partition != 0 || parts[1].Offset != 5 {
		t.Fatalf("order: %+v", parts)
	}
	// Partition 0: no records now, but a new high watermark; 1 unchanged.
	sent[0].HighWatermark, sent[0].HasRecords = 12, false
	omit, got := c.Finish(sc, len(sent), func(i int) Sent { return sent[i] }, clock)
	if got != id || len(omit) != 2 || omit[0] || !omit[1] {
		t.Fatalf("incremental answer: omit %v id %d", omit, got)
	}
	if _, _, code := c.Begin(fetchReq(id+1, 1), 12, clock); code != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %d", code)
	}
	// Closing (epoch -1) removes it.
	c.Begin(fetchReq(id, -1), 12, clock)
	if c.Get(id) != nil {
		t.Fatal("session still cached after close")
	}
}
