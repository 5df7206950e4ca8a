package broker

// AlterPartitionReassignments v0–v1 and ListPartitionReassignments v0.
//
// Over the simulated cluster (cluster.go) the data is stored once, so a
// reassignment is complete as soon as it is accepted: the partition's
// replicas become the target, its ISR the target's running nodes, and
// its leader stays if it is one of them (else the first, with a new
// epoch). No reassignment is ever in progress. Everything else is refused
// as Kafka's controller refuses it: an unknown partition
// UNKNOWN_TOPIC_OR_PARTITION; a cancellation (null replicas)
// NO_REASSIGNMENT_IN_PROGRESS; an empty list, a duplicate or an unknown
// broker INVALID_REPLICA_ASSIGNMENT; a different replica count on v1
// without AllowReplicationFactorChange INVALID_REPLICATION_FACTOR.

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterPartitionAssignments(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.Version = req.Version
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rt := range r.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		changed := false
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			code, msg := b.checkReassignment(t, rp, req.Version < 1 || r.AllowReplicationFactorChange)
			if code != 0 {
				sp.ErrorCode, sp.ErrorMessage = code, &msg
				b.logBad(req, "reassignment refused", "topic", rt.Topic, "partition", rp.Partition, "reason", msg)
			} else if b.reassignLocked(t.partition(rp.Partition), rp.Replicas) {
				changed = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		if changed {
			if err := b.persistPlacementLocked(t); err != nil {
				b.log.Error("persisting reassignment", "err", err)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}

// checkReassignment is the code and message for one partition's target
// replicas.
func (b *Broker) checkReassignment(t *topic, rp kmsg.AlterPartitionAssignmentsRequestTopicPartition, allowRFChange bool) (int16, string) {
	if t == nil || t.partition(rp.Partition) == nil {
		return kerr.UnknownTopicOrPartition.Code, "This server does not host this topic-partition."
	}
	if rp.Replicas == nil {
		return kerr.NoReassignmentInProgress.Code, "No ongoing reassignment for this partition."
	}
	if len(rp.Replicas) == 0 {
		return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."
	}
	if cur := len(t.partition(rp.Partition).place.Load().Replicas); len(rp.Replicas) != cur && !allowRFChange {
		return kerr.InvalidReplicationFactor.Code, fmt.Sprintf("The replication factor is changed from %d to %d, and the request does not allow replication factor changes.", cur, len(rp.Replicas))
	}
	seen := map[int32]bool{}
	for _, id := range rp.Replicas {
		if seen[id] {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
		seen[id] = true
		if b.cl.Index(id) < 0 {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
	}
	return 0, ""
}

// handleListPartitionReassignments: nothing is ever being reassigned.
func (b *Broker) handleListPartitionReassignments(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	resp.Version = req.Version
	return protocol.Reply{Response: resp}
}

// reassignLocked moves p to replicas at once (the data is shared); the
// caller holds adminMu and persists the topic when it reports a change.
func (b *Broker) reassignLocked(p *partition, replicas []int32) bool {
	cur := p.place.Load()
	pl := cur.Clone()
	pl.Replicas = slices.Clone(replicas)
	pl.ISR = cluster.InOrder(replicas, b.cl.IsUp)
	if !pl.InISR(pl.Leader) {
		pl.Leader = -1
		if len(pl.ISR) > 0 {
			pl.Leader = pl.ISR[0]
		}
	}
	if b.changePlacement(p, pl) {
		b.log.Info("partition reassigned", "topic", p.topic.name, "partition", p.index, "replicas", replicas, "leader", pl.Leader)
		return true
	}
	return false
}
