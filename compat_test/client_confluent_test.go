package compat_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func init() {
	clients = append(clients, clientCase{"confluent-kafka-go", newConfluentClient})
}

type confluentClient struct{ addrs []string }

func newConfluentClient(t *testing.T, addrs []string) (client, caps) {
	c := &confluentClient{addrs}
	_, lib := kafka.LibraryVersion()
	return c, caps{
		codecs: allCodecs, timestamps: true, idempotent: true, nonIdempotent: true,
		consumeNoGroup: true, reportsOffsets: true, groups: true, txn: true, consumerProtocol: true,
		admin: c, adminOps: []string{"topics", "partitions", "configs", "delete-records", "groups"},
		version: modVersion("github.com/confluentinc/confluent-kafka-go/v2") + " (librdkafka " + lib + ")",
	}
}

func (c *confluentClient) conf(extra kafka.ConfigMap) *kafka.ConfigMap {
	m := kafka.ConfigMap{
		"bootstrap.servers": strings.Join(c.addrs, ","),
		"client.id":         "compat-confluent-go",
		// Only errors on stderr: librdkafka is chatty.
		"log_level": 3,
	}
	for k, v := range extra {
		m[k] = v
	}
	return &m
}

func (c *confluentClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	p, err := kafka.NewProducer(c.conf(kafka.ConfigMap{
		"enable.idempotence": o.Idempotent, "compression.type": o.Codec, "acks": "all", "linger.ms": 10,
	}))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	dr := make(chan kafka.Event, len(recs))
	for i, r := range recs {
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.P}, Opaque: i}
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
			m.Timestamp = time.UnixMilli(r.TS)
		}
		if err := p.Produce(m, dr); err != nil {
			return nil, err
		}
	}
	out := make([]rec, len(recs))
	timeout := time.After(20 * time.Second)
	for n := 0; n < len(recs); n++ {
		select {
		case ev := <-dr:
			m := ev.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				return nil, m.TopicPartition.Error
			}
			i := m.Opaque.(int)
			out[i] = recs[i]
			out[i].P, out[i].O = m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
		case <-timeout:
			return nil, fmt.Errorf("%d of %d delivery reports before timeout", n, len(recs))
		}
	}
	return out, nil
}

func (c *confluentClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	// librdkafka's consumer needs a group.id even when it only assigns.
	cons, err := kafka.NewConsumer(c.conf(kafka.ConfigMap{
		"group.id": "compat-confluent-go-assign", "enable.auto.commit": false, "auto.offset.reset": "error",
	}))
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	var tps []kafka.TopicPartition
	for p := int32(0); p < parts; p++ {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetBeginning})
	}
	if err := cons.Assign(tps); err != nil {
		return nil, err
	}
	var out []rec
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < want {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("got %d of %d records before timeout", len(out), want)
		}
		m, err := cons.ReadMessage(500 * time.Millisecond)
		if err != nil {
			if ke, ok := err.(kafka.Error); ok && ke.IsTimeout() {
				continue
			}
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
	return out, nil
}

func (c *confluentClient) admin(t *testing.T) (*kafka.AdminClient, error) {
	a, err := kafka.NewAdminClient(c.conf(nil))
	if err != nil {
		return nil, err
	}
	t.Cleanup(a.Close)
	return a, nil
}

func (c *confluentClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	a, err := c.admin(t)
	if err != nil {
		return 0, err
	}
	var os kafka.OffsetSpec
	switch spec {
	case -2:
		os = kafka.EarliestOffsetSpec
	case -1:
		os = kafka.LatestOffsetSpec
	default:
		os = kafka.NewOffsetSpecForTimestamp(spec)
	}
	res, err := a.ListOffsets(ctxT(t), map[kafka.TopicPartition]kafka.OffsetSpec{{Topic: &topic, Partition: part}: os})
	if err != nil {
		return 0, err
	}
	for tp, info := range res.ResultInfos {
		if tp.Partition == part && *tp.Topic == topic {
			if info.Error.Code() != kafka.ErrNoError {
				return 0, info.Error
			}
			return int64(info.Offset), nil
		}
	}
	return 0, fmt.Errorf("no answer for %s/%d", topic, part)
}

func topicResultErr(rs []kafka.TopicResult, err error) error {
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

func (c *confluentClient) createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return topicResultErr(a.CreateTopics(ctxT(t), []kafka.TopicSpecification{{
		Topic: topic, NumPartitions: int(parts), ReplicationFactor: 1, Config: configs,
	}}))
}

func (c *confluentClient) deleteTopic(t *testing.T, topic string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return topicResultErr(a.DeleteTopics(ctxT(t), []string{topic}))
}

func (c *confluentClient) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	a, err := c.admin(t)
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	add := func(md *kafka.Metadata) {
		for name, tm := range md.Topics {
			if tm.Error.Code() == kafka.ErrNoError {
				out[name] = int32(len(tm.Partitions))
			}
		}
	}
	if len(topics) == 0 {
		md, err := a.GetMetadata(nil, true, 10000)
		if err != nil {
			return nil, err
		}
		add(md)
	}
	for _, tp := range topics {
		tp := tp
		md, err := a.GetMetadata(&tp, false, 10000)
		if err != nil {
			return nil, err
		}
		add(md)
	}
	return out, nil
}

func (c *confluentClient) createPartitions(t *testing.T, topic string, total int32) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return topicResultErr(a.CreatePartitions(ctxT(t), []kafka.PartitionsSpecification{{Topic: topic, IncreaseTo: int(total)}}))
}

func (c *confluentClient) describeConfig(t *testing.T, topic, key string) (string, error) {
	a, err := c.admin(t)
	if err != nil {
		return "", err
	}
	rs, err := a.DescribeConfigs(ctxT(t), []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}})
	if err != nil {
		return "", err
	}
	for _, r := range rs {
		if r.Error.Code() != kafka.ErrNoError {
			return "", r.Error
		}
		if e, ok := r.Config[key]; ok {
			return e.Value, nil
		}
	}
	return "", fmt.Errorf("config %s not described", key)
}

func (c *confluentClient) alterConfig(t *testing.T, topic, key, value string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	rs, err := a.IncrementalAlterConfigs(ctxT(t), []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic,
		Config: []kafka.ConfigEntry{{Name: key, Value: value, IncrementalOperation: kafka.AlterConfigOpTypeSet}}}})
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

func (c *confluentClient) deleteRecords(t *testing.T, topic string, part int32, before int64) (int64, error) {
	a, err := c.admin(t)
	if err != nil {
		return 0, err
	}
	res, err := a.DeleteRecords(ctxT(t), []kafka.TopicPartition{{Topic: &topic, Partition: part, Offset: kafka.Offset(before)}})
	if err != nil {
		return 0, err
	}
	for _, r := range res.DeleteRecordsResults {
		if r.TopicPartition.Error != nil {
			return 0, r.TopicPartition.Error
		}
		if r.DeletedRecords != nil {
			return int64(r.DeletedRecords.LowWatermark), nil
		}
	}
	return 0, fmt.Errorf("no answer")
}

func (c *confluentClient) listGroups(t *testing.T) ([]string, error) {
	a, err := c.admin(t)
	if err != nil {
		return nil, err
	}
	res, err := a.ListConsumerGroups(ctxT(t))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range res.Valid {
		out = append(out, g.GroupID)
	}
	if len(res.Errors) > 0 {
		return out, res.Errors[0]
	}
	return out, nil
}

func (c *confluentClient) describeGroup(t *testing.T, group string) (string, error) {
	a, err := c.admin(t)
	if err != nil {
		return "", err
	}
	res, err := a.DescribeConsumerGroups(ctxT(t), []string{group})
	if err != nil {
		return "", err
	}
	for _, d := range res.ConsumerGroupDescriptions {
		if d.GroupID == group {
			if d.Error.Code() != kafka.ErrNoError {
				return "", d.Error
			}
			return d.State.String(), nil
		}
	}
	return "", fmt.Errorf("group %s not described", group)
}
