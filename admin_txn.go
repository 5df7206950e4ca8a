package minikafka

import (
	"context"
	"errors"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Transactions, producers and the transaction wait over the control API
// (docs/control-api.md): inspect_txn.go as JSON.

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"GET /v1/transactions", adminTransactions},
		adminRoute{"GET /v1/transactions/{id}", adminTransaction},
		adminRoute{"GET /v1/topics/{topic}/partitions/{partition}/producers", adminProducers},
		adminRoute{"POST /v1/wait/transaction", adminWaitTransaction},
	)
}

func adminTransactions(b *Broker, r *http.Request) (any, error) {
	txns, err := b.Transactions(r.Context())
	if err != nil {
		return nil, err
	}
	return map[string]any{"transactions": txns}, nil
}

func adminTransaction(b *Broker, r *http.Request) (any, error) {
	t, err := b.Transaction(r.Context(), r.PathValue("id"))
	if errors.Is(err, kerr.TransactionalIDNotFound) {
		return nil, notFound("unknown transactional id %q", r.PathValue("id"))
	}
	return t, err
}

func adminProducers(b *Broker, r *http.Request) (any, error) {
	p, err := pathPartition(r)
	if err != nil {
		return nil, err
	}
	topic := r.PathValue("topic")
	ps, err := b.Producers(r.Context(), topic, p)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, notFound("unknown topic or partition %s/%d", topic, p)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"topic": topic, "partition": p, "producers": ps}, nil
}

func adminWaitTransaction(b *Broker, r *http.Request) (any, error) {
	var in struct {
		ID        string `json:"transactional_id"`
		TimeoutMs int64  `json:"timeout_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.ID == "" {
		return nil, badRequest("want transactional_id")
	}
	return waitBody(r, in.TimeoutMs, func(ctx context.Context) error { return b.WaitTransaction(ctx, in.ID) })
}
