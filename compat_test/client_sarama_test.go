package compat_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func init() {
	clients = append(clients, clientCase{"sarama", newSaramaClient})
}

type saramaClient struct{ addrs []string }

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0 // headers, timestamps, idempotence, zstd all need ≥ 2.1
	cfg.ClientID = "compat-sarama"
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	return cfg
}

func newSaramaClient(t *testing.T, addrs []string) (client, caps) {
	c := &saramaClient{addrs}
	return c, caps{
		codecs: allCodecs, timestamps: true, idempotent: true, nonIdempotent: true,
		consumeNoGroup: true, reportsOffsets: true, groups: true, txn: true,
		admin: c, adminOps: []string{"topics", "partitions", "configs", "delete-records", "groups"},
		version: modVersion("github.com/IBM/sarama"),
	}
}

func saramaCodec(name string) sarama.CompressionCodec {
	switch name {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

func (c *saramaClient) produce(t *testing.T, topic string, recs []rec, o produceOpts) ([]rec, error) {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = saramaCodec(o.Codec)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	// Let records share batches: hold each batch briefly.
	cfg.Producer.Flush.Frequency = 20 * time.Millisecond
	if o.Idempotent {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	p, err := sarama.NewAsyncProducer(c.addrs, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for i, r := range recs {
		m := &sarama.ProducerMessage{Topic: topic, Partition: r.P, Metadata: i}
		if r.K != nil {
			m.Key = sarama.StringEncoder(*r.K)
		}
		if r.V != nil {
			m.Value = sarama.StringEncoder(*r.V)
		}
		for _, h := range r.H {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.K), Value: []byte(h.V)})
		}
		if r.TS >= 0 {
			m.Timestamp = time.UnixMilli(r.TS)
		}
		p.Input() <- m
	}
	out := make([]rec, len(recs))
	timeout := time.After(20 * time.Second)
	for n := 0; n < len(recs); n++ {
		select {
		case m := <-p.Successes():
			i := m.Metadata.(int)
			out[i] = recs[i]
			out[i].P, out[i].O = m.Partition, m.Offset
		case e := <-p.Errors():
			return nil, e.Err
		case <-timeout:
			return nil, fmt.Errorf("%d of %d records acknowledged before timeout", n, len(recs))
		}
	}
	return out, nil
}

func (c *saramaClient) consume(t *testing.T, topic string, parts int32, want int) ([]rec, error) {
	cons, err := sarama.NewConsumer(c.addrs, saramaConfig())
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	msgs := make(chan *sarama.ConsumerMessage)
	errs := make(chan error, parts)
	for p := int32(0); p < parts; p++ {
		pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		defer pc.AsyncClose()
		go func() {
			for m := range pc.Messages() {
				msgs <- m
			}
		}()
		go func() {
			for e := range pc.Errors() {
				select {
				case errs <- e:
				default:
				}
			}
		}()
	}
	var out []rec
	timeout := time.After(30 * time.Second)
	for len(out) < want {
		select {
		case m := <-msgs:
			r := rec{P: m.Partition, O: m.Offset, TS: m.Timestamp.UnixMilli()}
			if m.Key != nil {
				r.K = sp(string(m.Key))
			}
			if m.Value != nil {
				r.V = sp(string(m.Value))
			}
			for _, h := range m.Headers {
				r.H = append(r.H, hdr{string(h.Key), string(h.Value)})
			}
			out = append(out, r)
		case e := <-errs:
			return out, e
		case <-timeout:
			return out, fmt.Errorf("got %d of %d records before timeout", len(out), want)
		}
	}
	// Drain so the partition goroutines are not stuck sending.
	go func() {
		for range msgs {
		}
	}()
	return out, nil
}

func (c *saramaClient) listOffset(t *testing.T, topic string, part int32, spec int64) (int64, error) {
	cl, err := sarama.NewClient(c.addrs, saramaConfig())
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	// sarama's GetOffset takes the wire timestamp (-1 latest, -2 earliest).
	return cl.GetOffset(topic, part, spec)
}

func (c *saramaClient) admin(t *testing.T) (sarama.ClusterAdmin, error) {
	a, err := sarama.NewClusterAdmin(c.addrs, saramaConfig())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { a.Close() })
	return a, nil
}

func (c *saramaClient) createTopic(t *testing.T, topic string, parts int32, configs map[string]string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	entries := map[string]*string{}
	for k, v := range configs {
		entries[k] = sp(v)
	}
	return a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: parts, ReplicationFactor: 1, ConfigEntries: entries}, false)
}

func (c *saramaClient) deleteTopic(t *testing.T, topic string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return a.DeleteTopic(topic)
}

func (c *saramaClient) metadata(t *testing.T, topics ...string) (map[string]int32, error) {
	a, err := c.admin(t)
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	if len(topics) == 0 {
		all, err := a.ListTopics()
		if err != nil {
			return nil, err
		}
		for name, d := range all {
			out[name] = d.NumPartitions
		}
		return out, nil
	}
	md, err := a.DescribeTopics(topics)
	if err != nil {
		return nil, err
	}
	for _, m := range md {
		if !errors.Is(m.Err, sarama.ErrNoError) {
			continue
		}
		out[m.Name] = int32(len(m.Partitions))
	}
	return out, nil
}

func (c *saramaClient) createPartitions(t *testing.T, topic string, total int32) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return a.CreatePartitions(topic, total, nil, false)
}

func (c *saramaClient) describeConfig(t *testing.T, topic, key string) (string, error) {
	a, err := c.admin(t)
	if err != nil {
		return "", err
	}
	es, err := a.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{key}})
	if err != nil {
		return "", err
	}
	for _, e := range es {
		if e.Name == key {
			return e.Value, nil
		}
	}
	return "", fmt.Errorf("config %s not described", key)
}

func (c *saramaClient) alterConfig(t *testing.T, topic, key, value string) error {
	a, err := c.admin(t)
	if err != nil {
		return err
	}
	return a.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		key: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: sp(value)},
	}, false)
}

func (c *saramaClient) deleteRecords(t *testing.T, topic string, part int32, before int64) (int64, error) {
	a, err := c.admin(t)
	if err != nil {
		return 0, err
	}
	if err := a.DeleteRecords(topic, map[int32]int64{part: before}); err != nil {
		return 0, err
	}
	// sarama does not return the low watermark; ask for the earliest offset.
	return c.listOffset(t, topic, part, sarama.OffsetOldest)
}

func (c *saramaClient) listGroups(t *testing.T) ([]string, error) {
	a, err := c.admin(t)
	if err != nil {
		return nil, err
	}
	gs, err := a.ListConsumerGroups()
	var out []string
	for g := range gs {
		out = append(out, g)
	}
	return out, err
}

func (c *saramaClient) describeGroup(t *testing.T, group string) (string, error) {
	a, err := c.admin(t)
	if err != nil {
		return "", err
	}
	ds, err := a.DescribeConsumerGroups([]string{group})
	if err != nil {
		return "", err
	}
	if len(ds) != 1 {
		return "", fmt.Errorf("%d descriptions", len(ds))
	}
	if !errors.Is(ds[0].Err, sarama.ErrNoError) {
		return "", ds[0].Err
	}
	return ds[0].State, nil
}
