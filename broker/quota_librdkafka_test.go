package broker

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
)

// librdkafka (confluent-kafka-go) is held to a produce quota within 10 %
// too, and reports the broker's throttle_time_ms (its throttle events).
func TestProduceQuotaLibrdkafka(t *testing.T) {
	t.Parallel() // 21 s of mostly waiting, beside the kgo twin
	const limit = 1 << 20
	b := newTestBroker(t, func(c *Config) {
		c.QuotaWindowSamples, c.QuotaWindowSize = 11, 20*time.Millisecond
	})
	addr := listen(t, b)
	createTopic(t, b, "quota-rdk", 1)
	alterQuota(t, newAdmin(t, addr), kadm.ClientQuotaEntity{{Type: "client-id", Name: qname("rdk-limited")}},
		kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: limit})
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers": addr,
		"client.id":         "rdk-limited",
		"linger.ms":         0,
		"batch.size":        20 << 10,
		"acks":              "all",
		"log_level":         3,
		// librdkafka's statistics report the throttle_time_ms it saw.
		"statistics.interval.ms": 200,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var seen atomic.Bool
	go func() {
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *kafka.Message:
				e.Opaque.(func(error))(e.TopicPartition.Error)
			case *kafka.Stats:
				var st struct {
					Brokers map[string]struct {
						Throttle struct {
							Max int64 `json:"max"`
						} `json:"throttle"`
					} `json:"brokers"`
				}
				if json.Unmarshal([]byte(e.String()), &st) == nil {
					for _, br := range st.Brokers {
						if br.Throttle.Max > 0 {
							seen.Store(true)
						}
					}
				}
			case *kafka.Error:
				t.Logf("librdkafka: %v", e)
			}
		}
	}()
	// The broker counts the answers it sent with throttle_time_ms set.
	tp := kafka.TopicPartition{Topic: rdkTopic("quota-rdk"), Partition: 0}
	before := b.quotaThrottles.Load()
	measureProduceRate(t, limit, func(value []byte, done func(error)) {
		for {
			err := p.Produce(&kafka.Message{TopicPartition: tp, Value: value, Opaque: done}, nil)
			if err == nil {
				return
			}
			if e, ok := err.(kafka.Error); ok && e.Code() == kafka.ErrQueueFull {
				time.Sleep(time.Millisecond)
				continue
			}
			done(err)
			return
		}
	})
	n := b.quotaThrottles.Load() - before
	if n == 0 {
		t.Fatal("no produce answer carried throttle_time_ms")
	}
	t.Logf("%d throttled answers", n)
	for deadline := time.Now().Add(2 * time.Second); !seen.Load() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if !seen.Load() {
		t.Fatal("librdkafka's statistics never showed a throttle time")
	}
}
