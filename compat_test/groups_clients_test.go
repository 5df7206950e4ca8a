package compat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	kafkago "github.com/segmentio/kafka-go"
)

func (c *confluentClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	cons, err := kafka.NewConsumer(c.conf(kafka.ConfigMap{
		"group.id": group, "enable.auto.commit": false, "auto.offset.reset": "earliest",
	}))
	if err != nil {
		return nil, err
	}
	if err := cons.Subscribe(topic, nil); err != nil {
		cons.Close()
		return nil, err
	}
	var out []rec
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < count && time.Now().Before(deadline) {
		m, err := cons.ReadMessage(500 * time.Millisecond)
		if err != nil {
			if ke, ok := err.(kafka.Error); ok && ke.IsTimeout() {
				continue
			}
			cons.Close()
			return out, err
		}
		r := rec{P: m.TopicPartition.Partition, O: int64(m.TopicPartition.Offset), TS: m.Timestamp.UnixMilli()}
		if m.Key != nil {
			r.K = sp(string(m.Key))
		}
		if m.Value != nil {
			r.V = sp(string(m.Value))
		}
		for _, h := range m.Headers {
			r.H = append(r.H, hdr{h.Key, string(h.Value)})
		}
		out = append(out, r)
	}
	if len(out) > 0 {
		if _, err := cons.Commit(); err != nil {
			cons.Close()
			return out, err
		}
	}
	return out, cons.Close()
}

func (c *kafkaGoClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: c.addrs, GroupID: group, Topic: topic, MinBytes: 1, MaxBytes: 1 << 20,
		MaxWait: 200 * time.Millisecond, StartOffset: kafkago.FirstOffset,
		// kafka-go's default group delays are seconds long.
		HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 5 * time.Second,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []rec
	var msgs []kafkago.Message
	for len(out) < count {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			r.Close()
			return out, err
		}
		msgs = append(msgs, m)
		x := rec{P: int32(m.Partition), O: m.Offset, TS: m.Time.UnixMilli()}
		if m.Key != nil {
			x.K = sp(string(m.Key))
		}
		if m.Value != nil {
			x.V = sp(string(m.Value))
		}
		for _, h := range m.Headers {
			x.H = append(x.H, hdr{h.Key, string(h.Value)})
		}
		out = append(out, x)
	}
	if err := r.CommitMessages(ctx, msgs...); err != nil {
		r.Close()
		return out, err
	}
	return out, r.Close()
}

type saramaGroupHandler struct {
	mu    sync.Mutex
	out   []rec
	count int
	done  chan struct{}
	once  sync.Once
}

func (h *saramaGroupHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaGroupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaGroupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		if len(h.out) >= h.count {
			h.mu.Unlock()
			return nil
		}
		r := rec{P: m.Partition, O: m.Offset, TS: m.Timestamp.UnixMilli()}
		if m.Key != nil {
			r.K = sp(string(m.Key))
		}
		if m.Value != nil {
			r.V = sp(string(m.Value))
		}
		for _, hd := range m.Headers {
			r.H = append(r.H, hdr{string(hd.Key), string(hd.Value)})
		}
		h.out = append(h.out, r)
		s.MarkMessage(m, "")
		full := len(h.out) >= h.count
		h.mu.Unlock()
		if full {
			s.Commit()
			h.once.Do(func() { close(h.done) })
			return nil
		}
	}
	return nil
}

func (c *saramaClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup(c.addrs, group, cfg)
	if err != nil {
		return nil, err
	}
	h := &saramaGroupHandler{count: count, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil {
				errc <- err
				return
			}
			select {
			case <-h.done:
				errc <- nil
				return
			default:
			}
		}
		errc <- nil
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
	}
	cancel()
	gerr := <-errc
	cerr := cg.Close() // leaves the group
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.out) < count {
		return h.out, fmt.Errorf("got %d of %d records (consume: %v)", len(h.out), count, gerr)
	}
	return h.out, cerr
}

// kcat -G joins a balanced consumer group; it commits (auto commit of the
// offsets it printed) when it exits after -c records.
func (c *kcatClient) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	stdout, err := c.run(t, nil, "-G", group, "-c", fmt.Sprint(count), "-J", "-q",
		"-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=10000", topic)
	if err != nil {
		return nil, err
	}
	var out []rec
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m kcatMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return out, fmt.Errorf("kcat -J line %q: %v", sc.Text(), err)
		}
		r := rec{P: m.Partition, O: m.Offset, TS: m.TS, K: m.Key, V: m.Payload}
		for i := 0; i+1 < len(m.Headers); i += 2 {
			r.H = append(r.H, hdr{m.Headers[i], m.Headers[i+1]})
		}
		out = append(out, r)
	}
	return out, nil
}
