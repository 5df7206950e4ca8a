package minikafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// A kgo transactional producer mid-transaction, seen without a client:
// its transaction Ongoing with its partition, its producer state with the
// open transaction's start, a transaction wait that only returns after
// the commit; the same over HTTP.
func TestInspectTransactions(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("tx", 1), minikafka.WithAdminAddr("127.0.0.1:0"))
	base := "http://" + b.AdminAddr().String()
	ctx := context.Background()
	cl := minikafkatest.Client(t, b, kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("tx"))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txn, err := b.Transaction(ctx, "tx-1")
	if err != nil || txn.State != "Ongoing" || len(txn.Partitions["tx"]) != 1 || txn.ProducerID < 0 || txn.StartMs <= 0 {
		t.Fatalf("transaction: %+v %v", txn, err)
	}
	all, err := b.Transactions(ctx)
	if err != nil || len(all) != 1 || all[0].ID != "tx-1" {
		t.Fatalf("transactions: %+v %v", all, err)
	}
	ps, err := b.Producers(ctx, "tx", 0)
	if err != nil || len(ps) != 1 || ps[0].ProducerID != txn.ProducerID || ps[0].TxnStartOffset != 0 || ps[0].LastSequence != 0 {
		t.Fatalf("producers: %+v %v", ps, err)
	}
	if _, err := b.Transaction(ctx, "nope"); !errors.Is(err, minikafka.ErrUnknownTransaction) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := b.Producers(ctx, "nope", 0); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown partition: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := b.WaitTransaction(short, "tx-1"); err == nil {
		t.Fatal("the wait returned while the transaction is open")
	}
	st, m := adminCall(t, "GET", base+"/v1/transactions/tx-1", "")
	if st != 200 || m["state"] != "Ongoing" {
		t.Fatalf("HTTP transaction: %d %v", st, m)
	}
	st, m = adminCall(t, "GET", base+"/v1/topics/tx/partitions/0/producers", "")
	if st != 200 || len(m["producers"].([]any)) != 1 {
		t.Fatalf("HTTP producers: %d %v", st, m)
	}
	done := make(chan error, 1)
	go func() {
		st, m := adminCall(t, "POST", base+"/v1/wait/transaction", `{"transactional_id":"tx-1","timeout_ms":10000}`)
		if st != 200 {
			done <- errors.New(m["error"].(string))
			return
		}
		done <- nil
	}()
	time.Sleep(20 * time.Millisecond)
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("HTTP wait: %v", err)
	}
	if err := b.WaitTransaction(ctx, "tx-1"); err != nil {
		t.Fatal(err)
	}
	if txn, _ := b.Transaction(ctx, "tx-1"); txn.State != "CompleteCommit" || len(txn.Partitions) != 0 {
		t.Fatalf("after commit: %+v", txn)
	}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/transactions/nope", "", 404},
		{"GET", "/v1/topics/nope/partitions/0/producers", "", 404},
		{"POST", "/v1/wait/transaction", `{"timeout_ms":10}`, 400},
		{"POST", "/v1/wait/transaction", `{"transactional_id":"nope","timeout_ms":20}`, 408},
	} {
		if st, m := adminCall(t, c.method, base+c.path, c.body); st != c.want || m["error"] == nil {
			t.Errorf("%s %s: %d %v, want %d with a message", c.method, c.path, st, m, c.want)
		}
	}
}
