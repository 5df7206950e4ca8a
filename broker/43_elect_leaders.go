package broker

// ElectLeaders v0–v2.
//
// On a single node every partition already has its one replica, this
// node, as leader, which is also its preferred leader: nothing is ever to
// elect. As Kafka's controller answers that, a named partition gets
// ELECTION_NOT_NEEDED (preferred or unclean alike), an unknown one
// UNKNOWN_TOPIC_OR_PARTITION, and a request for every partition (null
// topics) an empty result, since Kafka lists only the partitions it
// elected or failed to. An election type other than preferred (0) or
// unclean (1) is INVALID_REQUEST.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleElectLeaders(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	resp.Version = req.Version
	if r.ElectionType != 0 && r.ElectionType != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "elect leaders: unknown election type", "type", r.ElectionType)
		return protocol.Reply{Response: resp}
	}
	for _, rt := range r.Topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		for _, p := range rt.Partitions {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = p
			if t == nil || t.partition(p) == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr("The topic or partition does not exist on this broker")
			} else {
				sp.ErrorCode = kerr.ElectionNotNeeded.Code
				sp.ErrorMessage = kmsg.StringPtr("Leader election not needed for topic partition: this node is the only replica and already the leader")
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
