package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
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
	var rest []string
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for len(rest) < 50 && pctx.Err() == nil {
		mover.PollFetches(pctx).EachRecord(func(r *kgo.Record) { rest = append(rest, string(r.Value)) })
	}
	short, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel2()
	mover.PollFetches(short).EachRecord(func(r *kgo.Record) { rest = append(rest, string(r.Value)) })
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
