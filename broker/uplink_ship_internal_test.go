package broker

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker/uplink"
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
		c.Uplink = &uplink.Config{Brokers: []string{upAddr}, Forward: []uplink.ForwardRule{{Pattern: "f"}}}
	})
	createTopic(t, b, "f", 1)
	f := b.forwardOf(b.lookupTopic("f", [16]byte{}).partition(0))
	if f == nil {
		t.Fatal("not forwarded")
	}
	// Larger than the uplink's merge bound (16 KiB), so it is shipped as
	// it is; its record's
	// length prefix claims more bytes than the batch holds.
	bad := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: make([]byte, 20<<10)})
	bad[records.BatchHeaderLen] = 0x7e // zigzag varint 63: the record is 63 bytes
	binary.BigEndian.PutUint32(bad[17:], records.Checksum(bad))
	good := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte("k"), value: []byte("after")})
	if _, err := f.f.Append(bad, 1, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.f.Append(good, 1, -1); err != nil {
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
