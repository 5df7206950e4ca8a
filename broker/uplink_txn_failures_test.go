package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// A round that fails upstream before its commit lands is aborted there
// (the next InitProducerID fences it) and shipped again: read_committed
// consumers see its records once, and the failure shows in forward-status
// while it lasts. A connection dropped after the upstream wrote a share's
// batch is no failure: the batch goes again with the same sequence and the
// upstream drops the duplicate, so even read_uncommitted sees it once.
func TestUplinkTransactionRoundFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault minikafka.Fault
		// until: the fault stays until the failure was seen, else it
		// fires once.
		until bool
		// failed: the round fails (else it must not).
		failed bool
		shows  string // in the partitions' last error while it fails
	}{
		{"InitProducerID refused", minikafka.Fault{Keys: []int16{22}, ErrorCode: 53}, true, true, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
		{"EndTxn refused", minikafka.Fault{Keys: []int16{26}, ErrorCode: 48, Times: 1}, false, true, ""},
		{"TxnOffsetCommit refused", minikafka.Fault{Keys: []int16{28}, ErrorCode: 48, Times: 1}, false, true, ""},
		{"produce answer lost", minikafka.Fault{Keys: []int16{0}, Topic: "rf", DropAfter: true, Times: 1}, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t)
			local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("rf"), minikafka.WithTopic("rf", 2))
			plain := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("rf"))
			ctx := context.Background()
			for p := int32(0); p < 2; p++ { // the forwarders and the upstream topic exist
				if err := plain.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(fmt.Sprintf("warm-%d", p))}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 20*time.Second, "the warm-up shipped", lagZero(local, 2))
			id, err := up.b.AddFault(c.fault)
			if err != nil {
				t.Fatal(err)
			}
			cl := minikafkatest.Client(t, local, kgo.TransactionalID("rf-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			produceTxn(t, cl, "rf", []int32{0, 1, 0}, []string{"t-0", "t-1", "t-0b"})
			if c.until {
				waitFor(t, 20*time.Second, "the failure shown", func() bool {
					st := local.ForwardStats()
					return len(st) == 2 && st[0].State == "transaction" && strings.Contains(st[0].LastError, c.shows) && st[0].Lag > 0
				})
				if err := up.b.RemoveFault(id); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 30*time.Second, "forwarded", lagZero(local, 2))
			want := map[string]bool{"warm-0": true, "warm-1": true, "t-0": true, "t-1": true, "t-0b": true}
			recs := consumeRecords(t, up.addr, "rf", kgo.ReadCommitted(), len(want))
			var got []string
			for _, r := range recs {
				got = append(got, string(r.Value))
			}
			sameValues(t, "upstream read_committed", got, want)
			oneUpstreamTxn(t, upstreamTxnOf(recs), []string{"t-0", "t-1", "t-0b"})
			st := local.ForwardStats()[0]
			if failed := st.Errors > 0; failed != c.failed {
				t.Errorf("%d failed attempts, want a failed round: %v", st.Errors, c.failed)
			}
			if !c.failed {
				sameValues(t, "upstream read_uncommitted", consumeValues(t, up.addr, "rf", kgo.ReadUncommitted(), len(want)), want)
			}
		})
	}
}

// A forwarded topic deleted and made again under the same name starts its
// offsets over, below the positions the old topic's rounds committed
// upstream, which the shipper reads back after a restart. Those name the
// old topic, so the new topic's transactions are shipped, not taken for
// already shipped.
func TestUplinkTransactionPositionsOfARecreatedTopic(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("rt"), minikafka.WithTopic("rt", 1))
	ctx := context.Background()
	txn := func() *kgo.Client {
		return minikafkatest.Client(t, local.b, kgo.TransactionalID("rt-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl := txn()
	produceTxn(t, cl, "rt", []int32{0, 0, 0, 0}, []string{"old-0", "old-1", "old-2", "old-3"})
	waitFor(t, 20*time.Second, "the old topic's transaction shipped", lagZero(local.b, 1))

	adm := kadm.NewClient(minikafkatest.Client(t, local.b))
	if _, err := adm.DeleteTopic(ctx, "rt"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the topic deleted", func() bool { return len(local.b.ForwardStats()) == 0 })
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "rt"); err != nil {
		t.Fatal(err)
	}
	// With transaction version 2 kgo produces v13, which names the topic
	// by ID: the client must forget the old topic's, as kgo documents.
	cl.PurgeTopicsFromClient("rt")
	// The new topic's transaction waits in the spool over a restart, so
	// the shipper that ships it has read the old positions back.
	up.Stop()
	produceTxn(t, cl, "rt", []int32{0}, []string{"new-0"})
	local.Crash()
	cl.Close()
	up.Start()
	waitFor(t, 30*time.Second, "the new topic's transaction shipped", lagZero(local.b, 1))
	want := map[string]bool{"old-0": true, "old-1": true, "old-2": true, "old-3": true, "new-0": true}
	sameValues(t, "upstream read_committed", consumeValues(t, up.addr, "rt", kgo.ReadCommitted(), len(want)), want)
}
