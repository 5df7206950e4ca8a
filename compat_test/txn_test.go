package compat_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Transaction scenarios (clients with a transactional producer).

// txnProducer runs one transaction of recs per element of txns, committing
// or aborting each as commit[i] says.
type txnProducer interface {
	produceTxns(t *testing.T, topic string, txns [][]rec, commit []bool) error
}

func init() {
	scenarios = append(scenarios, scenario{"txn/commit-abort+isolation", func(c caps) bool { return c.txn }, scenarioTxn})
}

func scenarioTxn(t *testing.T, e *env) {
	tp, ok := e.cl.(txnProducer)
	if !ok {
		t.Fatalf("%s: caps.txn set but no produceTxns", e.name)
	}
	topic := e.topic("txn")
	makeTopic(t, e, topic, 1)
	mk := func(tag string, n int) []rec {
		rs := testRecords(tag, 1, n, 0, false)
		for i := range rs {
			rs[i].O = -1 // control records take offsets; order is what counts
		}
		return rs
	}
	a, b, c := mk("t1", 3), mk("t2", 3), mk("t3", 2)
	if err := tp.produceTxns(t, topic, [][]rec{a, b, c}, []bool{true, false, true}); err != nil {
		t.Fatalf("%s transactions: %v", e.name, err)
	}
	committed := append(append([]rec(nil), a...), c...)
	all := append(append(append([]rec(nil), a...), b...), c...)
	verifyRecords(t, "kgo read_committed", committed, isolatedConsume(t, e.addrs, topic, true, len(committed)))
	verifyRecords(t, "kgo read_uncommitted", all, isolatedConsume(t, e.addrs, topic, false, len(all)))
}

// isolatedConsume reads partition 0 to its end with kgo at an isolation level.
func isolatedConsume(t *testing.T, addrs []string, topic string, committed bool, want int) []rec {
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(iso),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// 30 s like the other scenarios' reads: a loaded 2-core -race run can
	// take seconds to join and fetch.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []rec
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	}
	// Nothing more must arrive (an aborted record leaking into read_committed).
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	cl.PollFetches(short).EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	for i := range out {
		out[i].O = -1
	}
	return out
}

func (c *kgoClient) produceTxns(t *testing.T, topic string, txns [][]rec, commit []bool) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(topic+"-txid"))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := ctxT(t)
	for i, recs := range txns {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		for _, r := range recs {
			if err := cl.ProduceSync(ctx, toKgo(topic, r)).FirstErr(); err != nil {
				return err
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit[i])); err != nil {
			return fmt.Errorf("end transaction %d (commit=%v): %w", i, commit[i], err)
		}
	}
	return nil
}

func (c *scriptClient) produceTxns(t *testing.T, topic string, txns [][]rec, commit []bool) error {
	return c.call(t, "produce_txns", topic, map[string]any{"txns": txns, "commit": commit}, nil)
}

func (c *saramaClient) produceTxns(t *testing.T, topic string, txns [][]rec, commit []bool) error {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = topic + "-txid"
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(c.addrs, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	for i, recs := range txns {
		if err := p.BeginTxn(); err != nil {
			return err
		}
		for _, r := range recs {
			m := &sarama.ProducerMessage{Topic: topic, Partition: r.P}
			if r.K != nil {
				m.Key = sarama.StringEncoder(*r.K)
			}
			if r.V != nil {
				m.Value = sarama.StringEncoder(*r.V)
			}
			for _, h := range r.H {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.K), Value: []byte(h.V)})
			}
			if _, _, err := p.SendMessage(m); err != nil {
				return err
			}
		}
		if commit[i] {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			return fmt.Errorf("end transaction %d (commit=%v): %w", i, commit[i], err)
		}
	}
	return nil
}

func (c *confluentClient) produceTxns(t *testing.T, topic string, txns [][]rec, commit []bool) error {
	p, err := kafka.NewProducer(c.conf(kafka.ConfigMap{"transactional.id": topic + "-txid"}))
	if err != nil {
		return err
	}
	defer p.Close()
	ctx := ctxT(t)
	if err := p.InitTransactions(ctx); err != nil {
		return err
	}
	for i, recs := range txns {
		if err := p.BeginTransaction(); err != nil {
			return err
		}
		dr := make(chan kafka.Event, len(recs))
		for _, r := range recs {
			m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.P}}
			if r.K != nil {
				m.Key = []byte(*r.K)
			}
			if r.V != nil {
				m.Value = []byte(*r.V)
			}
			for _, h := range r.H {
				m.Headers = append(m.Headers, kafka.Header{Key: h.K, Value: []byte(h.V)})
			}
			if err := p.Produce(m, dr); err != nil {
				return err
			}
		}
		for range recs {
			if m := (<-dr).(*kafka.Message); m.TopicPartition.Error != nil {
				return m.TopicPartition.Error
			}
		}
		if commit[i] {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			return fmt.Errorf("end transaction %d (commit=%v): %w", i, commit[i], err)
		}
	}
	return nil
}
