package minikafka

// Seeding and reading records without a Kafka client: a test sets up the
// topics and records its code under test should find (committed or
// aborted transactions included), and reads back what that code wrote.
// Requests go straight to the broker's handler, as Start's own do.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// CreateTopic creates a topic with partitions (0: the broker default) and
// topic configs (Kafka's names: cleanup.policy, retention.ms, ...). An
// existing topic is an error wrapping kerr.TopicAlreadyExists.
func (b *Broker) CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 5, 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, -1
	if partitions <= 0 {
		rt.NumPartitions = -1
	}
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := b.do(ctx, req)
	if err != nil {
		return fmt.Errorf("minikafka: creating topic %q: %w", name, err)
	}
	t := resp.(*kmsg.CreateTopicsResponse).Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		if t.ErrorMessage != nil {
			return fmt.Errorf("minikafka: creating topic %q: %w: %s", name, err, *t.ErrorMessage)
		}
		return fmt.Errorf("minikafka: creating topic %q: %w", name, err)
	}
	return nil
}

// Seed writes records, each to its Topic and Partition (Key, Value,
// Headers and Timestamp kept; a zero Timestamp is now), as one batch per
// partition, and returns them with Offset set. The topics must exist.
func (b *Broker) Seed(ctx context.Context, recs ...*kgo.Record) ([]*kgo.Record, error) {
	return recs, b.seed(ctx, "", -1, -1, recs)
}

// seedTxnIDs makes each seeded transaction's transactional ID unique.
var seedTxnIDs atomic.Uint64

// SeedTransaction writes records in one transaction, committed or
// aborted, under a transactional ID of its own: read_committed consumers
// then see them (commit) or skip them (abort), and the offsets include
// the transaction markers, as for any transactional producer.
func (b *Broker) SeedTransaction(ctx context.Context, commit bool, recs ...*kgo.Record) ([]*kgo.Record, error) {
	id := fmt.Sprintf("minikafka-seed-%d-%d", time.Now().UnixNano(), seedTxnIDs.Add(1))
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 4, kmsg.StringPtr(id), 60000
	init.ProducerID, init.ProducerEpoch = -1, -1
	resp, err := b.do(ctx, init)
	if err != nil {
		return nil, fmt.Errorf("minikafka: seeding a transaction: %w", err)
	}
	ir := resp.(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(ir.ErrorCode); err != nil {
		return nil, fmt.Errorf("minikafka: seeding a transaction: init: %w", err)
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch = 3, id, ir.ProducerID, ir.ProducerEpoch
	parts := map[string][]int32{}
	for _, r := range recs {
		if !slices.Contains(parts[r.Topic], r.Partition) {
			parts[r.Topic] = append(parts[r.Topic], r.Partition)
		}
	}
	for t, ps := range parts {
		add.Topics = append(add.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: t, Partitions: ps})
	}
	resp, err = b.do(ctx, add)
	if err != nil {
		return nil, fmt.Errorf("minikafka: seeding a transaction: %w", err)
	}
	for _, t := range resp.(*kmsg.AddPartitionsToTxnResponse).Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("minikafka: seeding a transaction: adding %s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	if err := b.seed(ctx, id, ir.ProducerID, ir.ProducerEpoch, recs); err != nil {
		return nil, err
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = 3, id, ir.ProducerID, ir.ProducerEpoch, commit
	resp, err = b.do(ctx, end)
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.EndTxnResponse).ErrorCode)
	}
	if err != nil {
		return nil, fmt.Errorf("minikafka: seeding a transaction: ending it: %w", err)
	}
	return recs, nil
}

// seed produces recs, one batch per partition, transactional when pid is
// set.
func (b *Broker) seed(ctx context.Context, txnID string, pid int64, epoch int16, recs []*kgo.Record) error {
	type tp struct {
		topic string
		part  int32
	}
	var order []tp
	byTP := map[tp][]*kgo.Record{}
	for _, r := range recs {
		if r.Topic == "" {
			return errors.New("minikafka: seeding: a record without a topic")
		}
		k := tp{r.Topic, r.Partition}
		if byTP[k] == nil {
			order = append(order, k)
		}
		byTP[k] = append(byTP[k], r)
	}
	now := time.Now()
	for _, k := range order {
		rs := byTP[k]
		base := rs[0].Timestamp
		if base.IsZero() {
			base = now
		}
		enc := make([]records.Record, len(rs))
		for i, r := range rs {
			ts := r.Timestamp
			if ts.IsZero() {
				ts = now
				r.Timestamp = now
			}
			enc[i] = records.Record{Key: r.Key, Value: r.Value, TimestampDelta: ts.UnixMilli() - base.UnixMilli()}
			for _, h := range r.Headers {
				enc[i].Headers = append(enc[i].Headers, records.Header{Key: []byte(h.Key), Value: h.Value})
			}
		}
		spec := records.BatchSpec{FirstTimestamp: base.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		if pid >= 0 {
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, epoch, 0, true
		}
		batch, err := records.AppendBatch(nil, spec, enc)
		if err != nil {
			return fmt.Errorf("minikafka: seeding %s-%d: %w", k.topic, k.part, err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30000
		if txnID != "" {
			req.TransactionID = kmsg.StringPtr(txnID)
		}
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = k.topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = k.part, batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := b.do(ctx, req)
		if err != nil {
			return fmt.Errorf("minikafka: seeding %s-%d: %w", k.topic, k.part, err)
		}
		pr := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
			return fmt.Errorf("minikafka: seeding %s-%d: %w", k.topic, k.part, err)
		}
		for i, r := range rs {
			r.Offset = pr.BaseOffset + int64(i)
		}
	}
	return nil
}

// Records reads up to limit records of a partition from offset, decoded,
// without a Kafka client: with committed as a read_committed consumer
// (aborted transactions skipped, nothing past the last stable offset),
// else up to the high watermark. Transaction markers are never returned.
// next is where the records after them begin. limit is capped at 10 000.
func (b *Broker) Records(topic string, partition int32, offset int64, limit int, committed bool) (recs []*kgo.Record, next int64, err error) {
	return b.brk.ReadRecords(topic, partition, offset, limit, committed)
}
