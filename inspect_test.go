package minikafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
)

// A kgo producer and a kgo group consumer that commits: inspection shows
// the high watermark, the committed offsets, the group Stable with one
// member and zero lag, and the waits return once each condition holds.
func TestInspectAfterRealClients(t *testing.T) {
	b := start(t)
	ctx := ctxT(t)
	adm := kadm.NewClient(client(t, b))
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "insp"); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitTopic(ctx, "insp"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PartitionOffsets("nope", 0); !errors.Is(err, broker.ErrUnknownPartition) {
		t.Fatalf("unknown topic: %v", err)
	}
	prod := client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 3; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "insp", Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.WaitHighWatermark(ctx, "insp", 1, 3); err != nil {
		t.Fatal(err)
	}
	po, err := b.PartitionOffsets("insp", 1)
	if err != nil || po.HighWatermark != 3 || po.LastStable != 3 || po.LogStart != 0 {
		t.Fatalf("offsets %+v %v", po, err)
	}
	lags, err := b.GroupLag("g", "insp")
	if err != nil || len(lags) != 2 || lags[1].Lag != 3 || lags[0].Lag != 0 {
		t.Fatalf("lag before consuming: %+v %v", lags, err)
	}

	cons := client(t, b, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("insp"), kgo.DisableAutoCommit())
	if err := b.WaitGroupStable(ctx, "g", 1); err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < 3 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitLagZero(ctx, "g", "insp"); err != nil {
		t.Fatal(err)
	}
	offs := b.GroupOffsets("g")
	var found bool
	for _, o := range offs {
		if o.Topic == "insp" && o.Partition == 1 {
			found = o.Offset == 3
		}
	}
	if !found {
		t.Fatalf("committed %+v, want insp/1 at 3", offs)
	}
	g, ok := b.GroupState("g")
	if !ok || g.State != "Stable" || g.Members != 1 {
		t.Fatalf("group %+v %v", g, ok)
	}
}

// A wait whose condition never holds ends with the context and says what
// it waited for and what it last saw.
func TestWaitTimesOut(t *testing.T) {
	b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := b.WaitHighWatermark(ctx, "missing", 0, 1)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "missing/0 high watermark 1") || !strings.Contains(err.Error(), "unknown topic") {
		t.Fatalf("err = %v", err)
	}
	if err := b.WaitGroupStable(ctx, "nog", 1); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "unknown group") {
		t.Fatalf("err = %v", err)
	}
}

// A partition that ends in a transaction's commit marker: the consumer
// commits the offset after its last record (the marker's), Kafka's lag
// stays 1, and WaitLagZero returns because nothing is left to read; it
// still waits while a record is left.
func TestWaitLagZeroAfterTransaction(t *testing.T) {
	b := start(t, minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithTopic("tx", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tx := client(t, b, kgo.TransactionalID("tx-lag"), kgo.DefaultProduceTopic("tx"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, b))
	commit := func(off int64) {
		if _, err := adm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "tx", Partition: 0, Offset: off - 1})); err != nil {
			t.Fatal(err)
		}
	}
	commit(1) // one record left
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	if err := b.WaitLagZero(short, "g", "tx"); err == nil {
		t.Fatal("WaitLagZero returned with a record left")
	}
	commit(2) // the marker's offset: the records are all read
	lags, err := b.GroupLag("g", "tx")
	if err != nil || lags[0].Lag != 1 {
		t.Fatalf("lag %+v %v, want Kafka's 1 (the marker)", lags, err)
	}
	if err := b.WaitLagZero(ctx, "g", "tx"); err != nil {
		t.Fatal(err)
	}
}
