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

	"github.com/twmb/franz-go/pkg/kmsg"

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
			var cur *placement
			p := b.partitionOf(rt.Topic, rp.Partition)
			if p != nil {
				cur = p.place.Load()
			}
			code, msg := b.cl.CheckReassignment(cur, rp.Replicas, req.Version < 1 || r.AllowReplicationFactorChange)
			if code != 0 {
				sp.ErrorCode, sp.ErrorMessage = code, &msg
				b.logBad(req, "reassignment refused", "topic", rt.Topic, "partition", rp.Partition, "reason", msg)
			} else if pl := b.cl.Reassigned(cur, rp.Replicas); b.changePlacement(p, pl) {
				b.log.Info("partition reassigned", "topic", p.topic.name, "partition", p.index, "replicas", rp.Replicas, "leader", pl.Leader)
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

// handleListPartitionReassignments: nothing is ever being reassigned.
func (b *Broker) handleListPartitionReassignments(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	resp.Version = req.Version
	return protocol.Reply{Response: resp}
}
