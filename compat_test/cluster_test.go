package compat_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// The simulated cluster (issue 35) under real clients: each client's
// idempotent producer and group consumer run while the test moves a
// partition leader, stops the node leading another partition, moves the
// group's coordinator and starts the node again, on three nodes with a
// replication factor 3 topic. Every acknowledged record must be read once,
// in order per partition, and a new member of the group afterwards must
// start exactly at the offsets the group committed.

// clusterRun is one client's producer and group consumer, running.
type clusterRun interface {
	// send hands the producer one record (P, K, V set); it returns
	// without waiting for the acknowledgement.
	send(r rec) error
	// finish ends the input: the producer flushes, the consumer reads
	// until it has as many records as were acknowledged, commits and
	// leaves. acked has the records the producer was told were written
	// (O = -1 when the client cannot tell the offset), consumed what the
	// group member read, in the order it read them.
	finish(t *testing.T) (acked, consumed []rec, err error)
}

type clusterCase struct {
	name string
	// start begins producing and consuming as group on topic.
	start func(t *testing.T, addrs []string, topic, group string) clusterRun
	// fresh makes the client's ordinary group consumer, for the resume check.
	fresh func(t *testing.T, addrs []string) groupConsumer
	// idempotent: the producer must show up in DescribeProducers.
	idempotent bool
}

var clusterCases []clusterCase

const clusterParts = 3

func TestClusterClients(t *testing.T) {
	for _, cc := range clusterCases {
		t.Run(cc.name, func(t *testing.T) { runClusterCase(t, cc) })
	}
}

func runClusterCase(t *testing.T, cc clusterCase) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	topic, group := "cluster-"+cc.name, "cluster-group-"+cc.name
	if _, err := adm.CreateTopic(ctx, clusterParts, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	run := cc.start(t, b.Addrs(), topic, group)

	var sent []rec
	next := 0
	// feed sends a record every 10 ms for d, round-robin over the partitions.
	feed := func(d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); next++ {
			r := rec{P: int32(next % clusterParts), K: sp(fmt.Sprintf("k%d", next)), V: sp(fmt.Sprintf("v%d", next)), TS: -1}
			if err := run.send(r); err != nil {
				t.Fatalf("%s: send record %d: %v", cc.name, next, err)
			}
			sent = append(sent, r)
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The moves start once the consumer is a member with its partitions.
	for stable := false; !stable; {
		feed(100 * time.Millisecond)
		if ctx.Err() != nil || len(sent) > 3000 {
			t.Fatalf("%s: the group %s never became Stable", cc.name, group)
		}
		gs, err := adm.DescribeGroups(ctx, group)
		if err == nil {
			g := gs[group]
			stable = g.Err == nil && g.State == "Stable" && len(g.Members) > 0
		}
	}
	feed(300 * time.Millisecond)
	move := func(what string, f func() error) {
		t.Helper()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s after %d records", what, len(sent))
		feed(500 * time.Millisecond)
	}
	pl0, err := b.Placement(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	to := pl0.ISR[0]
	if to == pl0.Leader {
		to = pl0.ISR[1]
	}
	move(fmt.Sprintf("partition 0's leader %d -> %d", pl0.Leader, to), func() error { return b.MoveLeader(topic, 0, to) })
	pl1, _ := b.Placement(topic, 1)
	victim := pl1.Leader
	move(fmt.Sprintf("stop node %d (leads partition 1)", victim), func() error { return b.StopNode(victim) })
	coord, _ := b.Coordinator("group", group)
	var coordTo int32 = -1
	for _, n := range b.Nodes() {
		if n.Up && n.ID != coord {
			coordTo = n.ID
			break
		}
	}
	move(fmt.Sprintf("group coordinator %d -> %d", coord, coordTo), func() error { return b.MoveCoordinator("group", group, coordTo) })
	move(fmt.Sprintf("start node %d", victim), func() error { return b.StartNode(victim) })

	acked, consumed, err := run.finish(t)
	if err != nil {
		t.Fatalf("%s: %v", cc.name, err)
	}
	// Nothing else was written to the topic: each partition holds what was
	// sent to it, in order, from offset 0.
	want := expectOffsets(sent, map[int32]int64{0: 0, 1: 0, 2: 0})
	if len(acked) != len(want) {
		t.Fatalf("%s: %d of %d records acknowledged", cc.name, len(acked), len(want))
	}
	checkAcked(t, cc.name, want, acked)
	verifyRecords(t, cc.name+" group consumer through the moves", want, consumed)
	verifyRecords(t, "kgo reading the log", want, refConsume(t, b.Addrs(), topic, clusterParts, len(want)))
	if t.Failed() {
		for p := int32(0); p < clusterParts; p++ {
			logBatches(t, b, topic, p)
		}
		return
	}

	end := map[int32]int64{}
	for _, r := range want {
		end[r.P] = r.O + 1
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < clusterParts; p++ {
		if o, _ := offs.Lookup(topic, p); o.At != end[p] {
			t.Errorf("%s: group committed %d on partition %d, want %d", cc.name, o.At, p, end[p])
		}
	}
	if cc.idempotent {
		ps, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}, 1: {}, 2: {}}})
		if err != nil {
			t.Fatal(err)
		}
		ps.EachPartition(func(p kadm.DescribedProducersPartition) {
			if p.Err != nil || len(p.ActiveProducers) == 0 {
				t.Errorf("%s: partition %d has no idempotent producer (%v)", cc.name, p.Partition, p.Err)
			}
		})
	}

	// After the moves, a new member of the group resumes where the group
	// committed: it gets the records produced since, and nothing earlier.
	prod := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var more []rec
	for i := 0; i < 2*clusterParts; i++ {
		r := rec{P: int32(i % clusterParts), K: sp(fmt.Sprintf("after-k%d", i)), V: sp(fmt.Sprintf("after-v%d", i)), TS: -1}
		kr := &kgo.Record{Topic: topic, Partition: r.P, Key: []byte(*r.K), Value: []byte(*r.V)}
		if err := prod.ProduceSync(ctx, kr).FirstErr(); err != nil {
			t.Fatal(err)
		}
		more = append(more, r)
	}
	got, err := cc.fresh(t, b.Addrs()).groupConsume(t, topic, group, len(more))
	if err != nil {
		t.Fatalf("%s: a new member of %s: %v", cc.name, group, err)
	}
	verifyRecords(t, cc.name+" new group member after the moves", expectOffsets(more, end), got)
}

// TestClusterKgoTransactCoordinatorMove: a kgo consume-transform-produce
// loop (GroupTransactSession, read_committed) while the transactional ID's
// coordinator moves, then the group's: every input record is in the output
// exactly once, in order per partition, and the group's committed offsets
// are the input's ends.
func TestClusterKgoTransactCoordinatorMove(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	const in, out, group, txid = "ctp-in", "ctp-out", "ctp-group", "ctp-txid"
	if _, err := adm.CreateTopic(ctx, clusterParts, 3, nil, in); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, clusterParts, 3, nil, out); err != nil {
		t.Fatal(err)
	}

	// The input arrives while the loop runs, so the moves land between
	// transactions and inside them.
	const total = 600
	feeder := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i := 0; i < total && ctx.Err() == nil; i++ {
			r := &kgo.Record{Topic: in, Partition: int32(i % clusterParts), Value: []byte(fmt.Sprintf("in-%d", i))}
			if err := feeder.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Errorf("feed: %v", err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(b.Addrs()...), kgo.TransactionalID(txid), kgo.ConsumerGroup(group), kgo.ConsumeTopics(in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.TransactionTimeout(10*time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequireStableFetchOffsets(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	var commits, aborts int
	var moved []string
	moves := []func() (string, error){
		func() (string, error) {
			c, _ := b.Coordinator("transaction", txid)
			to := (c + 1) % 3
			return fmt.Sprintf("transaction coordinator %d -> %d", c, to), b.MoveCoordinator("transaction", txid, to)
		},
		func() (string, error) {
			c, _ := b.Coordinator("group", group)
			to := (c + 1) % 3
			return fmt.Sprintf("group coordinator %d -> %d", c, to), b.MoveCoordinator("group", group, to)
		},
		func() (string, error) {
			c, _ := b.Coordinator("transaction", txid)
			to := (c + 2) % 3
			return fmt.Sprintf("transaction coordinator %d -> %d", c, to), b.MoveCoordinator("transaction", txid, to)
		},
	}
	committedIn := map[int32]int64{}
	done := func() bool {
		for p := int32(0); p < clusterParts; p++ {
			if committedIn[p] < total/clusterParts {
				return false
			}
		}
		return true
	}
	for !done() {
		if ctx.Err() != nil {
			t.Fatalf("input consumed through %v of %d per partition before the deadline (%d commits, %d aborts)", committedIn, total/clusterParts, commits, aborts)
		}
		fs := sess.PollFetches(ctx)
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("fetch %s-%d: %v", tp, p, err)
			}
		})
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		var batch []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { batch = append(batch, r) })
		for _, r := range batch {
			o := &kgo.Record{Topic: out, Partition: r.Partition, Value: []byte("out-" + string(r.Value))}
			sess.Produce(ctx, o, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Logf("produce in transaction: %v", err)
				}
			})
		}
		// A move while the transaction is open: its end must reach the
		// coordinator that holds it now.
		if len(batch) > 0 && len(moves) > 0 && commits >= 3*(4-len(moves)) {
			what, err := moves[0]()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			moved = append(moved, what)
			moves = moves[1:]
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatalf("end transaction (after %d commits): %v", commits, err)
		}
		if committed {
			commits++
			for _, r := range batch {
				committedIn[r.Partition] = r.Offset + 1
			}
		} else {
			aborts++
		}
	}
	<-fed
	t.Logf("%d transactions committed, %d aborted; %v", commits, aborts, moved)
	if len(moves) > 0 {
		t.Fatalf("only %d of 3 coordinator moves happened", 3-len(moves))
	}

	checkTransformed(t, b.Addrs(), adm, in, out, group, total)
}

// checkTransformed: out holds, read_committed, "out-" + each of the total
// input records "in-i" (fed round-robin over the partitions) exactly once,
// in order per partition, and the group's committed offsets are in's ends.
func checkTransformed(t *testing.T, addrs []string, adm *kadm.Client, in, out, group string, total int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var want []rec
	for i := 0; i < total; i++ {
		want = append(want, rec{P: int32(i % clusterParts), V: sp(fmt.Sprintf("out-in-%d", i)), TS: -1})
	}
	// O -1: transaction markers take offsets too; order is what counts.
	for i := range want {
		want[i].O = -1
	}
	got := isolatedConsumeAll(t, addrs, out, total)
	verifyRecords(t, "read_committed output", want, got)

	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(e kadm.ListedOffset) {
		if o, _ := offs.Lookup(in, e.Partition); o.At != e.Offset {
			t.Errorf("group committed %d on %s-%d, input ends at %d", o.At, in, e.Partition, e.Offset)
		}
	})
}

// isolatedConsumeAll reads every partition of topic read_committed until
// want records arrived, then a little longer to catch extras.
func isolatedConsumeAll(t *testing.T, addrs []string, topic string, want int) []rec {
	t.Helper()
	offs := map[string]map[int32]kgo.Offset{topic: {}}
	for p := int32(0); p < clusterParts; p++ {
		offs[topic][p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumePartitions(offs))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []rec
	for len(out) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	}
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	cl.PollFetches(short).EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	for i := range out {
		out[i].O = -1
	}
	return out
}

// checkAcked compares what a producer was told with what it sent, per
// partition and in order: key, value and offset (when the client tells).
func checkAcked(t *testing.T, who string, want, acked []rec) {
	t.Helper()
	w, a := map[int32][]rec{}, map[int32][]rec{}
	for _, r := range want {
		w[r.P] = append(w[r.P], r)
	}
	for _, r := range acked {
		a[r.P] = append(a[r.P], r)
	}
	for p := int32(0); p < clusterParts; p++ {
		if len(w[p]) != len(a[p]) {
			t.Errorf("%s: partition %d: %d records acknowledged, %d sent", who, p, len(a[p]), len(w[p]))
			continue
		}
		sort.SliceStable(a[p], func(i, j int) bool { return a[p][i].O < a[p][j].O })
		for i, x := range a[p] {
			if *x.K != *w[p][i].K || *x.V != *w[p][i].V || (x.O >= 0 && x.O != w[p][i].O) {
				t.Errorf("%s: partition %d: acknowledgement %d is %v, want %v", who, p, i, x, w[p][i])
				break
			}
		}
	}
}

// logBatches lists a partition's batch headers (offsets, producer,
// sequences, first key), for the story of a failure.
func logBatches(t *testing.T, b *minikafka.Broker, topic string, part int32) {
	t.Helper()
	pl, err := b.Placement(topic, part)
	if err != nil {
		t.Logf("placement: %v", err)
		return
	}
	cl := minikafkatest.Client(t, b)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MaxBytes = 100, 16<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	if td, err := kadm.NewClient(cl).ListTopics(context.Background(), topic); err == nil {
		rt.TopicID = td[topic].ID
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = part, 0, 16<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl.Broker(int(pl.Leader)))
	if err == nil && len(resp.Topics) == 0 {
		err = fmt.Errorf("no topics in the answer (%v)", kerr.ErrorForCode(resp.ErrorCode))
	}
	if err != nil {
		t.Logf("fetch %s-%d: %v", topic, part, err)
		return
	}
	for _, rtp := range resp.Topics {
		for _, p := range rtp.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Logf("fetch %s-%d: %v", topic, part, err)
			}
			raw := p.RecordBatches
			for len(raw) > 0 {
				var rb kmsg.RecordBatch
				if err := rb.ReadFrom(raw); err != nil {
					t.Logf("batch: %v", err)
					return
				}
				n := 12 + int(rb.Length)
				raw = raw[n:]
				first := ""
				if recs, err := kgo.DefaultDecompressor().Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&7)); err == nil {
					var r kmsg.Record
					if r.ReadFrom(recs) == nil {
						first = string(r.Key)
					}
				}
				t.Logf("%s-%d batch: offsets %d..%d producer %d epoch %d sequence %d leader epoch %d first key %q",
					topic, part, rb.FirstOffset, rb.FirstOffset+int64(rb.LastOffsetDelta), rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence, rb.PartitionLeaderEpoch, first)
			}
		}
	}
}
