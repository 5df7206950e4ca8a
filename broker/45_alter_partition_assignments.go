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
	resp.Topics = b.cl.Reassign(clusterView{b}, r, req.Version < 1 || r.AllowReplicationFactorChange, b.log, func(topic string, p int32, msg string) {
		b.logBad(req, "reassignment refused", "topic", topic, "partition", p, "reason", msg)
	})
	return protocol.Reply{Response: resp}
}

// handleListPartitionReassignments: nothing is ever being reassigned.
func (b *Broker) handleListPartitionReassignments(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	resp.Version = req.Version
	return protocol.Reply{Response: resp}
}
