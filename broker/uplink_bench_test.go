package broker_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/minikafkatest"
)

// BenchmarkUplinkForwardVsDirect measures, in the same run, producing
// records straight to the upstream and producing them to a local broker
// that forwards them, until the upstream has acknowledged all of them. Both
// producers use the uplink's own kgo client settings. Reported: records/s
// of each and their ratio (forward/direct; the target is ≥ 0.5). A third
// path forwards through a spool encrypted with AES-256-GCM (enc-forward).
func BenchmarkUplinkForwardVsDirect(b *testing.B) {
	const records, parts, size = 300_000, 4, 100
	up := newUpstream(b)
	local := minikafkatest.New(b, minikafka.WithUpstream(up.addr), minikafka.WithForward("fwd"),
		minikafka.WithTopic("fwd", parts))
	key := make([]byte, 32)
	key[0] = 1
	localEnc := minikafkatest.New(b, minikafka.WithUpstream(up.addr), minikafka.WithForward("fwdenc"),
		minikafka.WithTopic("fwdenc", parts), minikafka.WithSpoolEncryptionKey(key))
	opts, err := uplink.ClientOpts(uplink.Config{Brokers: []string{up.addr}})
	if err != nil {
		b.Fatal(err)
	}
	direct, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	toLocal, err := kgo.NewClient(append(opts, kgo.SeedBrokers(local.Addr()))...)
	if err != nil {
		b.Fatal(err)
	}
	defer toLocal.Close()
	toEnc, err := kgo.NewClient(append(opts, kgo.SeedBrokers(localEnc.Addr()))...)
	if err != nil {
		b.Fatal(err)
	}
	defer toEnc.Close()
	ctx := context.Background()
	value := make([]byte, size)
	send := func(cl *kgo.Client, topic string) {
		for i := 0; i < records; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % parts), Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := kadm.NewClient(direct).CreateTopic(ctx, parts, -1, nil, "direct"); err != nil {
		b.Fatal(err)
	}
	// Warm up both paths (connections, the forwarder's topic creation).
	if err := direct.ProduceSync(ctx, &kgo.Record{Topic: "direct", Value: value}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	if err := toLocal.ProduceSync(ctx, &kgo.Record{Topic: "fwd", Value: value}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	if err := toEnc.ProduceSync(ctx, &kgo.Record{Topic: "fwdenc", Value: value}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	drainedOf := func(l *minikafka.Broker) func() bool {
		return func() bool {
			for _, s := range l.ForwardStats() {
				if s.Lag != 0 {
					return false
				}
			}
			return true
		}
	}
	drained, drainedEnc := drainedOf(local), drainedOf(localEnc)
	for !drained() || !drainedEnc() {
		time.Sleep(time.Millisecond)
	}
	var directDur, fwdDur, encDur time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		send(direct, "direct")
		directDur += time.Since(start)

		start = time.Now()
		send(toLocal, "fwd")
		for !drained() {
			time.Sleep(200 * time.Microsecond)
		}
		fwdDur += time.Since(start)

		start = time.Now()
		send(toEnc, "fwdenc")
		for !drainedEnc() {
			time.Sleep(200 * time.Microsecond)
		}
		encDur += time.Since(start)
	}
	b.StopTimer()
	n := float64(records * b.N)
	d, f, e := n/directDur.Seconds(), n/fwdDur.Seconds(), n/encDur.Seconds()
	b.ReportMetric(d, "direct-rec/s")
	b.ReportMetric(f, "forward-rec/s")
	b.ReportMetric(f/d, "forward/direct")
	b.ReportMetric(e, "enc-forward-rec/s")
	b.ReportMetric(e/d, "enc-forward/direct")
	b.ReportMetric(e/f, "enc/plain-forward")
}

// BenchmarkUplinkTxnForwardVsDirect is BenchmarkUplinkForwardVsDirect for
// a transactional producer: transactions of txnRecords records over four
// partitions, committed one after another, straight to the upstream and
// to a local broker that forwards them (timed until the upstream has
// acknowledged every committed record). Reported: records/s of each and
// their ratio.
func BenchmarkUplinkTxnForwardVsDirect(b *testing.B) {
	const records, txnRecords, parts, size = 100_000, 1000, 4, 100
	tb := newTxnBench(b, parts)
	up, local, direct, toLocal, drained := tb.up, tb.local, tb.direct, tb.toLocal, tb.drained
	ctx := context.Background()
	value := make([]byte, size)
	send := func(cl *kgo.Client, topic string, n int) {
		var failed atomic.Pointer[error]
		for sent := 0; sent < n; {
			if err := cl.BeginTransaction(); err != nil {
				b.Fatal(err)
			}
			for j := 0; j < txnRecords && sent < n; j++ {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(sent % parts), Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.CompareAndSwap(nil, &err)
					}
				})
				sent++
			}
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				b.Fatalf("%s: commit: %v", topic, err)
			}
			if err := failed.Load(); err != nil {
				b.Fatalf("%s: produce: %v", topic, *err)
			}
		}
	}
	// Warm up both paths (producer IDs, the forwarder's topic creation).
	send(direct, "direct", parts)
	send(toLocal, "fwd", parts)
	send(toLocal, "plain", parts)
	for !drained() {
		time.Sleep(time.Millisecond)
	}
	var directDur, fwdDur, plainDur time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		send(direct, "direct", records)
		directDur += time.Since(start)

		start = time.Now()
		send(toLocal, "fwd", records)
		for !drained() {
			time.Sleep(200 * time.Microsecond)
		}
		fwdDur += time.Since(start)

		start = time.Now()
		send(toLocal, "plain", records)
		plainDur += time.Since(start)
	}
	b.StopTimer()
	n := float64(records * b.N)
	d, f, p := n/directDur.Seconds(), n/fwdDur.Seconds(), n/plainDur.Seconds()
	b.ReportMetric(d, "direct-rec/s")
	b.ReportMetric(f, "forward-rec/s")
	b.ReportMetric(f/d, "forward/direct")
	b.ReportMetric(p, "local-rec/s")
	b.ReportMetric(float64(local.ForwardStats()[0].TransactionRounds)/float64(b.N), "upstream-txns/op")
	// Every committed record arrived upstream, once (read_committed: the
	// upstream's offsets also hold the markers of its transactions).
	total, want := 0, parts+records*b.N
	readQuiet(b, up.addr, "fwd", kgo.ReadCommitted(), 5, func(*kgo.Record) { total++ })
	if total != want {
		b.Fatalf("upstream holds %d forwarded records, want %d", total, want)
	}
}

// BenchmarkUplinkSmallTxns: many small transactions (one record in each of
// 3 partitions, commit, next), so what is timed is the per-transaction
// cost: straight to the upstream (direct), and through a forwarding local
// broker (forward, timed until the upstream acknowledged every round; each
// local transaction is one upstream transaction of the uplink's
// transactional producer).
func BenchmarkUplinkSmallTxns(b *testing.B) {
	const txns, parts = 300, 3
	tb := newTxnBench(b, parts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	local, direct, toLocal, drained := tb.local, tb.direct, tb.toLocal, tb.drained
	ctx := context.Background()
	value := make([]byte, 100)
	send := func(cl *kgo.Client, topic string, n int) {
		for i := 0; i < n; i++ {
			if err := cl.BeginTransaction(); err != nil {
				b.Fatal(err)
			}
			for p := int32(0); p < parts; p++ {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Value: value}, nil)
			}
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				b.Fatal(err)
			}
		}
	}
	send(direct, "direct", 1)
	send(toLocal, "fwd", 1)
	for !drained() {
		time.Sleep(time.Millisecond)
	}
	var directDur, fwdDur time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		send(direct, "direct", txns)
		directDur += time.Since(start)
		start = time.Now()
		send(toLocal, "fwd", txns)
		for !drained() {
			time.Sleep(200 * time.Microsecond)
		}
		fwdDur += time.Since(start)
	}
	b.StopTimer()
	n := float64(txns * b.N)
	d, f := n/directDur.Seconds(), n/fwdDur.Seconds()
	b.ReportMetric(d, "direct-txn/s")
	b.ReportMetric(f, "forward-txn/s")
	b.ReportMetric(f/d, "forward/direct")
	b.ReportMetric(float64(local.ForwardStats()[0].TransactionRounds)/float64(b.N), "upstream-txns/op")
}

// txnBench is what the transactional benchmarks share: an upstream with
// the topic "direct", a local broker forwarding "fwd" (and keeping
// "plain"), each with parts partitions, and a transactional kgo producer
// to each broker (with the uplink's own client settings, plus opts).
type txnBench struct {
	up              *upstream
	local           *minikafka.Broker
	direct, toLocal *kgo.Client
}

func newTxnBench(b *testing.B, parts int32, opts ...kgo.Opt) *txnBench {
	tb := &txnBench{up: newUpstream(b)}
	tb.local = minikafkatest.New(b, minikafka.WithUpstream(tb.up.addr), minikafka.WithForward("fwd"),
		minikafka.WithTopic("fwd", parts), minikafka.WithTopic("plain", parts))
	base, err := uplink.ClientOpts(uplink.Config{Brokers: []string{tb.up.addr}})
	if err != nil {
		b.Fatal(err)
	}
	base = append(base, opts...)
	if tb.direct, err = kgo.NewClient(append(slices.Clone(base), kgo.TransactionalID(b.Name()+"-direct"))...); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(tb.direct.Close)
	if tb.toLocal, err = kgo.NewClient(append(slices.Clone(base), kgo.SeedBrokers(tb.local.Addr()), kgo.TransactionalID(b.Name()+"-fwd"))...); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(tb.toLocal.Close)
	if _, err := kadm.NewClient(tb.direct).CreateTopic(context.Background(), parts, -1, nil, "direct"); err != nil {
		b.Fatal(err)
	}
	return tb
}

// drained reports whether the upstream acknowledged everything forwarded.
func (tb *txnBench) drained() bool {
	for _, s := range tb.local.ForwardStats() {
		if s.Lag != 0 {
			return false
		}
	}
	return true
}
