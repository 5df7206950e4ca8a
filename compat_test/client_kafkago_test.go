package compat_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func init() {
	clients = append(clients, clientCase{"kafka-go", newKafkaGoClient})
}

type kafkaGoClient struct{ addrs []string }

func newKafkaGoClient(t *testing.T, addrs []string) (client, caps) {
	c := &kafkaGoClient{addrs}
	return c, caps{
		// kafka-go has no idempotent producer and no delete-records call.
		codecs: allCodecs, timestamps: true, idempotent: false, nonIdempotent: true,
		consumeNoGroup: true, reportsOffsets: true, groups: true,
		admin: c, adminOps: []string{"topics", "partitions", "configs", "groups"},
		version: modVersion("github.com/segmentio/kafka-go"),
	}
}

func (c *kafkaGoClient) kc() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(c.addrs...), Timeout: 10 * time.Second}
}

func kafkaGoCodec(name string) kafka.Compression {
	switch name {
	case "gzip":
		return kafka.Gzip
	case "snappy":
		return kafka.Snappy
	case "lz4":
		return kafka.Lz4
	case "zstd":
		return kafka.Zstd
	}
	return 0
}

func (c *kafkaGoClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	out := make([]rec, len(recs))
	var mu sync.Mutex
	done := 0
	w := &kafka.Writer{
		Addr:  kafka.TCP(c.addrs...),
		Topic: topic,
		// The scenario names each record's partition.
		Balancer:     kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition }),
		RequiredAcks: kafka.RequireAll,
		Compression:  kafkaGoCodec(o.Codec),
		BatchTimeout: 10 * time.Millisecond,
		Completion: func(ms []kafka.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				return
			}
			for _, m := range ms {
				i := m.WriterData.(int)
				out[i] = recs[i]
				out[i].P, out[i].O = int32(m.Partition), m.Offset
				done++
			}
		},
	}
	var ms []kafka.Message
	for i, r := range recs {
		m := kafka.Message{Partition: int(r.P), WriterData: i}
		if r.K != nil {
			m.Key = []byte(*r.K)
		}
		if r.V != nil {
			m.Value = []byte(*r.V)
		}
		for _, h := range r.H {
			m.Headers = append(m.Headers, kafka.Header{Key: h.K, Value: []byte(h.V)})
		}
		if r.TS >= 0 {
			m.Time = time.UnixMilli(r.TS)
		}
		ms = append(ms, m)
	}
	err := w.WriteMessages(ctxT(t), ms...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if done != len(recs) {
		return nil, fmt.Errorf("completion saw %d of %d records", done, len(recs))
	}
	return out, nil
}

func (c *kafkaGoClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []rec
	// One reader per partition (a Reader without GroupID reads one partition).
	readers := make([]*kafka.Reader, parts)
	for p := range readers {
		readers[p] = kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.addrs, Topic: topic, Partition: p, MinBytes: 1, MaxBytes: 1 << 20,
			MaxWait: 200 * time.Millisecond,
		})
		defer readers[p].Close()
		if err := readers[p].SetOffset(kafka.FirstOffset); err != nil {
			return nil, err
		}
	}
	// The caller knows how many each partition holds only in total, so read
	// each partition until its high watermark.
	for p, r := range readers {
		end, err := c.listOffset(t, topic, int32(p), -1)
		if err != nil {
			return out, err
		}
		start, err := c.listOffset(t, topic, int32(p), -2)
		if err != nil {
			return out, err
		}
		for n := start; n < end; n++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				return out, fmt.Errorf("partition %d: %w", p, err)
			}
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
	}
	if len(out) != want {
		return out, fmt.Errorf("read %d records up to the high watermarks, want %d", len(out), want)
	}
	return out, nil
}

func (c *kafkaGoClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: {{Partition: int(part), Timestamp: spec}}}}
	res, err := c.kc().ListOffsets(ctxT(t), req)
	if err != nil {
		return 0, err
	}
	for _, po := range res.Topics[topic] {
		if po.Partition != int(part) {
			continue
		}
		if po.Error != nil {
			return 0, po.Error
		}
		switch spec {
		case -2:
			return po.FirstOffset, nil
		case -1:
			return po.LastOffset, nil
		}
		for off := range po.Offsets {
			return off, nil
		}
		return 0, errors.New("no offset in the answer")
	}
	return 0, fmt.Errorf("no answer for %s/%d", topic, part)
}

func (c *kafkaGoClient) createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error {
	var ces []kafka.ConfigEntry
	for k, v := range configs {
		ces = append(ces, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	res, err := c.kc().CreateTopics(ctxT(t), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: int(parts), ReplicationFactor: 1, ConfigEntries: ces,
	}}})
	if err != nil {
		return err
	}
	return res.Errors[topic]
}

func (c *kafkaGoClient) deleteTopic(t *testing.T, topic string) error {
	res, err := c.kc().DeleteTopics(ctxT(t), &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		return err
	}
	return res.Errors[topic]
}

func (c *kafkaGoClient) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	res, err := c.kc().Metadata(ctxT(t), &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, tp := range res.Topics {
		if tp.Error == nil {
			out[tp.Name] = int32(len(tp.Partitions))
		}
	}
	return out, nil
}

func (c *kafkaGoClient) createPartitions(t *testing.T, topic string, total int32) error {
	res, err := c.kc().CreatePartitions(ctxT(t), &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: total}}})
	if err != nil {
		return err
	}
	return res.Errors[topic]
}

func (c *kafkaGoClient) describeConfig(t *testing.T, topic, key string) (string, error) {
	res, err := c.kc().DescribeConfigs(ctxT(t), &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{key},
	}}})
	if err != nil {
		return "", err
	}
	for _, r := range res.Resources {
		if r.Error != nil {
			return "", r.Error
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName == key {
				return e.ConfigValue, nil
			}
		}
	}
	return "", fmt.Errorf("config %s not described", key)
}

func (c *kafkaGoClient) alterConfig(t *testing.T, topic, key, value string) error {
	res, err := c.kc().IncrementalAlterConfigs(ctxT(t), &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: key, Value: value, ConfigOperation: kafka.ConfigOperationSet}},
	}}})
	if err != nil {
		return err
	}
	for _, r := range res.Resources {
		if r.Error != nil {
			return r.Error
		}
	}
	return nil
}

func (c *kafkaGoClient) deleteRecords(*testing.T, string, int32, int64) (int64, error) {
	return 0, errNotOffered
}

func (c *kafkaGoClient) listGroups(t *testing.T) ([]string, error) {
	res, err := c.kc().ListGroups(ctxT(t), &kafka.ListGroupsRequest{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range res.Groups {
		out = append(out, g.GroupID)
	}
	return out, res.Error
}

func (c *kafkaGoClient) describeGroup(t *testing.T, group string) (string, error) {
	res, err := c.kc().DescribeGroups(ctxT(t), &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return "", err
	}
	for _, g := range res.Groups {
		if g.GroupID == group {
			return g.GroupState, g.Error
		}
	}
	return "", fmt.Errorf("group %s not described", group)
}
