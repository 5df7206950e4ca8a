package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

func produceN(t *testing.T, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := from; i < from+n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

// consumeAll reads topic from the start until n records or a timeout.
func consumeAll(t *testing.T, b *minikafka.Broker, topic string, n int) []string {
	t.Helper()
	cl := minikafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

func wantFired(t *testing.T, b *minikafka.Broker, id uint64, n int64) {
	t.Helper()
	for _, fi := range b.Faults() {
		if fi.ID == id {
			if fi.Fired != n {
				t.Fatalf("fault %d fired %d times, want %d", id, fi.Fired, n)
			}
			return
		}
	}
	t.Fatalf("fault %d not listed", id)
}

// kgo retries a produce answered NOT_LEADER_OR_FOLLOWER; the refused
// batches are not written, so the topic holds each record once.
func TestFaultNotLeaderProduceRetries(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	id, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "t", ErrorCode: 6, Times: 3})
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b, kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	produceN(t, cl, "t", 0, 5)
	wantFired(t, b, id, 3)
	if got := consumeAll(t, b, "t", 5); fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("records %v, want [0 1 2 3 4]", got)
	}
}

// A paused partition answers produce and fetch NOT_LEADER_OR_FOLLOWER
// while its neighbour in the same produce request is written.
func TestFaultPausePartition(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 2))
	id, err := b.PausePartition("t", 1)
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordRetries(0), kgo.RetryTimeout(500*time.Millisecond))
	ctx := context.Background()
	res := make(chan error, 2)
	for p := int32(0); p < 2; p++ {
		cl.Produce(ctx, &kgo.Record{Topic: "t", Partition: p, Value: []byte("v")}, func(_ *kgo.Record, err error) { res <- err })
	}
	var errs []error
	for range 2 {
		if err := <-res; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], kerrNotLeader) {
		t.Fatalf("want one NOT_LEADER_OR_FOLLOWER (partition 1), got %v", errs)
	}
	if err := b.RemoveFault(id); err != nil {
		t.Fatal(err)
	}
	produceN(t, cl, "t", 0, 1) // partition 0 (manual partitioner, Partition 0)
	cl2 := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after resume: %v", err)
	}
	if got := consumeAll(t, b, "t", 3); len(got) != 3 {
		t.Fatalf("records %v, want 3 (partition 0's twice, partition 1's after resume)", got)
	}
}

// A delayed answer arrives (no timeout) and the request log shows it
// took at least the delay.
func TestFaultDelay(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	b.EnableRequestLog(100)
	const delay = 300 * time.Millisecond
	id, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, Delay: delay, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b)
	produceN(t, cl, "t", 0, 2)
	wantFired(t, b, id, 1)
	var produces []minikafka.RequestLogEntry
	for _, e := range b.RequestLog() {
		if e.Key == 0 {
			produces = append(produces, e)
		}
	}
	if len(produces) != 2 || produces[0].Latency < delay || produces[0].ErrorCode != 0 {
		t.Fatalf("produce log %+v: want 2, the first delayed by %v without error", produces, delay)
	}
}

// A held answer waits for Release.
func TestFaultHoldRelease(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	id, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, Hold: true, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b)
	done := make(chan error, 1)
	cl.Produce(context.Background(), &kgo.Record{Topic: "t", Value: []byte("x")}, func(_ *kgo.Record, err error) { done <- err })
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi := b.Faults()[0]
		if fi.Held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the produce was never held")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("held produce answered before release: %v", err)
	default:
	}
	if err := b.ReleaseFault(id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("released produce: %v", err)
	}
}

// Connections dropped after the produce was written, and before: the
// idempotent producer retries and the log has each record once, in order.
func TestFaultDropIdempotentNoDuplicates(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	after, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, DropAfter: true, Times: 3})
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b, kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 200
	res := make(chan error, n)
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: "t", Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) { res <- err })
	}
	for range n {
		if err := <-res; err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	wantFired(t, b, after, 3)
	before, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, DropBefore: true, Times: 2})
	if err != nil {
		t.Fatal(err)
	}
	produceN(t, cl, "t", n, 1)
	wantFired(t, b, before, 2)
	got := consumeAll(t, b, "t", n+1)
	if len(got) != n+1 {
		t.Fatalf("%d records, want %d", len(got), n+1)
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("record %d is %q: duplicates or reordering", i, v)
		}
	}
}

// Broker down closes connections and resets new ones on the same port; a
// consumer group member resumes at its committed offsets once it is up.
func TestBrokerDownUpGroupResumes(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	prod := minikafkatest.Client(t, b)
	produceN(t, prod, "t", 0, 10)
	cons := minikafkatest.Client(t, b, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []string
	for len(got) < 10 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	b.Down()
	if !b.IsDown() {
		t.Fatal("IsDown false after Down")
	}
	if c, err := net.Dial("tcp", b.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("connecting to a down broker: %v, want connection refused", err)
	}
	time.Sleep(200 * time.Millisecond) // the member sees the broker gone
	if err := b.Up(); err != nil {
		t.Fatal(err)
	}
	produceN(t, prod, "t", 10, 10)
	for len(got) < 20 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("after down/up records %v: want 0..19 once each", got)
		}
	}
	if len(got) != 20 {
		t.Fatalf("after down/up %d records, want 20", len(got))
	}
}

// A callback sees the decoded request and answers it, or passes it on
// and changes the answer.
func TestFaultCallback(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	var seen []string
	_, err := b.AddFault(minikafka.Fault{Keys: []int16{19}, Callback: func(req kmsg.Request, next func() (kmsg.Response, error)) (kmsg.Response, error) {
		r := req.(*kmsg.CreateTopicsRequest)
		seen = append(seen, r.Topics[0].Topic)
		if r.Topics[0].Topic == "refused" {
			resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = "refused", 44, kmsg.StringPtr("by the test")
			resp.Topics = append(resp.Topics, rt)
			return resp, nil
		}
		resp, err := next()
		if err == nil {
			resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorMessage = kmsg.StringPtr("passed on")
		}
		return resp, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	cl := minikafkatest.Client(t, b)
	create := func(name string) kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0]
	}
	if r := create("refused"); r.ErrorCode != 44 || r.ErrorMessage == nil || *r.ErrorMessage != "by the test" {
		t.Fatalf("answered create: %+v", r)
	}
	if r := create("made"); r.ErrorCode != 0 || r.ErrorMessage == nil || *r.ErrorMessage != "passed on" {
		t.Fatalf("passed-on create: %+v", r)
	}
	exists := func(name string) bool {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode == 0
	}
	if !exists("made") || exists("refused") {
		t.Fatal("the callback's answer did not decide what was created")
	}
	if fmt.Sprint(seen) != "[refused made]" {
		t.Fatalf("callback saw %v", seen)
	}
}

// A group whose coordinator is unavailable for a while: the consumer
// retries FindCoordinator and joins once the fault is used up.
func TestFaultCoordinatorUnavailable(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	id, err := b.AddFault(minikafka.Fault{Group: "g", ErrorCode: 15, Times: 3})
	if err != nil {
		t.Fatal(err)
	}
	prod := minikafkatest.Client(t, b)
	produceN(t, prod, "t", 0, 3)
	cons := minikafkatest.Client(t, b, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	for n < 3 && ctx.Err() == nil {
		n += cons.PollFetches(ctx).NumRecords()
	}
	if n != 3 {
		t.Fatalf("consumed %d, want 3", n)
	}
	wantFired(t, b, id, 3)
}

// Throttle sets throttle_time_ms; an error fault on a request without
// partitions answers at the top level.
func TestFaultThrottleAndTopLevelError(t *testing.T) {
	b := minikafkatest.New(t)
	cl := minikafkatest.Client(t, b)
	id, err := b.Throttle(25*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ThrottleMillis != 25 {
		t.Fatalf("throttle %d, want 25", resp.ThrottleMillis)
	}
	if err := b.RemoveFault(id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AddFault(minikafka.Fault{Keys: []int16{16}, ErrorCode: 31, Times: 1}); err != nil {
		t.Fatal(err)
	}
	lg, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if lg.ErrorCode != 31 {
		t.Fatalf("ListGroups error %d, want 31 (CLUSTER_AUTHORIZATION_FAILED, which kgo does not retry)", lg.ErrorCode)
	}
}

// Probability faults draw from their seed: the same seed fires on the
// same requests.
func TestFaultProbabilitySeeded(t *testing.T) {
	pattern := func() []bool {
		b := minikafkatest.New(t)
		cl := minikafkatest.Client(t, b)
		if _, err := b.AddFault(minikafka.Fault{Keys: []int16{16}, ErrorCode: 31, Probability: 0.5, Seed: 42}); err != nil {
			t.Fatal(err)
		}
		var out []bool
		for range 32 {
			lg, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), cl)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, lg.ErrorCode != 0)
		}
		return out
	}
	a, c := pattern(), pattern()
	if fmt.Sprint(a) != fmt.Sprint(c) {
		t.Fatalf("same seed, different firing: %v vs %v", a, c)
	}
	fired := 0
	for _, f := range a {
		if f {
			fired++
		}
	}
	if fired == 0 || fired == len(a) {
		t.Fatalf("probability 0.5 fired %d of %d", fired, len(a))
	}
}

func TestFaultBadFaults(t *testing.T) {
	b := minikafkatest.New(t)
	for _, f := range []minikafka.Fault{
		{},                        // no action
		{ErrorCode: 6, Times: -1}, // negative times
		{ErrorCode: 6, Probability: 2},
		{ErrorCode: 6, HasPartition: true},
		{ErrorCode: 6, HasVersions: true, MinVersion: 3, MaxVersion: 1},
		{ErrorCode: -99},
	} {
		if _, err := b.AddFault(f); err == nil {
			t.Errorf("fault %+v accepted", f)
		}
	}
	if err := b.RemoveFault(12345); !errors.Is(err, minikafka.ErrNoFault) {
		t.Fatalf("remove unknown: %v", err)
	}
}

var kerrNotLeader = kerr.NotLeaderForPartition

// A consumer fetching a paused partition retries through
// NOT_LEADER_OR_FOLLOWER and reads everything once it resumes.
func TestFaultPausedFetchResumes(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	produceN(t, minikafkatest.Client(t, b), "t", 0, 5)
	id, err := b.PausePartition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	cons := minikafkatest.Client(t, b, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan int, 1)
	go func() {
		n := 0
		for n < 5 && ctx.Err() == nil {
			n += cons.PollFetches(ctx).NumRecords()
		}
		got <- n
	}()
	for {
		fi := b.Faults()
		if len(fi) == 1 && fi[0].Fired >= 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the consumer never hit the paused partition")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := b.RemoveFault(id); err != nil {
		t.Fatal(err)
	}
	if n := <-got; n != 5 {
		t.Fatalf("consumed %d after resume, want 5", n)
	}
}

// A swallowed answer never comes (the client's own deadline ends the
// wait); version-range and client-ID matching pick their requests only.
func TestFaultSwallowAndMatching(t *testing.T) {
	b := minikafkatest.New(t)
	cl := minikafkatest.Client(t, b, kgo.ClientID("victim"))
	other := minikafkatest.Client(t, b, kgo.ClientID("bystander"))
	if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err) // versions negotiated before the fault
	}
	id, err := b.AddFault(minikafka.Fault{Keys: []int16{16}, ClientID: "victim", HasVersions: true, MinVersion: 0, MaxVersion: 5, Swallow: true, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), other); err != nil {
		t.Fatalf("bystander: %v", err)
	}
	wantFired(t, b, id, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl)
	cancel()
	if err == nil {
		t.Fatal("a swallowed request was answered")
	}
	wantFired(t, b, id, 1)
	if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), cl); err != nil {
		t.Fatalf("after the swallow: %v", err)
	}
	id2, err := b.AddFault(minikafka.Fault{Keys: []int16{16}, HasVersions: true, MinVersion: 99, MaxVersion: 99, ErrorCode: 31})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kmsg.NewPtrListGroupsRequest().RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	wantFired(t, b, id2, 0)
}

// A paused partition fails alone in a fetch, list offsets and
// offset-for-leader-epoch request that names its neighbour too: the
// neighbour's records and offsets come back in the same answer.
func TestFaultPausePartitionFetchPerPartition(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 2))
	cl := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	for p := int32(0); p < 2; p++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	id, err := b.PausePartition("t", 1)
	if err != nil {
		t.Fatal(err)
	}
	td, err := kadm.NewClient(cl).ListTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxBytes, fetch.SessionEpoch = 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "t", td["t"].ID // kgo sends the newest version, by ID
	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	for p := int32(0); p < 2; p++ {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = p, -1
		lt.Partitions = append(lt.Partitions, lp)
	}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	fr, err := fetch.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int32]int16{}
	for _, p := range fr.Topics[0].Partitions {
		codes[p.Partition] = p.ErrorCode
		if p.Partition == 0 && len(p.RecordBatches) == 0 {
			t.Fatalf("partition 0 came back without its record: %+v (fetch v%d)", p, fr.Version)
		}
	}
	if codes[0] != 0 || codes[1] != kerrNotLeader.Code {
		t.Fatalf("fetch codes %v, want partition 1 alone NOT_LEADER_OR_FOLLOWER", codes)
	}
	lr, err := lo.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lr.Topics[0].Partitions {
		if want := map[int32]int16{0: 0, 1: kerrNotLeader.Code}[p.Partition]; p.ErrorCode != want || p.Partition == 0 && p.Offset != 1 {
			t.Fatalf("list offsets partition %d: code %d offset %d", p.Partition, p.ErrorCode, p.Offset)
		}
	}
	wantFired(t, b, id, 2)
}
