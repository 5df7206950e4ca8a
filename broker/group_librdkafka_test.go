package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/logstore"
)

// TestLibrdkafkaCooperativeSticky: two confluent-kafka-go (librdkafka)
// consumers with partition.assignment.strategy=cooperative-sticky share six
// partitions incrementally and consume every record.
func TestLibrdkafkaCooperativeSticky(t *testing.T) {
	const parts, per = 6, 10
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", parts)
	gb.produce(t, "t", parts, per)
	seen := &recordSet{seen: map[int32]map[int64]int{}}
	var mu sync.Mutex
	owned := map[string]map[int32]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, name := range []string{"r1", "r2"} {
		c, err := kafka.NewConsumer(&kafka.ConfigMap{
			"bootstrap.servers":             gb.addr,
			"group.id":                      "rg",
			"client.id":                     name,
			"partition.assignment.strategy": "cooperative-sticky",
			"auto.offset.reset":             "earliest",
			"session.timeout.ms":            6000,
			"heartbeat.interval.ms":         100,
			"fetch.wait.max.ms":             100,
			"log_level":                     3,
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		owned[name] = map[int32]bool{}
		mu.Unlock()
		rebalance := func(c *kafka.Consumer, ev kafka.Event) error {
			mu.Lock()
			defer mu.Unlock()
			switch e := ev.(type) {
			case kafka.AssignedPartitions:
				for _, tp := range e.Partitions {
					owned[name][tp.Partition] = true
				}
			case kafka.RevokedPartitions:
				for _, tp := range e.Partitions {
					delete(owned[name], tp.Partition)
				}
			}
			return nil
		}
		if err := c.SubscribeTopics([]string{"t"}, rebalance); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if m, err := c.ReadMessage(50 * time.Millisecond); err == nil {
					seen.add(m.TopicPartition.Partition, int64(m.TopicPartition.Offset))
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	waitConsumed(t, seen, parts, per)
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		a, b := len(owned["r1"]), len(owned["r2"])
		overlap := false
		for p := range owned["r1"] {
			overlap = overlap || owned["r2"][p]
		}
		mu.Unlock()
		if a > 0 && b > 0 && a+b == parts && !overlap {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("librdkafka members never shared the partitions: r1=%d r2=%d overlap=%v", a, b, overlap)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLibrdkafkaConsumerProtocol: a confluent-kafka-go (librdkafka) consumer
// with group.protocol=consumer (KIP-848) is assigned every partition of a
// three-partition topic and reads all thirty records, as against Kafka.
func TestLibrdkafkaConsumerProtocol(t *testing.T) {
	const parts, per = 3, 10
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", parts)
	gb.produce(t, "t", parts, per)
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": gb.addr,
		"group.id":          "kip848",
		"group.protocol":    "consumer",
		"auto.offset.reset": "earliest",
		"fetch.wait.max.ms": 100,
		"log_level":         3,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SubscribeTopics([]string{"t"}, nil); err != nil {
		t.Fatal(err)
	}
	seen := &recordSet{seen: map[int32]map[int64]int{}}
	deadline := time.Now().Add(20 * time.Second)
	for seen.missing(parts, per) > 0 && time.Now().Before(deadline) {
		if m, err := c.ReadMessage(50 * time.Millisecond); err == nil {
			seen.add(m.TopicPartition.Partition, int64(m.TopicPartition.Offset))
		}
	}
	if n := seen.missing(parts, per); n > 0 {
		a, _ := c.Assignment()
		t.Fatalf("librdkafka consumer-protocol member missed %d of %d records; assignment %v", n, parts*per, a)
	}
}

// BenchmarkLibrdkafkaConsumerProtocol: a confluent-kafka-go (librdkafka)
// consumer with group.protocol=consumer joins a new group on a
// three-partition topic holding 30 records; the clock stops when it has
// read all of them. One op is one join-to-caught-up; minikafka against
// kfake in the same run.
func BenchmarkLibrdkafkaConsumerProtocol(b *testing.B) {
	const parts, per = 3, 10
	for _, peer := range benchPeers {
		b.Run(peer.name, func(b *testing.B) {
			addr := peer.start(b, "t", parts)
			cl := newClient(b, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for p := range int32(parts) {
				for i := range per {
					r := &kgo.Record{Topic: "t", Partition: p, Value: []byte(fmt.Sprint(i))}
					if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for i := range b.N {
				c, err := kafka.NewConsumer(&kafka.ConfigMap{
					"bootstrap.servers": addr, "group.id": fmt.Sprintf("bench-%d", i),
					"group.protocol": "consumer", "auto.offset.reset": "earliest",
					"fetch.wait.max.ms": 100, "log_level": 3,
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.SubscribeTopics([]string{"t"}, nil); err != nil {
					b.Fatal(err)
				}
				seen := &recordSet{seen: map[int32]map[int64]int{}}
				deadline := time.Now().Add(30 * time.Second)
				for seen.missing(parts, per) > 0 {
					if time.Now().After(deadline) {
						b.Fatalf("%s: read %d of %d records in 30 s", peer.name, parts*per-seen.missing(parts, per), parts*per)
					}
					if m, err := c.ReadMessage(10 * time.Millisecond); err == nil {
						seen.add(m.TopicPartition.Partition, int64(m.TopicPartition.Offset))
					}
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}
