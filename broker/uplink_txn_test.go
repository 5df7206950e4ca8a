package broker_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// consumeValues reads topic's partitions from the start at isolation
// level iso until it holds want records, then briefly more to catch extras,
// and returns the values seen.
func consumeValues(t *testing.T, addr, topic string, iso kgo.IsolationLevel, want int) []string {
	t.Helper()
	var out []string
	for _, r := range consumeRecords(t, addr, topic, iso, want) {
		out = append(out, string(r.Value))
	}
	return out
}

// consumeRecords is consumeValues returning the records.
func consumeRecords(t *testing.T, addr, topic string, iso kgo.IsolationLevel, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s at %s", len(out), want, topic, addr)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	short, cancelShort := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelShort()
	cl.PollFetches(short).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	return out
}

// readQuiet reads topic at isolation level iso from the start, handing
// each record to fn, until quiet polls in a row (of up to 200 ms) find
// nothing: for when how many records there are is what is checked.
func readQuiet(tb testing.TB, addr, topic string, iso kgo.IsolationLevel, quiet int, fn func(*kgo.Record)) {
	tb.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	for idle := 0; idle < quiet; {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		if fs.NumRecords() == 0 {
			idle++
			continue
		}
		idle = 0
		fs.EachRecord(fn)
	}
}

// upstreamTxnOf returns the upstream transaction each transactional
// record arrived in, by value: transactions v2 (the upstream here is a
// minikafka broker) bump the producer epoch at every commit, so producer
// ID and epoch name one upstream transaction.
func upstreamTxnOf(recs []*kgo.Record) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, r := range recs {
		if r.Attrs.IsTransactional() {
			out[string(r.Value)] = [2]int64{r.ProducerID, int64(r.ProducerEpoch)}
		}
	}
	return out
}

// sameValues fails unless got holds exactly the values of want, each once.
func sameValues(t *testing.T, what string, got []string, want map[string]bool) {
	t.Helper()
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for v := range want {
		if seen[v] != 1 {
			t.Errorf("%s: %q seen %d times, want once", what, v, seen[v])
		}
	}
	for v := range seen {
		if !want[v] {
			t.Errorf("%s: %q should not be there (aborted or never committed)", what, v)
		}
	}
}

// upstreamEnds sums the upstream's end offsets of topic: with nothing but
// the shipped records upstream (no aborted data, no markers), it is their
// count.
func upstreamEnds(t *testing.T, addr, topic string, parts int32) int {
	t.Helper()
	n := 0
	for _, rs := range readToEnd(t, addr, topic, parts) {
		n += len(rs)
	}
	return n
}

// Transactions on a forwarded topic: committed transactions reach the
// upstream, aborted ones never do, and plain records produced between them
// go too. Upstream, read_committed and read_uncommitted consumers both see
// exactly the committed records once each, and the local partitions serve
// read_committed consumers as a log does.
func TestUplinkTransactionsShipCommittedRecordsOnly(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("tx"), minikafka.WithTopic("tx", 2))
	ctx := context.Background()
	txn := minikafkatest.Client(t, local, kgo.TransactionalID("edge-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic("tx"), kgo.TransactionTimeout(10*time.Second))
	plain := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("tx"))
	// The upstream is away while the transactions run (the edge's usual
	// state), so the local read below finds every record still spooled.
	want := map[string]bool{}
	for p := int32(0); p < 2; p++ {
		v := fmt.Sprintf("first-%d", p)
		if err := plain.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want[v] = true
	}
	waitFor(t, 20*time.Second, "the forwarders shipping", lagZero(local, 2))
	up.Stop()

	for i := 0; i < 12; i++ {
		commit := i%3 != 1
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 6; j++ {
			v := fmt.Sprintf("txn-%d-%d", i, j)
			if err := txn.ProduceSync(ctx, &kgo.Record{Partition: int32(j % 2), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if commit {
				want[v] = true
			}
		}
		// A plain record behind the open transaction: shipped, but only
		// once the transaction ends.
		v := fmt.Sprintf("plain-%d", i)
		if err := plain.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		want[v] = true
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// Locally, what was shipped before the upstream left is gone from
	// the spool (acknowledged records are deleted); the rest is there.
	spooled := map[string]bool{}
	for v := range want {
		if !strings.HasPrefix(v, "first-") {
			spooled[v] = true
		}
	}
	sameValues(t, "local read_committed", consumeValues(t, local.Addr(), "tx", kgo.ReadCommitted(), len(spooled)), spooled)
	up.Start()
	waitFor(t, 60*time.Second, "everything forwarded", lagZero(local, 2))
	recs := consumeRecords(t, up.addr, "tx", kgo.ReadCommitted(), len(want))
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	sameValues(t, "upstream read_committed", got, want)
	// Each local transaction arrived as one upstream transaction over
	// both partitions, with the plain record produced while it was open
	// (it sits inside the transaction's run), and no two in the same one.
	var groups [][]string
	for i := 0; i < 12; i++ {
		if i%3 == 1 {
			continue // aborted: never shipped
		}
		g := []string{fmt.Sprintf("txn-%d-0", i), fmt.Sprintf("plain-%d", i)}
		for j := 1; j < 6; j++ {
			g = append(g, fmt.Sprintf("txn-%d-%d", i, j))
		}
		groups = append(groups, g)
	}
	sameUpstreamTxn(t, recs, groups...)
	// Read uncommitted, nothing of an aborted transaction is there.
	for _, v := range consumeValues(t, up.addr, "tx", kgo.ReadUncommitted(), len(want)) {
		if !want[v] {
			t.Errorf("upstream read_uncommitted: %q should not be there", v)
		}
	}
}

// An open transaction holds back what follows it on its partition: the
// upstream gets neither its records nor a plain record produced after
// them until it commits, then all of them in order.
func TestUplinkOpenTransactionHoldsItsPartition(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("held"), minikafka.WithTopic("held", 1))
	ctx := context.Background()
	txn := minikafkatest.Client(t, local, kgo.TransactionalID("held-txn"), kgo.DefaultProduceTopic("held"))
	plain := minikafkatest.Client(t, local, kgo.DefaultProduceTopic("held"))

	if err := plain.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the first record forwarded", func() bool { return local.ForwardStats()[0].Lag == 0 })
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, kgo.StringRecord("in-txn")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := plain.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Nothing moves while the transaction is open: give the forwarder
	// time it would need to ship (it ships within milliseconds).
	time.Sleep(time.Second)
	if st := local.ForwardStats()[0]; st.Lag != 2 || st.State != "idle" {
		t.Fatalf("with a transaction open: lag %d state %s, want lag 2 (held) and idle", st.Lag, st.State)
	}
	if n := upstreamEnds(t, up.addr, "held", 1); n != 1 {
		t.Fatalf("upstream holds %d records while the transaction is open, want 1", n)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "forwarded after the commit", func() bool { return local.ForwardStats()[0].Lag == 0 })
	got := consumeValues(t, up.addr, "held", kgo.ReadCommitted(), 3)
	if !slices.Equal(got, []string{"before", "in-txn", "after"}) {
		t.Fatalf("upstream holds %q, want before, in-txn, after", got)
	}
}

// The local broker loses power with a transaction open and after one
// committed: the restarted broker finds both in the spool. The committed
// one is shipped; the open one is aborted at its timeout and never leaves,
// and the records behind it then go.
func TestUplinkTransactionsAcrossLocalCrash(t *testing.T) {
	up := newUpstream(t)
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("txc"), minikafka.WithTopic("txc", 1))
	ctx := context.Background()
	client := func(opts ...kgo.Opt) *kgo.Client {
		return minikafkatest.Client(t, local.b, append([]kgo.Opt{kgo.DefaultProduceTopic("txc")}, opts...)...)
	}
	txn := client(kgo.TransactionalID("crash-txn"), kgo.TransactionTimeout(2*time.Second))
	for _, commit := range []bool{true, false} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ {
			if err := txn.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("commit=%v-%d", commit, j))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	local.Crash()
	txn.Close()
	plain := client()
	if err := plain.ProduceSync(ctx, kgo.StringRecord("after-crash")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the open transaction aborted at its timeout and the rest forwarded", lagZero(local.b, 1))
	want := map[string]bool{"commit=true-0": true, "commit=true-1": true, "commit=true-2": true, "after-crash": true}
	sameValues(t, "upstream after the crash", consumeValues(t, up.addr, "txc", kgo.ReadCommitted(), len(want)), want)
	sameValues(t, "upstream after the crash, read uncommitted", consumeValues(t, up.addr, "txc", kgo.ReadUncommitted(), len(want)), want)
}

// A transaction fills the spool while the upstream is away, to the last
// byte: its produce is refused as the spool is full, yet its abort marker
// is taken (a full spool of records behind an open transaction could
// otherwise never drain), and the aborted records are then dropped without
// the upstream, so the spool takes records again.
func TestUplinkTransactionEndsInAFullSpool(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("full"), minikafka.WithTopic("full", 1),
		minikafka.WithSpoolMaxBytes(256<<10))
	ctx := context.Background()
	plain := minikafkatest.Client(t, local, kgo.DefaultProduceTopic("full"), kgo.RecordDeliveryTimeout(time.Second), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err := plain.ProduceSync(ctx, kgo.StringRecord("first")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the forwarder shipping", lagZero(local, 1))
	up.Stop()

	txn := minikafkatest.Client(t, local, kgo.TransactionalID("full-txn"), kgo.DefaultProduceTopic("full"),
		kgo.RecordDeliveryTimeout(2*time.Second), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 8<<10)
	rand.Read(value) // the spool compresses what producers did not
	var perr error
	for i := 0; i < 1000 && perr == nil; i++ {
		perr = txn.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
	}
	if perr == nil {
		t.Fatal("8 MiB of transactional records fit a 256 KiB spool")
	}
	if p := local.ForwardStats()[0].Pressure; p < 0.9 {
		t.Fatalf("produce failed (%v) at spool pressure %.2f, want a full spool", perr, p)
	}
	// Fill what is left with plain records, smaller and smaller, down to
	// empty ones, which are smaller than a marker (they wait behind the
	// open transaction too): now not even a marker fits.
	for _, size := range []int{1024, 128, 0} {
		v := make([]byte, size)
		for i := 0; i < 100_000; i++ {
			rand.Read(v)
			if plain.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr() != nil {
				break
			}
		}
	}
	if err := txn.AbortBufferedRecords(ctx); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatalf("aborting in a full spool: %v", err)
	}
	// The aborted records leave the spool without the upstream; the plain
	// ones behind them stay until it is back.
	waitFor(t, 20*time.Second, "the aborted records dropped without the upstream", func() bool { return local.ForwardStats()[0].Pressure < 0.5 })
	if err := plain.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("produce after the abort drained the spool: %v", err)
	}
	if st := local.ForwardStats()[0]; st.Lag == 0 {
		t.Fatalf("the plain records were shipped with the upstream down: %+v", st)
	}
}
