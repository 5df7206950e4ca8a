package broker

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// librdkafka (confluent-kafka-go) re-authenticates too (KIP-368, at 90% of
// the lifetime): a SCRAM producer and a PLAIN consumer keep working across
// several lifetimes without a new connection.
func TestSASLReauthLibrdkafka(t *testing.T) {
	const lifetime = 1500 * time.Millisecond
	addr, logs := reauthBroker(t, lifetime)
	const topic = "reauth-rdk"
	conf := func(mech string, extra kafka.ConfigMap) *kafka.ConfigMap {
		c := kafka.ConfigMap{
			"bootstrap.servers": addr,
			"security.protocol": "SASL_PLAINTEXT",
			"sasl.mechanisms":   mech,
			"sasl.username":     "alice",
			"sasl.password":     saslTestPass,
			"log_level":         3,
		}
		for k, v := range extra {
			c[k] = v
		}
		return &c
	}
	p, err := kafka.NewProducer(conf(SASLScramSHA512, kafka.ConfigMap{"linger.ms": 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := kafka.NewConsumer(conf(SASLPlain, kafka.ConfigMap{
		"group.id": "reauth-rdk", "enable.auto.commit": false, "fetch.wait.max.ms": 200,
		"topic.metadata.refresh.interval.ms": 60000,
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	tp := kafka.TopicPartition{Topic: rdkTopic(topic), Partition: 0}
	deliver := func(i int) {
		t.Helper()
		ch := make(chan kafka.Event, 1)
		if err := p.Produce(&kafka.Message{TopicPartition: tp, Value: []byte("v")}, ch); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		select {
		case ev := <-ch:
			if m := ev.(*kafka.Message); m.TopicPartition.Error != nil {
				t.Fatalf("produce %d: %v", i, m.TopicPartition.Error)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("produce %d: no delivery report", i)
		}
	}
	deliver(0) // creates the topic
	off := tp
	off.Offset = kafka.OffsetBeginning
	if err := c.Assign([]kafka.TopicPartition{off}); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			switch ev := c.Poll(50).(type) {
			case *kafka.Message:
				got.Add(1)
			case kafka.Error:
				t.Errorf("consumer: %v", ev)
			}
		}
	}()
	defer func() { close(stop); <-done }()

	logins := func() int { return strings.Count(logs.String(), `msg="SASL authenticated"`) }
	sent, settled := 1, -1
	const run = 4 * time.Second
	for start := time.Now(); time.Since(start) < run; sent++ {
		deliver(sent)
		if settled < 0 && time.Since(start) > lifetime/2 && got.Load() > 0 {
			settled = logins()
		}
		time.Sleep(50 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); got.Load() < int64(sent); {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d", got.Load(), sent)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := logins(); settled < 0 || n != settled {
		t.Fatalf("%d logins, %d after the first %v: connections were replaced", n, settled, lifetime/2)
	}
	per := map[string]int{}
	for _, m := range reauthLine.FindAllStringSubmatch(logs.String(), -1) {
		per[m[1]]++
	}
	t.Logf("re-authentications per librdkafka connection: %v", per)
	most := 0
	for _, n := range per {
		most = max(most, n)
	}
	if most < 2 || len(per) < 2 {
		t.Fatalf("re-authentications per connection: %v", per)
	}
	if strings.Contains(logs.String(), "closing connection") {
		t.Fatalf("a connection was closed:\n%s", logs)
	}
}

func rdkTopic(s string) *string { return &s }
