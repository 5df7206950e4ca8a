package minikafka

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/minikafka/minikafka/broker"
)

// The control API's cluster endpoints (docs/control-api.md): cluster.go's
// methods as JSON.

func init() {
	adminRoutes = append(adminRoutes,
		adminRoute{"GET /v1/cluster", adminCluster},
		adminRoute{"POST /v1/cluster/nodes/{id}/stop", adminNodeAction((*Broker).StopNode)},
		adminRoute{"POST /v1/cluster/nodes/{id}/start", adminNodeAction((*Broker).StartNode)},
		adminRoute{"POST /v1/cluster/move-leader", adminMoveLeader},
		adminRoute{"POST /v1/cluster/move-coordinator", adminMoveCoordinator},
		adminRoute{"POST /v1/cluster/isr", adminSetISR},
		adminRoute{"GET /v1/cluster/placement", adminPlacement},
	)
}

func adminCluster(b *Broker, _ *http.Request) (any, error) {
	return map[string]any{"nodes": b.Nodes()}, nil
}

func nodeParam(r *http.Request) (int32, error) {
	var id int32
	if err := parseInt32(r.PathValue("id"), &id); err != nil {
		return 0, badRequest("node id %q: %v", r.PathValue("id"), err)
	}
	return id, nil
}

func clusterErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, broker.ErrUnknownNode) {
		return notFound("%v", err)
	}
	return badRequest("%v", err)
}

// adminNodeAction runs act (StopNode, StartNode) on the node the path
// names and answers with every node's state.
func adminNodeAction(act func(*Broker, int32) error) func(*Broker, *http.Request) (any, error) {
	return func(b *Broker, r *http.Request) (any, error) {
		id, err := nodeParam(r)
		if err != nil {
			return nil, err
		}
		if err := act(b, id); err != nil {
			return nil, clusterErr(err)
		}
		return map[string]any{"nodes": b.Nodes()}, nil
	}
}

// placementJSON is a partition's placement in the control API.
type placementJSON struct {
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
}

func (b *Broker) placementAnswer(topic string, partition int32) (any, error) {
	pl, err := b.Placement(topic, partition)
	if err != nil {
		return nil, notFound("%v", err)
	}
	return placementJSON{Topic: topic, Partition: partition, Replicas: pl.Replicas, ISR: pl.ISR, Leader: pl.Leader, LeaderEpoch: pl.LeaderEpoch}, nil
}

func adminMoveLeader(b *Broker, r *http.Request) (any, error) {
	var j struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Node      *int32 `json:"node"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.Topic == "" || j.Node == nil {
		return nil, badRequest("topic and node are required")
	}
	if err := b.MoveLeader(j.Topic, j.Partition, *j.Node); err != nil {
		return nil, clusterErr(err)
	}
	return b.placementAnswer(j.Topic, j.Partition)
}

func adminSetISR(b *Broker, r *http.Request) (any, error) {
	var j struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		ISR       []int32 `json:"isr"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	if j.Topic == "" || j.ISR == nil {
		return nil, badRequest("topic and isr are required")
	}
	if err := b.SetISR(j.Topic, j.Partition, j.ISR...); err != nil {
		return nil, clusterErr(err)
	}
	return b.placementAnswer(j.Topic, j.Partition)
}

func adminMoveCoordinator(b *Broker, r *http.Request) (any, error) {
	var j struct {
		Group           string `json:"group"`
		TransactionalID string `json:"transactional_id"`
		Node            *int32 `json:"node"`
	}
	if err := decodeBody(r, &j); err != nil {
		return nil, err
	}
	kind, key := "group", j.Group
	if j.TransactionalID != "" {
		kind, key = "transaction", j.TransactionalID
	}
	if (j.Group == "") == (j.TransactionalID == "") || j.Node == nil {
		return nil, badRequest("node and one of group or transactional_id are required")
	}
	if err := b.MoveCoordinator(kind, key, *j.Node); err != nil {
		return nil, clusterErr(err)
	}
	node, _ := b.Coordinator(kind, key)
	return map[string]any{"kind": kind, "key": key, "coordinator": node}, nil
}

func adminPlacement(b *Broker, r *http.Request) (any, error) {
	q := r.URL.Query()
	topic := q.Get("topic")
	if topic == "" {
		return nil, badRequest("topic is required")
	}
	var p int32
	if s := q.Get("partition"); s != "" {
		if err := parseInt32(s, &p); err != nil {
			return nil, badRequest("partition %q: %v", s, err)
		}
	}
	return b.placementAnswer(topic, p)
}

func parseInt32(s string, v *int32) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return err
	}
	*v = int32(n)
	return nil
}
