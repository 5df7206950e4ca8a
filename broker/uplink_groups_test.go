package broker_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/minikafkatest"
)

// A group consumes half of a forwarded topic locally, then moves to the
// upstream: its offsets, translated (the upstream partition already held
// records of its own, so offsets differ), are committed to the same group
// upstream, and a consumer there reads exactly the other half. A restart
// of the local broker keeps the translation.
func TestForwardGroupOffsetsMoveUpstream(t *testing.T) {
	up := newUpstream(t)
	ctx := context.Background()
	upCl, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.DefaultProduceTopic("site.orders"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(upCl).CreateTopic(ctx, 1, 1, nil, "site.orders"); err != nil {
		t.Fatal(err)
	}
	for i := range 7 { // upstream offsets = local offsets + 7
		if err := upCl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("other-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The upstream goes away while the edge takes orders: they wait in the
	// spool, where local consumers read them (shipped records leave it).
	upCl.Close()
	up.Stop()
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("orders=site."),
		minikafka.WithTopic("orders", 1), minikafka.WithForwardGroupOffsets(100*time.Millisecond))
	prod := minikafkatest.Client(t, local.b, kgo.DefaultProduceTopic("orders"))
	for i := range 100 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	// Half of it locally, committed.
	cons := minikafkatest.Client(t, local.b, kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	var got []string
	for len(got) < 50 {
		fs := cons.PollRecords(ctx, 50-len(got))
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.Close() // the consumer leaves: the local group is empty
	up.Start()

	synced := func(b *minikafka.Broker, want int64) func() bool {
		return func() bool {
			for _, s := range b.ForwardGroupOffsets() {
				if s.Group == "billing" && s.UpstreamTopic == "site.orders" && s.LocalOffset == 50 && s.UpstreamOffset == want && s.Committed == want && s.Lag == 0 {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, 20*time.Second, "billing synced upstream at 57", synced(local.b, 57))

	// A restart here (everything shipped, the spool emptied) still
	// translates: the syncs survive.
	local.Crash()
	waitFor(t, 20*time.Second, "billing synced after the restart", synced(local.b, 57))

	// The consumer moves upstream and resumes: records 50..99, once each.
	mover, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.ConsumeTopics("site.orders"), kgo.ConsumerGroup("billing"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer mover.Close()
	rest := pollValues(mover, 50)
	if len(rest) != 50 {
		t.Fatalf("upstream consumer read %d records, want 50: %v", len(rest), rest)
	}
	for i, v := range rest {
		if v != strconv.Itoa(50+i) {
			t.Fatalf("upstream record %d: %q, want %q", i, v, strconv.Itoa(50+i))
		}
	}

	// While the upstream group has members, nothing is committed there.
	time.Sleep(300 * time.Millisecond)
	for _, s := range local.b.ForwardGroupOffsets() {
		if s.Group == "billing" && s.Err == "" {
			t.Fatalf("synced into a live upstream group: %+v", s)
		}
	}
}

// mm2Checkpoint is a checkpoint record as MirrorMaker 2's Checkpoint class
// reads it (key: group, topic, partition; value: version, upstream
// offset, downstream offset, metadata), decoded here independently of the
// broker's encoder.
type mm2Checkpoint struct {
	group, topic         string
	partition            int32
	version              int16
	upstream, downstream int64
	metadata             string
}

func decodeMM2Checkpoint(t *testing.T, key, value []byte) mm2Checkpoint {
	t.Helper()
	str := func(b []byte) (string, []byte) {
		if len(b) < 2 {
			t.Fatalf("short STRING in %x", b)
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			t.Fatalf("STRING of %d bytes in %x", n, b)
		}
		return string(b[2 : 2+n]), b[2+n:]
	}
	var c mm2Checkpoint
	c.group, key = str(key)
	c.topic, key = str(key)
	if len(key) != 4 {
		t.Fatalf("key ends with %d bytes, want the int32 partition", len(key))
	}
	c.partition = int32(binary.BigEndian.Uint32(key))
	if len(value) < 18 {
		t.Fatalf("value %x too short", value)
	}
	c.version = int16(binary.BigEndian.Uint16(value))
	c.upstream = int64(binary.BigEndian.Uint64(value[2:]))
	c.downstream = int64(binary.BigEndian.Uint64(value[10:]))
	var rest []byte
	c.metadata, rest = str(value[18:])
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the metadata", len(rest))
	}
	return c
}

// With -forward-checkpoints the forwarder writes MirrorMaker 2 checkpoints
// upstream: a consumer moving with MM2's tools reads its group's newest
// checkpoint from <alias>.checkpoints.internal (compacted, one partition),
// starts there and reads exactly the records it had not consumed; the
// upstream group itself is left alone; a newer local commit writes a newer
// checkpoint, and an unchanged one writes none.
func TestForwardCheckpointsMoveUpstream(t *testing.T) {
	up := newUpstream(t)
	ctx := context.Background()
	upCl, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.DefaultProduceTopic("site.orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer upCl.Close()
	upAdm := kadm.NewClient(upCl)
	if _, err := upAdm.CreateTopic(ctx, 1, 1, nil, "site.orders"); err != nil {
		t.Fatal(err)
	}
	for i := range 7 { // upstream offsets = local offsets + 7
		if err := upCl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("other-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("orders=site."),
		minikafka.WithTopic("orders", 1), minikafka.WithForwardCheckpoints("edge", 100*time.Millisecond))
	prod := minikafkatest.Client(t, local.b, kgo.DefaultProduceTopic("orders"))
	for i := range 100 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	cons := minikafkatest.Client(t, local.b)
	commit := func(off int64, meta string) {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: off, LeaderEpoch: -1, Metadata: meta})
		res, err := kadm.NewClient(cons).CommitOffsets(ctx, "billing", os)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("commit %d: %v", off, err)
		}
	}
	// The upstream is away when the first checkpoint is due: the rows
	// say why none is written, and the next pass after it is back writes
	// it.
	waitFor(t, 20*time.Second, "everything shipped", func() bool { st := local.b.ForwardStats(); return len(st) == 1 && st[0].Lag == 0 })
	up.Stop()
	commit(50, "app-state-1")
	waitFor(t, 30*time.Second, "the sync pass reporting the missing checkpoints topic", func() bool {
		for _, s := range local.b.ForwardGroupOffsets() {
			if s.Group == "billing" && s.Checkpoint == -1 && strings.Contains(s.Err, "creating edge.checkpoints.internal upstream") {
				return true
			}
		}
		return false
	})
	up.Start()

	// Every record of the checkpoints topic, in order.
	checkpoints := func() []mm2Checkpoint {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.ConsumeTopics("edge.checkpoints.internal"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		end, err := kadm.NewClient(cl).ListEndOffsets(ctx, "edge.checkpoints.internal")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := end.Lookup("edge.checkpoints.internal", 0)
		if !ok || o.Err != nil {
			return nil // not created yet
		}
		var out []mm2Checkpoint
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for int64(len(out)) < o.Offset && pctx.Err() == nil {
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { out = append(out, decodeMM2Checkpoint(t, r.Key, r.Value)) })
		}
		return out
	}
	want := mm2Checkpoint{group: "billing", topic: "site.orders", partition: 0, upstream: 50, downstream: 57, metadata: "app-state-1"}
	var got []mm2Checkpoint
	waitFor(t, 20*time.Second, "a checkpoint of billing at 57", func() bool {
		got = checkpoints()
		return len(got) > 0 && got[len(got)-1] == want
	})
	if len(got) != 1 {
		t.Fatalf("checkpoints %+v, want one", got)
	}
	for _, s := range local.b.ForwardGroupOffsets() {
		if s.Group == "billing" && (s.Checkpoint != 57 || s.Err != "") {
			t.Fatalf("forward status row %+v, want checkpoint 57 and no error", s)
		}
	}
	// As MM2 creates it: one partition, compacted.
	td, err := upAdm.ListTopics(ctx, "edge.checkpoints.internal")
	if err != nil || len(td["edge.checkpoints.internal"].Partitions) != 1 {
		t.Fatalf("checkpoints topic: %v %+v", err, td)
	}
	rc, err := upAdm.DescribeTopicConfigs(ctx, "edge.checkpoints.internal")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On("edge.checkpoints.internal", nil); err != nil || configValue(v, "cleanup.policy") != "compact" {
		t.Fatalf("cleanup.policy %q (%v), want compact", configValue(v, "cleanup.policy"), err)
	}
	// The upstream group was not touched.
	fo, err := upAdm.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("site.orders", 0); ok && o.At >= 0 {
		t.Fatalf("the upstream group has offset %d committed: checkpoints must not commit", o.At)
	}

	// The consumer moves upstream, starting at the checkpoint: 50..99.
	mover, err := kgo.NewClient(kgo.SeedBrokers(up.addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"site.orders": {0: kgo.NewOffset().At(want.downstream)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer mover.Close()
	if rest := pollValues(mover, 50); len(rest) != 50 || rest[0] != "50" || rest[49] != "99" {
		t.Fatalf("upstream consumer from the checkpoint read %d records (%v), want 50..99", len(rest), rest)
	}

	// Passes with nothing new write nothing; a newer commit writes one.
	time.Sleep(400 * time.Millisecond)
	if n := len(checkpoints()); n != 1 {
		t.Fatalf("%d checkpoints after unchanged passes, want still 1", n)
	}
	commit(80, "app-state-2")
	want2 := mm2Checkpoint{group: "billing", topic: "site.orders", partition: 0, upstream: 80, downstream: 87, metadata: "app-state-2"}
	waitFor(t, 20*time.Second, "a checkpoint of billing at 87", func() bool {
		got = checkpoints()
		return len(got) == 2 && got[1] == want2
	})
}

func configValue(rc kadm.ResourceConfig, name string) string {
	for _, c := range rc.Configs {
		if c.Key == name {
			return c.MaybeValue()
		}
	}
	return ""
}

// pollValues reads record values from cl until it has n (or 20 s pass),
// then polls half a second more, so that records beyond n show too.
func pollValues(cl *kgo.Client, n int) []string {
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(got) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	cl.PollFetches(short).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	return got
}

// An exactly-once app (kgo's GroupTransactSession: consume a forwarded
// topic, produce, commit its offsets inside each transaction) moves
// upstream: the offsets of its committed transactions are synced to its
// group upstream and checkpointed, those of an aborted one never are, and
// a consumer of the group upstream resumes after the last committed
// transaction.
func TestForwardTransactionalOffsetsMoveUpstream(t *testing.T) {
	up := newUpstream(t)
	ctx := context.Background()
	// The upstream is away while the app works: shipped records leave
	// the spool, and the app reads what the spool holds.
	up.Stop()
	local := newCrashLocal(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("in"),
		minikafka.WithTopic("in", 1), minikafka.WithTopic("out", 1),
		minikafka.WithForwardGroupOffsets(100*time.Millisecond), minikafka.WithForwardCheckpoints("edge", 100*time.Millisecond))
	prod := minikafkatest.Client(t, local.b, kgo.DefaultProduceTopic("in"))
	for i := range 100 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(local.b.Addr()), kgo.TransactionalID("app-tx"),
		kgo.ConsumerGroup("app"), kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DefaultProduceTopic("out"), kgo.RequireStableFetchOffsets())
	if err != nil {
		t.Fatal(err)
	}
	// process runs one transaction over up to n records.
	process := func(n int, end kgo.TransactionEndTry) int {
		t.Helper()
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		done := 0
		for done < n && pctx.Err() == nil {
			sess.PollRecords(pctx, n-done).EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Value: r.Value}, nil)
				done++
			})
		}
		committed, err := sess.End(ctx, end)
		if err != nil || committed != (end == kgo.TryCommit) {
			t.Fatalf("ending the transaction (%v): committed %v, %v", end, committed, err)
		}
		return done
	}
	if n := process(25, kgo.TryCommit) + process(15, kgo.TryCommit); n != 40 {
		t.Fatalf("processed %d records in the committed transactions, want 40", n)
	}
	process(10, kgo.TryAbort) // its offsets must not count
	sess.Close()
	up.Start()

	synced := func() bool {
		for _, s := range local.b.ForwardGroupOffsets() {
			if s.Group == "app" && s.Topic == "in" && s.LocalOffset == 40 && s.UpstreamOffset == 40 && s.Committed == 40 && s.Checkpoint == 40 {
				return true
			}
		}
		return false
	}
	waitFor(t, 20*time.Second, "app's committed offsets synced and checkpointed upstream", synced)
	time.Sleep(300 * time.Millisecond) // more passes: the aborted offsets stay out
	if !synced() {
		t.Fatalf("after more sync passes: %+v", local.b.ForwardGroupOffsets())
	}

	mover, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.ConsumeTopics("in"), kgo.ConsumerGroup("app"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer mover.Close()
	if rest := pollValues(mover, 60); len(rest) != 60 || rest[0] != "40" || rest[59] != "99" {
		t.Fatalf("the group upstream read %d records (%v), want 40..99", len(rest), rest)
	}
}

// The upstream refuses the checkpoint record (INVALID_RECORD): the row
// says why no checkpoint was written, the rest of the sync goes on, and
// once the upstream takes records again the next pass writes it.
func TestForwardCheckpointRefusedUpstream(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("orders=site."),
		minikafka.WithTopic("orders", 1), minikafka.WithForwardCheckpoints("edge", 100*time.Millisecond))
	ctx := context.Background()
	prod := minikafkatest.Client(t, local, kgo.DefaultProduceTopic("orders"))
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "everything shipped", func() bool { st := local.ForwardStats(); return len(st) == 1 && st[0].Lag == 0 })
	id, err := up.b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "edge.checkpoints.internal", ErrorCode: 87}) // INVALID_RECORD
	if err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 6, LeaderEpoch: -1})
	if res, err := kadm.NewClient(prod).CommitOffsets(ctx, "billing", os); err != nil || res.Error() != nil {
		t.Fatalf("commit: %v %v", err, res.Error())
	}
	row := func() (r uplink.GroupOffsetSync, ok bool) {
		for _, s := range local.ForwardGroupOffsets() {
			if s.Group == "billing" {
				return s, true
			}
		}
		return r, false
	}
	waitFor(t, 20*time.Second, "the refused checkpoint reported", func() bool {
		r, ok := row()
		return ok && r.Checkpoint == -1 && r.UpstreamOffset == 6 && strings.Contains(r.Err, "writing the checkpoint") && strings.Contains(r.Err, "INVALID_RECORD")
	})
	if err := up.b.RemoveFault(id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the checkpoint written once the upstream takes it", func() bool {
		r, ok := row()
		return ok && r.Checkpoint == 6 && r.Err == ""
	})
}
