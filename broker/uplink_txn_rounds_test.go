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
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/minikafkatest"
)

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
		id, ok := oneUpstreamTxn(t, of, g)
		if !ok {
			continue
		}
		if j, ok := seen[id]; ok {
			t.Errorf("groups %d and %d arrived in one upstream transaction", j, i)
		}
		seen[id] = i
	}
}

// oneUpstreamTxn fails unless every value of g arrived upstream in one
// transaction (of is upstreamTxnOf's map), and returns it.
func oneUpstreamTxn(t *testing.T, of map[string][2]int64, g []string) ([2]int64, bool) {
	t.Helper()
	id, ok := of[g[0]]
	if !ok {
		t.Errorf("%s is not transactional upstream", g[0])
		return id, false
	}
	for _, v := range g[1:] {
		if o, ok := of[v]; !ok || o != id {
			t.Errorf("%s arrived in upstream transaction %v (transactional: %v), %s in %v", v, o, ok, g[0], id)
		}
	}
	return id, true
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

// Transactions through the forwarder under chaos: a transactional
// producer commits and aborts transactions over three partitions while
// the upstream restarts and the local broker loses power during shipping.
// Upstream, read_committed consumers must see every transaction whose
// commit was acknowledged, whole and once; none whose abort was; one whose
// end was lost to a crash whole or not at all; and each transaction's
// records inside one upstream transaction.
func TestUplinkTransactionsChaos(t *testing.T) {
	const topic, parts = "txchaos", 3
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward(topic), minikafka.WithTopic(topic, parts))
	const (
		committed = iota + 1
		aborted
		unknown
	)
	outcome := map[int]int{}
	sizes := map[int]int{}
	stop := make(chan struct{})
	done := make(chan struct{})
	// The broker's address survives each crash; local.b itself is
	// replaced by Crash while this goroutine runs.
	seed := local.b
	go func() {
		defer close(done)
		newClient := func() *kgo.Client {
			return minikafkatest.Client(t, seed, kgo.TransactionalID("chaos-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.TransactionTimeout(3*time.Second), kgo.RecordDeliveryTimeout(5*time.Second), kgo.RetryTimeout(5*time.Second))
		}
		cl := newClient()
		for i := 0; ; i++ {
			select {
			case <-stop:
				cl.Close()
				return
			default:
			}
			size := 2 + i%4
			sizes[i] = size
			commit := i%4 != 3
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := cl.BeginTransaction()
			for j := 0; j < size && err == nil; j++ {
				err = cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32((i + j) % parts), Value: []byte(fmt.Sprintf("t%d-%d", i, j))}).FirstErr()
			}
			if err == nil {
				err = cl.EndTransaction(ctx, kgo.TransactionEndTry(commit))
			}
			cancel()
			switch {
			case err != nil:
				// Its end (or a record) was lost: the next client's
				// InitProducerID aborts it if it never committed.
				outcome[i] = unknown
				cl.Close()
				cl = newClient()
			case commit:
				outcome[i] = committed
			default:
				outcome[i] = aborted
			}
		}
	}()
	for _, e := range []string{"up", "crash", "up", "crash", "crash", "up"} {
		time.Sleep(700 * time.Millisecond)
		if e == "up" {
			up.Stop()
			time.Sleep(200 * time.Millisecond)
			up.Start()
		} else {
			local.Crash()
		}
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	<-done
	waitFor(t, 90*time.Second, "everything forwarded", lagZero(local.b, parts))

	var recs []*kgo.Record
	readQuiet(t, up.addr, topic, kgo.ReadCommitted(), 10, func(r *kgo.Record) { recs = append(recs, r) })
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Value)]++
	}
	counts := map[int]int{}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("%s seen %d times upstream", v, c)
		}
		var i, j int
		if _, err := fmt.Sscanf(v, "t%d-%d", &i, &j); err != nil {
			t.Fatalf("upstream value %q", v)
		}
		counts[i]++
	}
	of := upstreamTxnOf(recs)
	stats := map[int]int{}
	for i, o := range outcome {
		stats[o]++
		switch {
		case o == committed && counts[i] != sizes[i]:
			t.Errorf("committed transaction %d: %d of its %d records upstream", i, counts[i], sizes[i])
		case o == aborted && counts[i] != 0:
			t.Errorf("aborted transaction %d: %d records upstream", i, counts[i])
		case o == unknown && counts[i] != 0 && counts[i] != sizes[i]:
			t.Errorf("transaction %d (end lost in a crash): %d of its %d records upstream", i, counts[i], sizes[i])
		}
		if counts[i] > 0 {
			var g []string
			for j := 0; j < sizes[i]; j++ {
				g = append(g, fmt.Sprintf("t%d-%d", i, j))
			}
			oneUpstreamTxn(t, of, g)
		}
	}
	t.Logf("%d transactions committed, %d aborted, %d ended in a crash; %d records upstream", stats[committed], stats[aborted], stats[unknown], len(recs))
	if stats[committed] < 10 {
		t.Errorf("only %d transactions committed: the test did not exercise forwarding", stats[committed])
	}
}

// The upstream refuses a share's produce once: a merged run as too large
// (it goes again in halves), a batch shipped as it is as corrupt (it goes
// again re-encoded). Either way the round commits once, with every record
// once, inside it.
func TestUplinkTransactionShareRefusedOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		code  int16
		sizes []int // value sizes of the transaction's records, one batch each
	}{
		{"too large", 10, []int{100, 100, 100, 100, 100, 100}}, // MESSAGE_TOO_LARGE; small batches merge
		{"corrupt", 2, []int{20 << 10}},                        // CORRUPT_MESSAGE; a large batch goes as it is
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t)
			local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("rf"), minikafka.WithTopic("rf", 1))
			cl := minikafkatest.Client(t, local, kgo.TransactionalID("rf-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			produceTxn(t, cl, "rf", []int32{0}, []string{"warm"})
			waitFor(t, 20*time.Second, "the warm-up shipped", lagZero(local, 1))
			up.Stop() // the transaction's batches wait in the spool, to be shipped as one run
			ctx := context.Background()
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{"warm": true}
			for i, n := range c.sizes {
				v := fmt.Sprintf("%d-%s", i, strings.Repeat("x", n))
				want[v] = true
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "rf", Value: []byte(v)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			up.Start()
			if _, err := up.b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "rf", ErrorCode: c.code, Times: 1}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "forwarded", lagZero(local, 1))
			recs := consumeRecords(t, up.addr, "rf", kgo.ReadCommitted(), len(want))
			var got, group []string
			for _, r := range recs {
				got = append(got, string(r.Value))
				if string(r.Value) != "warm" {
					group = append(group, string(r.Value))
				}
			}
			sameValues(t, "upstream read_committed", got, want)
			oneUpstreamTxn(t, upstreamTxnOf(recs), group)
			// Handled inside the round: no round failed.
			if st := local.ForwardStats()[0]; st.TransactionRounds != 2 || st.Errors != 0 {
				t.Errorf("%d upstream transactions, %d errors (last %q); want 2 (the warm-up and this one) and none", st.TransactionRounds, st.Errors, st.LastError)
			}
		})
	}
}

// The uplink's transactional producer asks the upstream for a 5-minute
// transaction timeout (a round carries whole local transactions); an
// upstream whose limit is lower refuses it (INVALID_TRANSACTION_TIMEOUT)
// and gets one minute.
func TestUplinkTransactionTimeoutFallsBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		refuse bool
		want   int32
	}{{"accepted", false, 300_000}, {"refused", true, 60_000}} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t)
			local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("tt"), minikafka.WithTopic("tt", 1))
			// A plain record starts the forwarder (it names the
			// transactional ID) before any transaction asks for the
			// producer.
			plain := minikafkatest.Client(t, local, kgo.DefaultProduceTopic("tt"))
			if err := plain.ProduceSync(context.Background(), kgo.StringRecord("plain")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			txnID := local.ForwardStats()[0].TransactionalID
			if st := local.ForwardStats()[0]; st.TransactionalProducerID != -1 {
				t.Fatalf("transactional producer %d before any transaction", st.TransactionalProducerID)
			}
			if c.refuse {
				if _, err := up.b.AddFault(minikafka.Fault{Keys: []int16{22}, TxnID: txnID, ErrorCode: 50, Times: 1}); err != nil {
					t.Fatal(err)
				}
			}
			cl := minikafkatest.Client(t, local, kgo.TransactionalID("tt-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			produceTxn(t, cl, "tt", []int32{0}, []string{"in a transaction"})
			waitFor(t, 20*time.Second, "the transaction shipped", lagZero(local, 1))
			upCl, err := kgo.NewClient(kgo.SeedBrokers(up.addr))
			if err != nil {
				t.Fatal(err)
			}
			defer upCl.Close()
			ds, err := kadm.NewClient(upCl).DescribeTransactions(context.Background(), txnID)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := ds[txnID]
			if !ok || d.Err != nil {
				t.Fatalf("describing %s upstream: %+v", txnID, ds)
			}
			if d.TimeoutMillis != c.want {
				t.Errorf("upstream transaction timeout %d ms, want %d", d.TimeoutMillis, c.want)
			}
		})
	}
}

// A round that waits does not hold back one that does not need it:
// transaction 1 spans topics a and s, and s's forwarder is stuck behind a
// plain record the upstream keeps refusing; transaction 2, on topic b
// alone, still ships. Once the upstream takes s again, transaction 1
// ships whole.
func TestUplinkWaitingRoundHoldsBackNoOther(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("a"), minikafka.WithForward("b"), minikafka.WithForward("s"),
		minikafka.WithTopic("a", 1), minikafka.WithTopic("b", 1), minikafka.WithTopic("s", 1))
	ctx := context.Background()
	plain := minikafkatest.Client(t, local)
	for _, topic := range []string{"a", "b", "s"} { // the upstream topics exist
		if err := plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm-" + topic)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "the warm-up shipped", lagZero(local, 3))
	id, err := up.b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "s", ErrorCode: 6}) // NOT_LEADER_OR_FOLLOWER, retried forever
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "s", Value: []byte("stuck")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ { // b's transaction sits further into its spool than a's
		if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "b", Value: []byte(fmt.Sprintf("b-plain-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl := minikafkatest.Client(t, local, kgo.TransactionalID("wr-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"a", "s"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("t1-" + topic)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	produceTxn(t, cl, "b", []int32{0}, []string{"t2-b"})
	stat := func(topic string) uplink.ForwardStat {
		for _, s := range local.ForwardStats() {
			if s.Topic == topic {
				return s
			}
		}
		t.Fatalf("no forwarder of %s", topic)
		return uplink.ForwardStat{}
	}
	waitFor(t, 20*time.Second, "transaction 2 shipped while transaction 1 waits", func() bool { return stat("b").Lag == 0 })
	if a, s := stat("a"), stat("s"); a.Lag == 0 || s.Lag == 0 || a.State != "transaction" {
		t.Fatalf("transaction 1 shipped though s is refused: a %+v, s %+v", a, s)
	}
	if err := up.b.RemoveFault(id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "everything shipped", lagZero(local, 3))
	var recs []*kgo.Record
	for _, topic := range []string{"a", "s"} {
		for _, r := range consumeRecords(t, up.addr, topic, kgo.ReadCommitted(), 2) {
			recs = append(recs, r)
		}
	}
	oneUpstreamTxn(t, upstreamTxnOf(recs), []string{"t1-a", "t1-s"})
}
