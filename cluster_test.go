package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/testcert"
	"github.com/minikafka/minikafka/minikafkatest"
)

// TestClusterMetadata: three nodes, each on its own port, listed in
// Metadata and DescribeCluster; an RF 3 topic's partitions have three
// replicas with leaders spread over the nodes; RF 4 is refused as Kafka
// refuses it.
func TestClusterMetadata(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3), minikafka.WithRacks("a", "b", "c"))
	if got := len(b.Addrs()); got != 3 {
		t.Fatalf("Addrs %v: want 3 nodes", b.Addrs())
	}
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "rf3"); err != nil {
		t.Fatal(err)
	}
	resp, err := adm.CreateTopic(ctx, 1, 4, nil, "rf4")
	if !errors.Is(err, kerr.InvalidReplicationFactor) && !errors.Is(resp.Err, kerr.InvalidReplicationFactor) {
		t.Fatalf("RF 4 on 3 nodes: %v / %v, want INVALID_REPLICATION_FACTOR", err, resp.Err)
	}
	md, err := adm.Metadata(ctx, "rf3")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("brokers %v", md.Brokers)
	}
	ports := map[int32]bool{}
	for _, br := range md.Brokers {
		ports[br.Port] = true
		if br.Rack == nil || *br.Rack != string(rune('a'+br.NodeID)) {
			t.Fatalf("node %d rack %v", br.NodeID, br.Rack)
		}
	}
	if len(ports) != 3 {
		t.Fatalf("ports %v: each node its own", ports)
	}
	leaders := map[int32]int{}
	for _, p := range md.Topics["rf3"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 || p.Replicas[0] != p.Leader {
			t.Fatalf("partition %d: replicas %v isr %v leader %d", p.Partition, p.Replicas, p.ISR, p.Leader)
		}
		leaders[p.Leader]++
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders %v: spread over the nodes", leaders)
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, minikafkatest.Client(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.Brokers) != 3 || dc.ControllerID < 0 {
		t.Fatalf("DescribeCluster %+v", dc)
	}
}

// TestClusterNotLeader: a produce sent straight to a node that does not
// lead the partition is NOT_LEADER_OR_FOLLOWER; a kgo producer follows a
// leader move, a stopped node and a restarted one, and every record it
// was acknowledged is read back once, in order, with leader epochs that
// only go up.
func TestClusterKgoThroughMoves(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"classic", nil},
		{"848", []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer())}},
	} {
		t.Run(tc.name, func(t *testing.T) { testKgoThroughMoves(t, tc.opts) })
	}
}

func testKgoThroughMoves(t *testing.T, groupOpts []kgo.Opt) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	const topic, parts = "moves", 3
	if _, err := adm.CreateTopic(ctx, parts, 3, nil, topic); err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		acked = map[int32][]string{}
	)
	prod := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := int32(0); p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				v := fmt.Sprintf("%d-%d", p, i)
				r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}
				if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Errorf("produce %s: %v", v, err)
					return
				}
				mu.Lock()
				acked[p] = append(acked[p], v)
				mu.Unlock()
			}
		}()
	}

	cons := minikafkatest.Client(t, b, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumerGroup("moves-group"),
		kgo.FetchMaxWait(100 * time.Millisecond)}, groupOpts...)...)
	var (
		gotMu sync.Mutex
		got   = map[int32][]string{}
	)
	consumeDone := make(chan struct{})
	go func() {
		defer close(consumeDone)
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(tp string, p int32, err error) {
				if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					t.Logf("fetch %s-%d: %v", tp, p, err)
				}
			})
			gotMu.Lock()
			fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], string(r.Value)) })
			gotMu.Unlock()
			if fs.IsClientClosed() {
				return
			}
		}
	}()

	step := func(what string, f func() error) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s", what)
	}
	pl, _ := b.Placement(topic, 0)
	other := pl.Replicas[1]
	step("move leader of partition 0", func() error { return b.MoveLeader(topic, 0, other) })
	pl1, _ := b.Placement(topic, 1)
	victim := pl1.Leader
	step(fmt.Sprintf("stop node %d", victim), func() error { return b.StopNode(victim) })
	step("move the group's coordinator", func() error {
		c, _ := b.Coordinator("group", "moves-group")
		for _, n := range b.Nodes() {
			if n.Up && n.ID != c {
				return b.MoveCoordinator("group", "moves-group", n.ID)
			}
		}
		return errors.New("no other node")
	})
	step(fmt.Sprintf("start node %d", victim), func() error { return b.StartNode(victim) })
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	// Every acknowledged record read once, in order.
	deadline := time.Now().Add(30 * time.Second)
	for p := int32(0); p < parts; p++ {
		mu.Lock()
		want := acked[p]
		mu.Unlock()
		if len(want) < 10 {
			t.Fatalf("partition %d: only %d records acknowledged", p, len(want))
		}
		for {
			gotMu.Lock()
			have := slices.Clone(got[p])
			gotMu.Unlock()
			if len(have) >= len(want) || time.Now().After(deadline) {
				if !slices.Equal(have[:min(len(have), len(want))], want) || len(have) != len(want) {
					t.Fatalf("partition %d: read %d records, acknowledged %d; first difference at %d", p, len(have), len(want), firstDiff(have, want))
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	pl, _ = b.Placement(topic, 0)
	if pl.LeaderEpoch < 1 {
		t.Fatalf("partition 0 epoch %d after a move", pl.LeaderEpoch)
	}
	// The offsets the group committed are where a new member resumes.
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.Close()
	<-consumeDone
	offs, err := adm.FetchOffsets(ctx, "moves-group")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		o, _ := offs.Lookup(topic, p)
		if int(o.At) != len(acked[p]) {
			t.Fatalf("partition %d committed %d, want %d", p, o.At, len(acked[p]))
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestClusterRouting: requests sent straight to the wrong node get
// Kafka's errors: produce NOT_LEADER_OR_FOLLOWER naming the leader
// (KIP-951), group requests NOT_COORDINATOR; acks=all below
// min.insync.replicas is NOT_ENOUGH_REPLICAS while acks=1 succeeds.
func TestClusterRouting(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx := context.Background()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "r"); err != nil {
		t.Fatal(err)
	}
	pl, err := b.Placement("r", 0)
	if err != nil {
		t.Fatal(err)
	}
	var wrong minikafka.NodeInfo
	for _, n := range b.Nodes() {
		if n.ID != pl.Leader {
			wrong = n
		}
	}
	// A client that only knows the wrong node, and never refreshes.
	direct := minikafkatest.Client(t, b, kgo.SeedBrokers(wrong.Addr))
	md, err := adm.Metadata(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	req := kmsgProduce("r", 0, 1)
	req.Topics[0].TopicID = md.Topics["r"].ID
	resp, err := req.RequestWith(ctx, direct.Broker(int(wrong.ID)))
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.CurrentLeader.LeaderID != pl.Leader {
		t.Fatalf("produce to node %d: code %d leader %d, want NOT_LEADER_OR_FOLLOWER naming %d", wrong.ID, sp.ErrorCode, sp.CurrentLeader.LeaderID, pl.Leader)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != pl.Leader {
		t.Fatalf("node endpoints %+v", resp.Brokers)
	}
	c, _ := b.Coordinator("group", "g")
	for _, n := range b.Nodes() {
		if n.ID == c {
			continue
		}
		hb := kmsgHeartbeat("g")
		hr, err := hb.RequestWith(ctx, direct.Broker(int(n.ID)))
		if err != nil {
			t.Fatal(err)
		}
		if hr.ErrorCode != kerr.NotCoordinator.Code {
			t.Fatalf("heartbeat at node %d: %v, want NOT_COORDINATOR", n.ID, kerr.ErrorForCode(hr.ErrorCode))
		}
	}

	cl := minikafkatest.Client(t, b, kgo.RecordRetries(1), kgo.RequestRetries(1))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "r", Value: []byte("ok")}).FirstErr(); err != nil {
		t.Fatalf("full ISR: %v", err)
	}
	if err := b.SetISR("r", 0, pl.Leader); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := cl.ProduceSync(sctx, &kgo.Record{Topic: "r", Value: []byte("few")}).FirstErr(); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all with ISR 1 < min.insync.replicas 2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	one := minikafkatest.Client(t, b, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err := one.ProduceSync(ctx, &kgo.Record{Topic: "r", Value: []byte("acks1")}).FirstErr(); err != nil {
		t.Fatalf("acks=1 with ISR 1: %v", err)
	}
}

// kmsgProduce is an acks=all produce request of n 1 KiB records to one
// partition, for sending to a chosen node.
func kmsgProduce(topic string, partition int32, n int) *kmsg.ProduceRequest {
	recs := make([]records.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(make([]byte, 0, 1024), "%-1024d", i) // 1 KiB each
	}
	batch, err := records.AppendBatch(nil, records.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, FirstTimestamp: time.Now().UnixMilli()}, recs)
	if err != nil {
		panic(err)
	}
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = -1, 5000
	r.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: partition, Records: batch}}}}
	return r
}

func kmsgHeartbeat(group string) *kmsg.HeartbeatRequest {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Group, r.MemberID, r.Generation = group, "m", 1
	return r
}

// TestClusterElectReassignEpochs: preferred election after a node comes
// back, a reassignment that takes effect at once, OffsetForLeaderEpoch
// answering where each epoch ended, and the automatic rebalance.
func TestClusterElectReassignEpochs(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3), minikafka.WithAutoLeaderRebalance(200*time.Millisecond))
	ctx := context.Background()
	cl := minikafkatest.Client(t, b, kgo.DefaultProduceTopic("e"))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "e"); err != nil {
		t.Fatal(err)
	}
	produce := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(5)
	pl, _ := b.Placement("e", 0)
	pref := pl.Replicas[0]
	if err := b.StopNode(pref); err != nil {
		t.Fatal(err)
	}
	produce(3)
	after, _ := b.Placement("e", 0)
	if after.Leader == pref || after.LeaderEpoch != pl.LeaderEpoch+1 || slices.Contains(after.ISR, pref) {
		t.Fatalf("after stopping node %d: %+v", pref, after)
	}
	// Epoch 0 ended where the new leader's began.
	var oreq kadm.OffsetForLeaderEpochRequest
	oreq.Add("e", 0, 0)
	oe, err := adm.OffsetForLeaderEpoch(ctx, oreq)
	if err != nil {
		t.Fatal(err)
	}
	if r := oe["e"][0]; r.EndOffset != 5 || r.LeaderEpoch != 0 || r.Err != nil {
		t.Fatalf("OffsetForLeaderEpoch(0) = %+v, want epoch 0 ending at 5", r)
	}
	if err := b.StartNode(pref); err != nil {
		t.Fatal(err)
	}
	// The rebalance gives the preferred replica its leadership back.
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, _ := b.Placement("e", 0)
		if cur.Leader == pref {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader still %d, want %d back", cur.Leader, pref)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Reassign to two other replicas: effective at once.
	var target []int32
	for _, n := range b.Nodes() {
		if n.ID != pref {
			target = append(target, n.ID)
		}
	}
	areq := kadm.AlterPartitionAssignmentsReq{}
	areq.Assign("e", 0, target)
	ar, err := adm.AlterPartitionAssignments(ctx, areq)
	if err != nil {
		t.Fatal(err)
	}
	if err := ar.Error(); err != nil {
		t.Fatalf("reassign to %v: %v", target, err)
	}
	now, _ := b.Placement("e", 0)
	if !slices.Equal(now.Replicas, target) || !slices.Contains(target, now.Leader) {
		t.Fatalf("after reassignment to %v: %+v", target, now)
	}
	// The data is all there, read through the new leader.
	cons := minikafkatest.Client(t, b, kgo.ConsumeTopics("e"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	n := 0
	for n < 8 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	// Preferred election of a partition already led by its preferred
	// replica is not needed.
	er, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"e": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := er["e"][0]; now.Leader == target[0] && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Fatalf("election: %+v", r)
	}
}

// TestClusterTLSSASLTransactions: every node's listener speaks TLS and
// SASL; a transactional producer writes to partitions led by all three
// nodes, its transaction coordinator moves between two transactions and
// in the middle of one, and a read_committed consumer sees each committed
// record once and nothing of the aborted transaction.
func TestClusterTLSSASLTransactions(t *testing.T) {
	cs, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithNodes(3),
		minikafka.WithTLS(cs.ServerConfig(true)),
		minikafka.WithSASL(map[string]string{"app": "pw1"}, "SCRAM-SHA-256"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addrs()...),
			kgo.DialTLSConfig(cs.ClientConfig(true)),
			kgo.SASL(scram.Auth{User: "app", Pass: "pw1"}.AsSha256Mechanism()),
			kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
			kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	if _, err := kadm.NewClient(client()).CreateTopic(ctx, 3, 3, nil, "tx"); err != nil {
		t.Fatal(err)
	}
	prod := client(kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("tx"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	otherNode := func() int32 {
		c, _ := b.Coordinator("transaction", "tx-1")
		return (c + 1) % 3
	}
	var want []string
	round := func(n int, commit bool, midway func()) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if i == n/2 && midway != nil {
				midway()
			}
			v := fmt.Sprintf("c%v-%d-%d", commit, len(want), i)
			if err := prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
			if commit {
				want = append(want, v)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction (commit %v): %v", commit, err)
		}
	}
	round(9, true, nil)
	if err := b.MoveCoordinator("transaction", "tx-1", otherNode()); err != nil {
		t.Fatal(err)
	}
	round(9, false, nil)
	round(9, true, func() {
		if err := b.MoveCoordinator("transaction", "tx-1", otherNode()); err != nil {
			t.Fatal(err)
		}
	})
	cons := client(kgo.ConsumeTopics("tx"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	got := map[string]int{}
	for len(got) < len(want) {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d of %d records: %v", len(got), len(want), err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
	}
	for _, v := range want {
		if got[v] != 1 {
			t.Fatalf("record %s read %d times", v, got[v])
		}
	}
	for v := range got {
		if strings.HasPrefix(v, "cfalse") {
			t.Fatalf("aborted record %s read", v)
		}
	}
}

// TestClusterShareFetchNotLeader: a share fetch for a partition sent to a
// node that does not lead it is NOT_LEADER_OR_FOLLOWER for that
// partition, as Kafka's share-partitions live with their leader.
func TestClusterShareFetchNotLeader(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx := context.Background()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "sf"); err != nil {
		t.Fatal(err)
	}
	md, err := adm.Metadata(ctx, "sf")
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := b.Placement("sf", 0)
	for _, n := range b.Nodes() {
		cl := minikafkatest.Client(t, b, kgo.SeedBrokers(n.Addr))
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID = kmsg.StringPtr("sg"), kmsg.StringPtr(fmt.Sprintf("member-%d-0000000", n.ID))
		req.MaxWaitMillis, req.MaxBytes, req.MaxRecords, req.BatchSize = 0, 1<<20, 10, 10
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = md.Topics["sf"].ID
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(n.ID)))
		if err != nil {
			t.Fatal(err)
		}
		var code int16 = -100
		if len(resp.Topics) == 1 && len(resp.Topics[0].Partitions) == 1 {
			code = resp.Topics[0].Partitions[0].ErrorCode
		}
		switch {
		case resp.ErrorCode != 0:
			t.Fatalf("node %d: top-level %v", n.ID, kerr.ErrorForCode(resp.ErrorCode))
		case n.ID == pl.Leader && code != 0:
			t.Fatalf("leader %d: %v", n.ID, kerr.ErrorForCode(code))
		case n.ID != pl.Leader && code != kerr.NotLeaderForPartition.Code:
			t.Fatalf("node %d (leader %d): %v, want NOT_LEADER_OR_FOLLOWER", n.ID, pl.Leader, kerr.ErrorForCode(code))
		}
	}
}

// TestClusterForwarding: a 3-node edge broker forwards an RF 3 topic to
// an upstream: records produced through each partition's leader, one
// leader moved and one node stopped meanwhile, all reach the upstream.
func TestClusterForwarding(t *testing.T) {
	up := minikafkatest.New(t)
	edge := minikafkatest.New(t, minikafka.WithNodes(3), minikafka.WithDefaultReplicationFactor(3),
		minikafka.WithUpstream(up.Addr()), minikafka.WithForward("fwd"), minikafka.WithTopic("fwd", 3))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pl, err := edge.Placement("fwd", 0)
	if err != nil || len(pl.Replicas) != 3 {
		t.Fatalf("fwd-0 placement %+v, %v: want 3 replicas", pl, err)
	}
	cl := minikafkatest.Client(t, edge, kgo.DefaultProduceTopic("fwd"))
	const n = 60
	for i := 0; i < n; i++ {
		switch i {
		case 20:
			if err := edge.MoveLeader("fwd", 0, pl.Replicas[1]); err != nil {
				t.Fatal(err)
			}
		case 40:
			p1, _ := edge.Placement("fwd", 1)
			if err := edge.StopNode(p1.Leader); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	upc := minikafkatest.Client(t, up, kgo.ConsumeTopics("fwd"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < n {
		fs := upc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records upstream", len(seen), n)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
}

// TestClusterACLsAndQuotas: with the authorizer on, a user allowed to
// write a topic and read it in a group does so through every node's
// listener (leaders and the group coordinator on different nodes), a
// user without ACLs is refused as on one node (authorization first, as
// Kafka: GROUP_AUTHORIZATION_FAILED, not NOT_COORDINATOR), and a produce
// quota set once throttles at every node.
func TestClusterACLsAndQuotas(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithNodes(3),
		minikafka.WithSASL(map[string]string{"admin": "a", "app": "p", "nobody": "n"}, "SCRAM-SHA-256"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}),
		minikafka.WithGroupInitialRebalanceDelay(0))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := func(user, pass string, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addrs()...),
			kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()),
			kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
			kgo.MetadataMinAge(50 * time.Millisecond)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	adm := kadm.NewClient(client("admin", "a"))
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "acl"); err != nil {
		t.Fatal(err)
	}
	acls := kadm.NewACLs().Allow("User:app").Topics("acl").Groups("acl-group").Operations(kadm.OpWrite, kadm.OpRead, kadm.OpDescribe)
	if _, err := adm.CreateACLs(ctx, acls); err != nil {
		t.Fatal(err)
	}
	app := client("app", "p", kgo.DefaultProduceTopic("acl"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := 0; i < 9; i++ {
		if err := app.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("allowed produce: %v", err)
		}
	}
	cons := client("app", "p", kgo.ConsumeTopics("acl"), kgo.ConsumerGroup("acl-group"))
	for n := 0; n < 9; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("allowed consume: %v", err)
		}
		n += fs.NumRecords()
	}
	// A group the user may not use: refused whichever node it asks.
	nobody := client("nobody", "n")
	c, _ := b.Coordinator("group", "acl-group")
	for _, n := range b.Nodes() {
		hb := kmsgHeartbeat("acl-group")
		hr, err := hb.RequestWith(ctx, nobody.Broker(int(n.ID)))
		if err != nil {
			t.Fatal(err)
		}
		if hr.ErrorCode != kerr.GroupAuthorizationFailed.Code {
			t.Fatalf("heartbeat of a denied user at node %d (coordinator %d): %v, want GROUP_AUTHORIZATION_FAILED", n.ID, c, kerr.ErrorForCode(hr.ErrorCode))
		}
	}
	// A quota for app is enforced at every node.
	var q kadm.AlterClientQuotaEntry
	q.Entity = []kadm.ClientQuotaEntityComponent{{Type: "user", Name: kmsg.StringPtr("app")}}
	q.Ops = []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}}
	if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{q}); err != nil {
		t.Fatal(err)
	}
	throttled := 0
	for _, n := range b.Nodes() {
		for p := int32(0); p < 3; p++ {
			pl, _ := b.Placement("acl", p)
			if pl.Leader != n.ID {
				continue
			}
			req := kmsgProduce("acl", p, 64)
			req.Topics[0].TopicID = mustTopicID(t, adm, "acl")
			for i := 0; i < 3; i++ {
				resp, err := req.RequestWith(ctx, app.Broker(int(n.ID)))
				if err != nil {
					t.Fatal(err)
				}
				if c := resp.Topics[0].Partitions[0].ErrorCode; c != 0 {
					t.Fatalf("node %d: %v", n.ID, kerr.ErrorForCode(c))
				}
				if resp.ThrottleMillis > 0 {
					throttled++
					break
				}
			}
		}
	}
	if throttled != 3 {
		t.Fatalf("throttled at %d of 3 leaders, want every one", throttled)
	}
}

func mustTopicID(t *testing.T, adm *kadm.Client, topic string) [16]byte {
	t.Helper()
	md, err := adm.Metadata(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	return md.Topics[topic].ID
}

// TestClusterFetchFromFollower (KIP-392): with racks and the rack-aware
// selector, the leader answers a consumer in another rack with the
// in-sync replica in that rack as its preferred read replica, the
// follower serves the fetch, and a kgo consumer naming its rack reads
// everything.
func TestClusterFetchFromFollower(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3), minikafka.WithRacks("a", "b", "c"), minikafka.WithRackAwareReplicaSelector())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := minikafkatest.Client(t, b, kgo.DefaultProduceTopic("ff"))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "ff"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pl, _ := b.Placement("ff", 0)
	follower := pl.Replicas[1]
	rack := map[int32]string{0: "a", 1: "b", 2: "c"}[follower]
	id := mustTopicID(t, adm, "ff")
	fetch := func(node int32, clientRack string) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes, req.Rack = -1, 1<<20, clientRack
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "ff", id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch at node %d: %+v", node, resp)
		}
		return resp.Topics[0].Partitions[0]
	}
	if p := fetch(pl.Leader, rack); p.ErrorCode != 0 || p.PreferredReadReplica != follower || len(p.RecordBatches) != 0 || p.HighWatermark != 10 {
		t.Fatalf("leader's answer to a consumer in rack %s: replica %d, %d bytes, hw %d, %v; want replica %d", rack, p.PreferredReadReplica, len(p.RecordBatches), p.HighWatermark, kerr.ErrorForCode(p.ErrorCode), follower)
	}
	if p := fetch(pl.Leader, rack+"-elsewhere"); p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("leader's answer to a consumer in no replica's rack: replica %d, %d bytes", p.PreferredReadReplica, len(p.RecordBatches))
	}
	if p := fetch(follower, rack); p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("the follower did not serve the fetch: %v, %d bytes", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}
	cons := minikafkatest.Client(t, b, kgo.ConsumeTopics("ff"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.Rack(rack))
	for n := 0; n < 10; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
}

// TestClusterMoveRefusals: moves that cannot be made are refused with
// the reason, and change nothing.
func TestClusterMoveRefusals(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	if _, err := kadm.NewClient(minikafkatest.Client(t, b)).CreateTopic(context.Background(), 1, 2, nil, "mr"); err != nil {
		t.Fatal(err)
	}
	before, _ := b.Placement("mr", 0)
	var outside int32 = -1
	for _, n := range b.Nodes() {
		if !slices.Contains(before.Replicas, n.ID) {
			outside = n.ID
		}
	}
	follower := before.Replicas[1]
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown node", b.MoveLeader("mr", 0, 9), "unknown node"},
		{"not a replica", b.MoveLeader("mr", 0, outside), "not an in-sync replica"},
		{"unknown partition", b.MoveLeader("mr", 5, follower), "no partition 5"},
		{"ISR outside replicas", b.SetISR("mr", 0, outside), "not a replica"},
		{"coordinator kind", b.MoveCoordinator("topic", "g", 0), "want group or transaction"},
		{"stop unknown", b.StopNode(9), "unknown node"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
	if err := b.StopNode(follower); err != nil {
		t.Fatal(err)
	}
	if err := b.MoveLeader("mr", 0, follower); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("move to a stopped node: %v", err)
	}
	if err := b.MoveCoordinator("group", "g", follower); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("coordinator to a stopped node: %v", err)
	}
	after, _ := b.Placement("mr", 0)
	if after.Leader != before.Leader || after.LeaderEpoch != before.LeaderEpoch {
		t.Errorf("refused moves changed the placement: %+v -> %+v", before, after)
	}
}
