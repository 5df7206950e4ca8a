package broker

// AlterPartitionReassignments v0–v1 and ListPartitionReassignments v0.
//
// The only broker is this node, so the only replica assignment a
// partition can have is [this node], which it has: reassigning to it is
// accepted and complete at once, and no reassignment is ever in progress.
// Everything else is refused as Kafka's controller refuses it: an unknown
// partition UNKNOWN_TOPIC_OR_PARTITION; a cancellation (null replicas)
// NO_REASSIGNMENT_IN_PROGRESS; an empty list, a duplicate or an unknown
// broker INVALID_REPLICA_ASSIGNMENT; more than one replica on v1 without
// AllowReplicationFactorChange INVALID_REPLICATION_FACTOR (with it, the
// unknown broker is the problem).

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterPartitionAssignments(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.Version = req.Version
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	for _, rt := range r.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			code, msg := b.checkReassignment(t, rp, req.Version < 1 || r.AllowReplicationFactorChange)
			if code != 0 {
				sp.ErrorCode, sp.ErrorMessage = code, &msg
				b.logBad(req, "reassignment refused", "topic", rt.Topic, "partition", rp.Partition, "reason", msg)
			}
			st.Partitions = append(st.Partitions, sp)
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
	if len(rp.Replicas) != 1 && !allowRFChange {
		return kerr.InvalidReplicationFactor.Code, fmt.Sprintf("The replication factor is changed from 1 to %d, and the request does not allow replication factor changes.", len(rp.Replicas))
	}
	seen := map[int32]bool{}
	for _, id := range rp.Replicas {
		if seen[id] {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
		seen[id] = true
		if id != b.cfg.NodeID {
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
