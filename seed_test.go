package minikafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/minikafkatest"
)

// Seeding without a client: a topic with configs, plain records with
// keys, headers and timestamps, a committed and an aborted transaction;
// a read_committed kgo consumer sees exactly the plain and committed
// records, and Records reads them back both ways.
func TestSeedAndReadRecords(t *testing.T) {
	b := minikafkatest.New(t)
	ctx := context.Background()
	if err := b.CreateTopic(ctx, "seeded", 2, map[string]string{"retention.ms": "3600000"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "seeded", 2, nil); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	ts := time.UnixMilli(1_700_000_000_123)
	got, err := b.Seed(ctx,
		&kgo.Record{Topic: "seeded", Partition: 0, Key: []byte("k1"), Value: []byte("v1"), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}},
		&kgo.Record{Topic: "seeded", Partition: 0, Value: []byte("v2"), Timestamp: ts.Add(time.Second)},
		&kgo.Record{Topic: "seeded", Partition: 1, Key: []byte("k3"), Value: []byte("v3")})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Offset != 0 || got[1].Offset != 1 || got[2].Offset != 0 {
		t.Fatalf("offsets %d %d %d", got[0].Offset, got[1].Offset, got[2].Offset)
	}
	if _, err := b.SeedTransaction(ctx, false, &kgo.Record{Topic: "seeded", Partition: 0, Value: []byte("aborted")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SeedTransaction(ctx, true, &kgo.Record{Topic: "seeded", Partition: 0, Value: []byte("committed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Seed(ctx, &kgo.Record{Topic: "nope", Value: []byte("x")}); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("seeding an unknown topic: %v", err)
	}

	values := func(recs []*kgo.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		return out
	}
	committed, next, err := b.Records("seeded", 0, 0, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	if v := values(committed); len(v) != 3 || v[0] != "v1" || v[1] != "v2" || v[2] != "committed" {
		t.Fatalf("read_committed: %v", v)
	}
	// v1 v2 | aborted + marker | committed + marker: the end is 6.
	if next != 6 {
		t.Fatalf("next %d, want 6", next)
	}
	r0 := committed[0]
	if string(r0.Key) != "k1" || !r0.Timestamp.Equal(ts) || len(r0.Headers) != 1 || r0.Headers[0].Key != "h" || string(r0.Headers[0].Value) != "x" {
		t.Fatalf("first record %+v", r0)
	}
	if committed[1].Key != nil {
		t.Fatalf("null key read as %q", committed[1].Key)
	}
	all, _, err := b.Records("seeded", 0, 0, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if v := values(all); len(v) != 4 || v[2] != "aborted" {
		t.Fatalf("read_uncommitted: %v", v)
	}
	page, next, err := b.Records("seeded", 0, 1, 1, false)
	if err != nil || len(page) != 1 || page[0].Offset != 1 || next != 2 {
		t.Fatalf("one record from 1: %v next %d err %v", values(page), next, err)
	}
	if _, _, err := b.Records("nope", 0, 0, 1, false); err == nil {
		t.Fatal("unknown topic read")
	}

	// A real consumer agrees.
	cl := minikafkatest.Client(t, b, kgo.ConsumeTopics("seeded"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var seen []string
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(seen) < 4 && pctx.Err() == nil {
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { seen = append(seen, string(r.Value)) })
	}
	if len(seen) != 4 {
		t.Fatalf("consumer saw %v", seen)
	}
}
