package minikafka

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions and producer state, as kafka-transactions.sh shows them,
// without a Kafka client: the broker's own DescribeTransactions,
// ListTransactions and DescribeProducers answers, asked in process.

// Transaction is one transactional ID's state. State is Kafka's name
// (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
// CompleteAbort); StartMs is set while a transaction is open; Partitions
// are those of the open transaction, by topic.
type Transaction struct {
	ID         string             `json:"transactional_id"`
	ProducerID int64              `json:"producer_id"`
	Epoch      int16              `json:"producer_epoch"`
	State      string             `json:"state"`
	TimeoutMs  int32              `json:"timeout_ms"`
	StartMs    int64              `json:"start_ms"`
	Partitions map[string][]int32 `json:"partitions"`
}

// ErrUnknownTransaction is returned for a transactional ID the broker
// does not know.
var ErrUnknownTransaction = kerr.TransactionalIDNotFound

// Transaction reports one transactional ID.
func (b *Broker) Transaction(ctx context.Context, id string) (Transaction, error) {
	txns, err := b.describeTransactions(ctx, []string{id})
	if err != nil {
		return Transaction{}, err
	}
	return txns[0], nil
}

// Transactions lists every transactional ID with its state, sorted.
func (b *Broker) Transactions(ctx context.Context) ([]Transaction, error) {
	resp, err := b.do(ctx, kmsg.NewPtrListTransactionsRequest())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range resp.(*kmsg.ListTransactionsResponse).TransactionStates {
		ids = append(ids, s.TransactionalID)
	}
	if len(ids) == 0 {
		return []Transaction{}, nil
	}
	sort.Strings(ids)
	return b.describeTransactions(ctx, ids)
}

func (b *Broker) describeTransactions(ctx context.Context, ids []string) ([]Transaction, error) {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = ids
	resp, err := b.do(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []Transaction
	for _, s := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
		if err := kerr.ErrorForCode(s.ErrorCode); err != nil {
			return nil, fmt.Errorf("transactional id %q: %w", s.TransactionalID, err)
		}
		t := Transaction{ID: s.TransactionalID, ProducerID: s.ProducerID, Epoch: s.ProducerEpoch, State: s.State,
			TimeoutMs: s.TimeoutMillis, StartMs: s.StartTimestamp, Partitions: map[string][]int32{}}
		for _, tp := range s.Topics {
			t.Partitions[tp.Topic] = append(t.Partitions[tp.Topic], tp.Partitions...)
		}
		out = append(out, t)
	}
	return out, nil
}

// Producer is one producer's idempotence state on a partition;
// TxnStartOffset is the first offset of its open transaction there, -1 if
// none.
type Producer struct {
	ProducerID      int64 `json:"producer_id"`
	Epoch           int32 `json:"producer_epoch"`
	LastSequence    int32 `json:"last_sequence"`
	LastTimestampMs int64 `json:"last_timestamp_ms"`
	TxnStartOffset  int64 `json:"txn_start_offset"`
}

// Producers lists the producers a partition holds state for, by ID.
func (b *Broker) Producers(ctx context.Context, topic string, partition int32) ([]Producer, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{partition}
	req.Topics = append(req.Topics, rt)
	resp, err := b.do(ctx, req)
	if err != nil {
		return nil, err
	}
	p := resp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("%s/%d: %w", topic, partition, err)
	}
	out := []Producer{}
	for _, ap := range p.ActiveProducers {
		out = append(out, Producer{ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp, ap.CurrentTxnStartOffset})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out, nil
}

// WaitTransaction returns once the transactional ID has no transaction
// open or being completed (its state is Empty, CompleteCommit or
// CompleteAbort): its producer committed or aborted, or the broker
// aborted it on timeout.
func (b *Broker) WaitTransaction(ctx context.Context, id string) error {
	return b.waitFor(ctx, "transaction "+id+" complete", func() (bool, string) {
		t, err := b.Transaction(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		switch t.State {
		case "Empty", "CompleteCommit", "CompleteAbort":
			return true, t.State
		}
		return false, t.State
	})
}
