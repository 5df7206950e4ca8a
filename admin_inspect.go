package minikafka

import (
	"context"
	"errors"
	"net/http"

	"github.com/minikafka/minikafka/broker"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Inspection and waits over the control API (docs/control-api.md):
// the Go methods of inspect.go as JSON.

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"GET /v1/topics/{topic}/partitions/{partition}", adminPartition},
		adminRoute{"GET /v1/groups/{group}", adminGroup},
		adminRoute{"GET /v1/groups/{group}/lag/{topic}", adminGroupLag},
		adminRoute{"POST /v1/wait/high-watermark", adminWaitHighWatermark},
	)
}

type partitionJSON struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	LogStart      int64  `json:"log_start_offset"`
	HighWatermark int64  `json:"high_watermark"`
	LastStable    int64  `json:"last_stable_offset"`
}

func adminPartition(b *Broker, r *http.Request) (any, error) {
	p, err := pathPartition(r)
	if err != nil {
		return nil, err
	}
	topic := r.PathValue("topic")
	po, err := b.PartitionOffsets(topic, p)
	if errors.Is(err, broker.ErrUnknownPartition) {
		return nil, notFound("unknown topic or partition %s/%d", topic, p)
	}
	if err != nil {
		return nil, err
	}
	return partitionJSON{topic, p, po.LogStart, po.HighWatermark, po.LastStable}, nil
}

type offsetJSON struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata"`
	CommitMs    int64  `json:"commit_ms"`
}

type groupJSON struct {
	Group   string       `json:"group"`
	Known   bool         `json:"in_memory"` // false: only committed offsets (after a restart, say)
	Type    string       `json:"type,omitempty"`
	State   string       `json:"state,omitempty"`
	Epoch   int32        `json:"epoch"`
	Members int          `json:"members"`
	Pending int          `json:"pending"`
	Offsets []offsetJSON `json:"offsets"`
	// MemberList is every member with its assignment (GroupMembers).
	MemberList []GroupMember `json:"member_list"`
}

func adminGroup(b *Broker, r *http.Request) (any, error) {
	name := r.PathValue("group")
	g, ok := b.GroupState(name)
	offs := b.GroupOffsets(name)
	if !ok && len(offs) == 0 {
		return nil, notFound("unknown group %q", name)
	}
	members, err := b.GroupMembers(r.Context(), name)
	if err != nil {
		return nil, err
	}
	out := groupJSON{Group: name, Known: ok, Type: g.Type, State: g.State, Epoch: g.Epoch, Members: g.Members, Pending: g.Pending,
		Offsets: []offsetJSON{}, MemberList: members}
	for _, o := range offs {
		out.Offsets = append(out.Offsets, offsetJSON{o.Topic, o.Partition, o.Offset, o.LeaderEpoch, o.Metadata, o.CommitMs})
	}
	return out, nil
}

type lagJSON struct {
	Partition     int32 `json:"partition"`
	Committed     int64 `json:"committed"`
	HighWatermark int64 `json:"high_watermark"`
	Lag           int64 `json:"lag"`
}

func adminGroupLag(b *Broker, r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	lags, err := b.GroupLag(r.PathValue("group"), topic)
	if errors.Is(err, broker.ErrUnknownPartition) {
		return nil, notFound("unknown topic %q", topic)
	}
	if err != nil {
		return nil, err
	}
	out := struct {
		Topic      string    `json:"topic"`
		Total      int64     `json:"total_lag"`
		Partitions []lagJSON `json:"partitions"`
	}{Topic: topic, Partitions: []lagJSON{}}
	for _, l := range lags {
		out.Total += l.Lag
		out.Partitions = append(out.Partitions, lagJSON{l.Partition, l.Committed, l.HighWatermark, l.Lag})
	}
	return out, nil
}

func adminWaitHighWatermark(b *Broker, r *http.Request) (any, error) {
	var in struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		TimeoutMs int64  `json:"timeout_ms"`
	}
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	if in.Topic == "" || in.Partition < 0 {
		return nil, badRequest("want topic, partition >= 0 and 0 < timeout_ms <= %d", maxAdminWait.Milliseconds())
	}
	return waitBody(r, in.TimeoutMs, func(ctx context.Context) error {
		return b.WaitHighWatermark(ctx, in.Topic, in.Partition, in.Offset)
	})
}

// Transactions, producers and the transaction wait over the control API
// (docs/control-api.md): inspect.go's transactions and producers as JSON.

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
