package bench

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// moveTarget is a three-node cluster whose partition leader a benchmark
// can move: minikafka (WithNodes) or kfake (NumBrokers).
type moveTarget struct {
	name  string
	seeds []string
	// move makes another node lead topic's partition 0 and returns it.
	move func(topic string) (int32, error)
	cl   *kgo.Client
	lat  []float64 // ms, one per move
	// wrote is the node the client's last produce batch was written to.
	wrote atomic.Int32
	// produces counts Produce and Metadata requests written, for the
	// requests each resume took.
	produces, metadata atomic.Int64
}

func (t *moveTarget) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	switch key {
	case 0:
		t.produces.Add(1)
	case 3:
		t.metadata.Add(1)
	}
}

func (t *moveTarget) OnProduceBatchWritten(meta kgo.BrokerMetadata, _ string, _ int32, _ kgo.ProduceBatchMetrics) {
	t.wrote.Store(meta.NodeID)
}

func newMinikafkaTarget(tb testing.TB) *moveTarget {
	b, err := minikafka.Start(context.Background(), minikafka.WithNodes(3), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithInMemory(), minikafka.WithLogger(nil))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return &moveTarget{name: "minikafka", seeds: b.Addrs(), move: func(topic string) (int32, error) {
		pl, err := b.Placement(topic, 0)
		if err != nil {
			return 0, err
		}
		to := pl.ISR[(slices.Index(pl.ISR, pl.Leader)+1)%len(pl.ISR)]
		return to, b.MoveLeader(topic, 0, to)
	}}
}

func newKfakeTarget(tb testing.TB) *moveTarget {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return &moveTarget{name: "kfake", seeds: c.ListenAddrs(), move: func(topic string) (int32, error) {
		to := (c.LeaderFor(topic, 0) + 1) % 3
		return to, c.MoveTopicPartition(topic, 0, to)
	}}
}

// BenchmarkLeaderMoveResume times how long a kgo producer (default
// options: idempotent, acks=all) takes to have its next record
// acknowledged after the partition's leader moved: the leader moves
// (minikafka's MoveLeader, kfake's MoveTopicPartition), then one record
// is produced synchronously. Every op moves the leader once on each
// broker, alternating which goes first; ns/op is the sum of both, the
// metrics are each broker's median and worst over the ops, and the
// Produce and Metadata requests each move took.
//
// kip951 is kgo as it is: Produce v10+, whose NOT_LEADER_OR_FOLLOWER
// answer names the new leader (KIP-951). produce-v9 caps kgo at Kafka
// 3.6's versions, as a client without KIP-951: it must refresh its
// metadata to find the leader, and kgo refreshes no sooner than
// MetadataMinAge after its previous refresh (5 s by default, so a resume
// takes up to 5 s against any broker, the client's wait). Here
// MetadataMinAge is 250 ms and each move comes 300 ms after the last
// (untimed), so the time is the refresh and the retry, not that wait.
//
//	go test -run '^$' -bench 'LeaderMoveResume/kip951' -benchtime 20x -count 5 ./internal/bench
//	go test -run '^$' -bench 'LeaderMoveResume/produce-v9' -benchtime 10x -count 5 ./internal/bench
func BenchmarkLeaderMoveResume(b *testing.B) {
	b.Run("kip951", func(b *testing.B) { benchLeaderMove(b, 0) })
	b.Run("produce-v9", func(b *testing.B) {
		benchLeaderMove(b, 300*time.Millisecond, kgo.MaxVersions(kversion.V3_6_0()), kgo.MetadataMinAge(250*time.Millisecond))
	})
}

// benchLeaderMove waits pause (untimed) before each move.
func benchLeaderMove(b *testing.B, pause time.Duration, opts ...kgo.Opt) {
	ctx := context.Background()
	targets := []*moveTarget{newMinikafkaTarget(b), newKfakeTarget(b)}
	const topic = "moving"
	for _, t := range targets {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(t.seeds...), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.WithHooks(t)}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cl.Close)
		t.cl = cl
		resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			b.Fatalf("%s: create topic: %v", t.name, err)
		}
		// Warm up: metadata, producer ID, the connection to the leader.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
			b.Fatalf("%s: warm-up produce: %v", t.name, err)
		}
	}
	p0 := make([]int64, len(targets))
	m0 := make([]int64, len(targets))
	for i, t := range targets {
		p0[i], m0[i] = t.produces.Load(), t.metadata.Load()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range targets {
			t := targets[(i+j)%len(targets)]
			if pause > 0 {
				b.StopTimer()
				time.Sleep(pause)
				b.StartTimer()
			}
			to, err := t.move(topic)
			if err != nil {
				b.Fatalf("%s: move: %v", t.name, err)
			}
			t0 := time.Now()
			if err := t.cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				b.Fatalf("%s: produce after move %d: %v", t.name, i, err)
			}
			t.lat = append(t.lat, float64(time.Since(t0))/1e6)
			// The record went to the new leader, so the time covers the
			// client finding it, not a broker that ignored the move. kgo
			// may run the hook just after the record's promise: wait for
			// it a little, untimed.
			b.StopTimer()
			for deadline := time.Now().Add(time.Second); t.wrote.Load() != to && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if got := t.wrote.Load(); got != to {
				b.Fatalf("%s: record after move %d written to node %d, the leader is %d", t.name, i, got, to)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	for i, t := range targets {
		b.ReportMetric(float64(t.produces.Load()-p0[i])/float64(b.N), t.name+"-produce-reqs/move")
		b.ReportMetric(float64(t.metadata.Load()-m0[i])/float64(b.N), t.name+"-metadata-reqs/move")
		b.ReportMetric(median(t.lat), t.name+"-ms-median")
		b.ReportMetric(slices.Max(t.lat), t.name+"-ms-max")
	}
}
