package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// lagZero reports whether b forwards at least parts partitions (a
// partition's forwarder starts with its first use) and every one has
// shipped all.
func lagZero(b *minikafka.Broker, parts int) func() bool {
	return func() bool {
		st := b.ForwardStats()
		if len(st) < parts {
			return false
		}
		for _, s := range st {
			if s.Lag != 0 {
				return false
			}
		}
		return true
	}
}

// produceTxn runs one transaction of cl: records values[i] to partitions
// parts[i], in that order, then commits it.
func produceTxn(t *testing.T, cl *kgo.Client, topic string, parts []int32, values []string) {
	t.Helper()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: parts[i], Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
}

// sameUpstreamTxn fails unless every value in groups[i] arrived upstream
// in one transaction, groups in distinct ones.
func sameUpstreamTxn(t *testing.T, recs []*kgo.Record, groups ...[]string) {
	t.Helper()
	of := upstreamTxnOf(recs)
	seen := map[[2]int64]int{}
	for i, g := range groups {
		id, ok := of[g[0]]
		if !ok {
			t.Errorf("%s is not transactional upstream", g[0])
			continue
		}
		for _, v := range g[1:] {
			if o, ok := of[v]; !ok || o != id {
				t.Errorf("%s arrived in upstream transaction %v (transactional: %v), %s in %v", v, o, ok, g[0], id)
			}
		}
		if j, ok := seen[id]; ok {
			t.Errorf("groups %d and %d arrived in one upstream transaction", j, i)
		}
		seen[id] = i
	}
}

// Two producers' transactions overlap on two partitions in opposite
// orders: on partition 0 the first transaction's record comes first, on
// partition 1 the second's. Neither can be shipped alone without the
// other's record ahead of it, so both go upstream in one transaction
// (nothing waits forever), and upstream read_committed consumers see all
// four records or none.
func TestUplinkInterleavedTransactionsShipTogether(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("ilv"), minikafka.WithTopic("ilv", 2))
	ctx := context.Background()
	opts := func(id string) []kgo.Opt {
		return []kgo.Opt{kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(20 * time.Second)}
	}
	a := minikafkatest.Client(t, local, opts("ilv-a")...)
	b := minikafkatest.Client(t, local, opts("ilv-b")...)
	// Connections and producer IDs first, so the overlap is all that
	// happens while the upstream is away.
	produceTxn(t, a, "ilv", []int32{0}, []string{"warm-a"})
	produceTxn(t, b, "ilv", []int32{1}, []string{"warm-b"})
	waitFor(t, 20*time.Second, "the warm-up shipped", lagZero(local, 2))
	up.Stop()

	produce := func(cl *kgo.Client, p int32, v string) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ilv", Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cl := range []*kgo.Client{a, b} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	produce(a, 0, "a-0")
	produce(b, 1, "b-1")
	produce(b, 0, "b-0")
	produce(a, 1, "a-1")
	for _, cl := range []*kgo.Client{a, b} {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	// A later transaction of each, in its own round.
	produceTxn(t, a, "ilv", []int32{0, 1}, []string{"a2-0", "a2-1"})

	up.Start()
	waitFor(t, 60*time.Second, "everything forwarded", lagZero(local, 2))
	want := map[string]bool{"warm-a": true, "warm-b": true, "a-0": true, "a-1": true, "b-0": true, "b-1": true, "a2-0": true, "a2-1": true}
	recs := consumeRecords(t, up.addr, "ilv", kgo.ReadCommitted(), len(want))
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	sameValues(t, "upstream read_committed", got, want)
	sameUpstreamTxn(t, recs, []string{"a-0", "a-1", "b-0", "b-1"}, []string{"a2-0", "a2-1"})
}

// The local broker loses power after the upstream committed a round but
// before its answer arrived, so the local acknowledgement is lost. After
// the restart the shipper reads back the positions the round committed
// upstream and does not ship it again: upstream, read_committed and
// read_uncommitted consumers alike see every record once.
func TestUplinkTransactionRoundCommittedBeforeCrash(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("rc"), minikafka.WithTopic("rc", 2))
	txn := func() *kgo.Client {
		return minikafkatest.Client(t, local.b, kgo.TransactionalID("rc-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl := txn()
	produceTxn(t, cl, "rc", []int32{0, 1}, []string{"t1-0", "t1-1"})
	waitFor(t, 20*time.Second, "the first transaction shipped", lagZero(local.b, 2))

	// The upstream commits the next round but holds its EndTxn answer.
	id, err := up.b.AddFault(minikafka.Fault{Keys: []int16{26}, TxnID: local.b.ForwardStats()[0].TransactionalID, Hold: true, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, "rc", []int32{0, 1, 0}, []string{"t2-0", "t2-1", "t2-0b"})
	consumeValues(t, up.addr, "rc", kgo.ReadCommitted(), 5) // committed upstream
	local.Crash()
	cl.Close()
	if err := up.b.ReleaseFault(id); err != nil {
		t.Logf("release: %v", err)
	}
	cl = txn()
	produceTxn(t, cl, "rc", []int32{1}, []string{"t3-1"})
	waitFor(t, 30*time.Second, "forwarding after the crash", lagZero(local.b, 2))
	want := map[string]bool{"t1-0": true, "t1-1": true, "t2-0": true, "t2-1": true, "t2-0b": true, "t3-1": true}
	recs := consumeRecords(t, up.addr, "rc", kgo.ReadCommitted(), len(want))
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	sameValues(t, "upstream read_committed", got, want)
	sameValues(t, "upstream read_uncommitted", consumeValues(t, up.addr, "rc", kgo.ReadUncommitted(), len(want)), want)
	sameUpstreamTxn(t, recs, []string{"t1-0", "t1-1"}, []string{"t2-0", "t2-1", "t2-0b"}, []string{"t3-1"})
	// Since the restart: the recognized round was not one, t3 was.
	if st := local.b.ForwardStats()[0]; st.TransactionalProducerID < 0 || st.TransactionRounds != 1 {
		t.Errorf("forward stats after the restart: transactional producer %d, %d rounds; want a producer and 1 round", st.TransactionalProducerID, st.TransactionRounds)
	}
}

// Committed transactions wait in the spool (the upstream is away) when
// the local broker loses power. The restart forgets which partitions each
// transaction touched; the shipper finds them again in the spools, and
// every transaction still arrives upstream as one transaction.
func TestUplinkTransactionsKeepBoundariesAcrossRestart(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("kb"), minikafka.WithTopic("kb", 3))
	cl := minikafkatest.Client(t, local.b, kgo.TransactionalID("kb-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTxn(t, cl, "kb", []int32{0}, []string{"warm"})
	waitFor(t, 20*time.Second, "the warm-up shipped", lagZero(local.b, 1))
	up.Stop()
	var groups [][]string
	want := map[string]bool{"warm": true}
	for i := 0; i < 4; i++ {
		var parts []int32
		var vals []string
		for j := 0; j <= i%3+1; j++ {
			parts = append(parts, int32((i+j)%3))
			vals = append(vals, fmt.Sprintf("t%d-%d", i, j))
			want[vals[len(vals)-1]] = true
		}
		produceTxn(t, cl, "kb", parts, vals)
		groups = append(groups, vals)
	}
	local.Crash()
	cl.Close()
	up.Start()
	waitFor(t, 60*time.Second, "everything forwarded after the restart", lagZero(local.b, 3))
	recs := consumeRecords(t, up.addr, "kb", kgo.ReadCommitted(), len(want))
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	sameValues(t, "upstream read_committed", got, want)
	sameUpstreamTxn(t, recs, groups...)
}
