package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/minikafka/minikafka/logstore"
)

type saramaHandler struct {
	name string
	seen *recordSet
	mu   *sync.Mutex
	got  map[string]bool // members that were assigned something
}

func (h saramaHandler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(s.Claims()["t"]) > 0 {
		h.got[h.name] = true
	}
	return nil
}
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.seen.add(m.Partition, m.Offset)
		s.MarkMessage(m, "")
	}
	return nil
}

// TestSaramaConsumerGroup: two sarama ConsumerGroup members share six
// partitions, consume every record and commit.
func TestSaramaConsumerGroup(t *testing.T) {
	const parts, per = 6, 10
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, shortSessions)
	gb.createTopic(t, "t", parts)
	gb.produce(t, "t", parts, per)

	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 50 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 2 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	seen := &recordSet{seen: map[int32]map[int64]int{}}
	var mu sync.Mutex
	got := map[string]bool{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var groups []sarama.ConsumerGroup
	for _, name := range []string{"s1", "s2"} {
		cg, err := sarama.NewConsumerGroup([]string{gb.addr}, "sg", cfg)
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, cg)
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := cg.Consume(ctx, []string{"t"}, saramaHandler{name, seen, &mu, got}); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
					t.Errorf("%s: %v", name, err)
					return
				}
			}
		})
	}
	waitConsumed(t, seen, parts, per)
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second sarama member never got partitions")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let an autocommit happen
	cancel()
	for _, cg := range groups {
		cg.Close()
	}
	wg.Wait()
	offs, err := kadm.NewClient(gb.client(t)).FetchOffsets(context.Background(), "sg")
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(parts) {
		if o, ok := offs.Lookup("t", p); !ok || o.At != per {
			t.Fatalf("partition %d: committed %+v, want %d", p, o, per)
		}
	}
}

// TestKafkaGoReaderGroup: a kafka-go Reader with a GroupID (old protocol
// versions: JoinGroup v1, OffsetCommit v2, OffsetFetch v1) reads every
// record and commits.
func TestKafkaGoReaderGroup(t *testing.T) {
	const parts, per = 3, 10
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, shortSessions)
	gb.createTopic(t, "t", parts)
	gb.produce(t, "t", parts, per)
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{gb.addr},
		GroupID:           "kg",
		Topic:             "t",
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond,
		SessionTimeout:    2 * time.Second,
		StartOffset:       kafka.FirstOffset,
	})
	seen := &recordSet{seen: map[int32]map[int64]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for seen.missing(parts, per) > 0 {
		m, err := r.ReadMessage(ctx) // commits as it reads
		if err != nil {
			t.Fatalf("read: %v (missing %d)", err, seen.missing(parts, per))
		}
		seen.add(int32(m.Partition), m.Offset)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	offs, err := kadm.NewClient(gb.client(t)).FetchOffsets(context.Background(), "kg")
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(parts) {
		if o, ok := offs.Lookup("t", p); !ok || o.At != per {
			t.Fatalf("partition %d: committed %+v, want %d", p, o, per)
		}
	}
}
