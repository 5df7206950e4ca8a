package minikafka_test

// Share groups (KIP-932) through kgo's share consumer over TCP.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// setShareConfigs sets GROUP configs with IncrementalAlterConfigs.
func setShareConfigs(t *testing.T, cl *kgo.Client, group string, kvs ...string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		t.Fatalf("IncrementalAlterConfigs: %v", err)
	}
}

func producePerPartition(t *testing.T, cl *kgo.Client, topic string, parts, perPart int) {
	t.Helper()
	var rs []*kgo.Record
	for p := range parts {
		for i := range perPart {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

type po struct {
	p int32
	o int64
}

// killDialer lets a test cut a client off the network for good: its
// connections close and new dials fail, as for a killed process.
type killDialer struct {
	mu     sync.Mutex
	dead   bool
	conns  []net.Conn
	dialer net.Dialer
}

func (d *killDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, errors.New("killed")
	}
	c, err := d.dialer.DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *killDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead = true
	for _, c := range d.conns {
		c.Close()
	}
}

func newPartitionedClient(t *testing.T, b *minikafka.Broker, opts ...kgo.Opt) *kgo.Client {
	return minikafkatest.Client(t, b, append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
}

func createTopic(t *testing.T, cl *kgo.Client, topic string, parts int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, parts, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatal(err)
	}
}

// Three share consumers on six partitions: every record is received and
// accepted exactly once in total, and the group's SPSO reaches the end.
func TestShareGroupKgoThreeConsumers(t *testing.T) {
	b := minikafkatest.New(t)
	admin := newPartitionedClient(t, b)
	const topic, group, parts, per = "share3", "g3", 6, 200
	createTopic(t, admin, topic, parts)
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest")
	producePerPartition(t, admin, topic, parts, per)

	var mu sync.Mutex
	seen := map[po]int{}
	var total atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 3 {
		cl := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for total.Load() < parts*per && ctx.Err() == nil {
				pctx, pcancel := context.WithTimeout(ctx, time.Second)
				fs := cl.PollFetches(pctx)
				pcancel()
				for _, r := range fs.Records() {
					mu.Lock()
					seen[po{r.Partition, r.Offset}]++
					mu.Unlock()
					r.Ack(kgo.AckAccept)
					total.Add(1)
				}
			}
			if err := cl.FlushAcks(context.Background()); err != nil {
				t.Errorf("FlushAcks: %v", err)
			}
		}()
	}
	wg.Wait()
	for p := range int32(parts) {
		for o := range int64(per) {
			if n := seen[po{p, o}]; n != 1 {
				t.Errorf("partition %d offset %d received %d times", p, o, n)
			}
		}
	}
	if len(seen) != parts*per {
		t.Errorf("received %d distinct records, want %d", len(seen), parts*per)
	}
	// Every record accepted: SPSO is the end of each partition.
	waitSPSO(t, admin, group, topic, parts, per)
}

func waitSPSO(t *testing.T, cl *kgo.Client, group, topic string, parts int, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		rg.GroupID = group
		rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		rt.Topic = topic
		for p := range parts {
			rt.Partitions = append(rt.Partitions, int32(p))
		}
		rg.Topics = append(rg.Topics, rt)
		req.Groups = append(req.Groups, rg)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			// A connection a crash cut answers EOF once.
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ok := true
		var got []int64
		for _, p := range resp.Groups[0].Topics[0].Partitions {
			got = append(got, p.StartOffset)
			ok = ok && p.StartOffset == want
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SPSOs %v, want all %d", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pollUntil polls cl until n records arrived or the time is up.
func pollUntil(t *testing.T, cl *kgo.Client, n int, d time.Duration) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		fs := cl.PollRecords(ctx, n-len(out))
		out = append(out, fs.Records()...)
	}
	return out
}

// A consumer killed mid-batch (no ack, no leave): after the acquisition
// lock expires its records go to another member with delivery count 2.
func TestShareGroupKgoKilledConsumerRedelivery(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithGroupShareMinRecordLockDuration(time.Second))
	admin := newPartitionedClient(t, b)
	const topic, group = "sharekill", "gk"
	createTopic(t, admin, topic, 1)
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "1000")
	producePerPartition(t, admin, topic, 1, 20)

	kd := &killDialer{}
	victim := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group), kgo.Dialer(kd.dial))
	got := pollUntil(t, victim, 20, 20*time.Second)
	if len(got) != 20 {
		t.Fatalf("victim received %d records, want 20", len(got))
	}
	for _, r := range got {
		if r.DeliveryCount() != 1 {
			t.Fatalf("first delivery count %d", r.DeliveryCount())
		}
	}
	kd.kill()

	other := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	re := pollUntil(t, other, 20, 30*time.Second)
	if len(re) != 20 {
		t.Fatalf("redelivered %d records, want 20", len(re))
	}
	offs := map[int64]bool{}
	for _, r := range re {
		if r.DeliveryCount() != 2 {
			t.Errorf("offset %d redelivered with delivery count %d, want 2", r.Offset, r.DeliveryCount())
		}
		offs[r.Offset] = true
		r.Ack(kgo.AckAccept)
	}
	if len(offs) != 20 {
		t.Errorf("redelivered %d distinct offsets, want 20", len(offs))
	}
	if err := other.FlushAcks(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSPSO(t, admin, group, topic, 1, 20)
}

// A consumer whose connections die (a killed process) has what it
// acquired released at once, as Kafka ends a share session with its
// connection: another consumer gets the records long before the 60 s
// acquisition lock would have expired.
func TestShareGroupKgoDisconnectReleases(t *testing.T) {
	b := minikafkatest.New(t)
	admin := newPartitionedClient(t, b)
	const topic, group = "sharedisc", "gd"
	createTopic(t, admin, topic, 1)
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "60000")
	producePerPartition(t, admin, topic, 1, 10)

	kd := &killDialer{}
	victim := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group), kgo.Dialer(kd.dial))
	if got := pollUntil(t, victim, 10, 20*time.Second); len(got) != 10 {
		t.Fatalf("victim received %d records, want 10", len(got))
	}
	kd.kill()

	other := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	re := pollUntil(t, other, 10, 20*time.Second) // well inside the lock
	if len(re) != 10 {
		t.Fatalf("redelivered %d records within 20 s of the disconnect, want 10 (released only when the 60 s lock expires?)", len(re))
	}
	for _, r := range re {
		if r.DeliveryCount() != 2 {
			t.Errorf("offset %d redelivered with delivery count %d, want 2", r.Offset, r.DeliveryCount())
		}
		r.Ack(kgo.AckAccept)
	}
	if err := other.FlushAcks(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSPSO(t, admin, group, topic, 1, 10)
}

// Release redelivers (delivery count raised); reject never does; a record
// released share.delivery.count.limit times is archived.
func TestShareGroupKgoReleaseReject(t *testing.T) {
	b := minikafkatest.New(t)
	admin := newPartitionedClient(t, b)
	const topic, group = "sharerel", "gr"
	createTopic(t, admin, topic, 1)
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest", "share.delivery.count.limit", "3")
	producePerPartition(t, admin, topic, 1, 10)

	cl := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	// Round 1: reject offsets 0-4, release 5-9.
	rs := pollUntil(t, cl, 10, 20*time.Second)
	if len(rs) != 10 {
		t.Fatalf("got %d records", len(rs))
	}
	for _, r := range rs {
		if r.Offset < 5 {
			r.Ack(kgo.AckReject)
		} else {
			r.Ack(kgo.AckRelease)
		}
	}
	// Rounds 2 and 3: only 5-9 come back, with counts 2 and 3; release again.
	for round := int32(2); round <= 3; round++ {
		rs = pollUntil(t, cl, 5, 20*time.Second)
		if len(rs) != 5 {
			t.Fatalf("round %d: got %d records", round, len(rs))
		}
		for _, r := range rs {
			if r.Offset < 5 {
				t.Errorf("round %d: rejected offset %d redelivered", round, r.Offset)
			}
			if r.DeliveryCount() != round {
				t.Errorf("round %d: offset %d delivery count %d", round, r.Offset, r.DeliveryCount())
			}
			r.Ack(kgo.AckRelease)
		}
	}
	if err := cl.FlushAcks(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Delivered 3 times = the limit: archived, SPSO at the end, nothing more.
	waitSPSO(t, admin, group, topic, 1, 10)
	if rs = pollUntil(t, cl, 1, time.Second); len(rs) != 0 {
		t.Errorf("archived records delivered again: %d", len(rs))
	}
}

// A broker crash mid-stream: records whose accept the broker confirmed
// are not redelivered; every other record is delivered after the crash,
// the ones that were in flight with their delivery count kept.
func TestShareGroupKgoBrokerCrash(t *testing.T) {
	c := minikafkatest.NewCrashable(t)
	admin := newPartitionedClient(t, c.Broker)
	const topic, group, parts, per = "sharecrash", "gc", 3, 40
	createTopic(t, admin, topic, parts)
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest")
	producePerPartition(t, admin, topic, parts, per)

	kd := &killDialer{}
	cl1 := minikafkatest.Client(t, c.Broker, kgo.ConsumeTopics(topic), kgo.ShareGroup(group), kgo.Dialer(kd.dial))
	first := pollUntil(t, cl1, parts*per/2, 20*time.Second)
	if len(first) == 0 {
		t.Fatal("nothing consumed before the crash")
	}
	accepted := map[po]bool{}
	inFlight := map[po]bool{}
	for i, r := range first {
		if i%3 == 0 {
			inFlight[po{r.Partition, r.Offset}] = true // acquired, never acked
			continue
		}
		r.Ack(kgo.AckAccept)
		accepted[po{r.Partition, r.Offset}] = true
	}
	if len(accepted) == 0 || len(inFlight) == 0 {
		t.Fatalf("before the crash: %d accepted, %d in flight; the test needs both", len(accepted), len(inFlight))
	}
	if err := cl1.FlushAcks(context.Background()); err != nil {
		t.Fatalf("FlushAcks: %v", err)
	}
	kd.kill()
	c.Crash()

	cl2 := minikafkatest.Client(t, c.Broker, kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
	want := parts*per - len(accepted)
	after := map[po]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(after) < want && ctx.Err() == nil {
		fs := cl2.PollFetches(ctx)
		for _, r := range fs.Records() {
			k := po{r.Partition, r.Offset}
			if accepted[k] {
				t.Errorf("accepted record %v redelivered after the crash", k)
			}
			if inFlight[k] && r.DeliveryCount() < 2 {
				t.Errorf("in-flight record %v redelivered with delivery count %d, want >= 2", k, r.DeliveryCount())
			}
			after[k] = true
			r.Ack(kgo.AckAccept)
		}
	}
	if len(after) != want {
		t.Fatalf("after the crash received %d records, want %d", len(after), want)
	}
	if err := cl2.FlushAcks(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSPSO(t, admin, group, topic, parts, per)
}

// On three nodes a share consumer fetches from each partition's leader,
// so it holds a share session on every node, as with Kafka's brokers.
// Those sessions are the nodes' own: when they were one per member, each
// node's epoch 0 replaced another node's session, whose next fetch then
// failed with INVALID_SHARE_SESSION_EPOCH while the records it had
// acquired stayed locked until the (here 60 s) lock expired. Every
// record must arrive once, well inside the lock, also after one of the
// two consumers closes halfway (its close ends every node's session).
func TestShareGroupKgoThreeNodes(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	admin := newPartitionedClient(t, b)
	const topic, group, parts, per = "share3n", "g3n", 6, 200
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, parts, 3
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(context.Background(), admin); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	leaders := map[int32]bool{}
	for p := range int32(parts) {
		pl, err := b.Placement(topic, p)
		if err != nil {
			t.Fatal(err)
		}
		leaders[pl.Leader] = true
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders on %d nodes, want 3", len(leaders))
	}
	setShareConfigs(t, admin, group, "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "60000")
	producePerPartition(t, admin, topic, parts, per)

	var mu sync.Mutex
	seen := map[po]int{}
	var total atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 2 {
		cl := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group), kgo.FetchMaxWait(500*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The first consumer leaves halfway; the second reads the rest.
			for ctx.Err() == nil && total.Load() < parts*per && (i == 1 || total.Load() < parts*per/2) {
				pctx, pcancel := context.WithTimeout(ctx, time.Second)
				fs := cl.PollRecords(pctx, 50)
				pcancel()
				for _, r := range fs.Records() {
					mu.Lock()
					seen[po{r.Partition, r.Offset}]++
					mu.Unlock()
					r.Ack(kgo.AckAccept)
					total.Add(1)
				}
			}
			if err := cl.FlushAcks(context.Background()); err != nil {
				t.Errorf("FlushAcks: %v", err)
			}
			if i == 0 {
				cl.Close()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Errorf("received %d of %d records within 30 s", total.Load(), parts*per)
	}
	for p := range int32(parts) {
		for o := range int64(per) {
			if n := seen[po{p, o}]; n != 1 {
				t.Errorf("partition %d offset %d received %d times", p, o, n)
			}
		}
	}
	waitSPSO(t, admin, group, topic, parts, per)
}
