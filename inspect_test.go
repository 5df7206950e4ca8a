package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/minikafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

// Members and their assignments, for a classic group and a KIP-848 one:
// two kgo consumers on a 4-partition topic split it between them, and the
// control API shows the same.
func TestGroupMembers(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("m", 4), minikafka.WithGroupInitialRebalanceDelay(0), minikafka.WithAdminAddr("127.0.0.1:0"))
	ctx := context.Background()
	for _, kind := range []string{"classic", "consumer"} {
		t.Run(kind, func(t *testing.T) {
			group := "members-" + kind
			opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("m"), kgo.ClientID("c-" + kind)}
			if kind == "consumer" {
				opts = append(opts, kgo.ServerSideBalancer())
			}
			for range 2 {
				cl := minikafkatest.Client(t, b, opts...)
				go func() {
					for cl.Context().Err() == nil {
						cl.PollFetches(cl.Context())
					}
				}()
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := b.WaitGroupStable(wctx, group, 2); err != nil {
				t.Fatal(err)
			}
			var ms []minikafka.GroupMember
			deadline := time.Now().Add(20 * time.Second)
			for {
				var err error
				if ms, err = b.GroupMembers(ctx, group); err != nil {
					t.Fatal(err)
				}
				var all []int32
				for _, m := range ms {
					all = append(all, m.Assignment["m"]...)
				}
				sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
				if len(ms) == 2 && fmt.Sprint(all) == "[0 1 2 3]" && len(ms[0].Assignment["m"]) == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("members %+v", ms)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if ms[0].ClientID != "c-"+kind || ms[0].MemberID == "" || ms[0].ClientHost == "" {
				t.Fatalf("member %+v", ms[0])
			}
			st, m := adminCall(t, "GET", "http://"+b.AdminAddr().String()+"/v1/groups/"+group, "")
			if st != 200 || len(m["member_list"].([]any)) != 2 {
				t.Fatalf("HTTP group: %d %v", st, m)
			}
		})
	}
	if ms, err := b.GroupMembers(ctx, "nobody"); err != nil || len(ms) != 0 {
		t.Fatalf("unknown group: %v %v", ms, err)
	}
}

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
