package broker

// ConsumerGroupDescribe v0–v1 (KIP-848).
//
// Behavior: epochs, assignor, state (Empty, Assigning, Reconciling,
// Stable) and members with their current and target assignments.
// GROUP_ID_NOT_FOUND for unknown groups and for classic groups with
// members. With the authorizer on a group needs DESCRIBE
// (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleConsumerGroupDescribe(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ConsumerGroupDescribeRequest)
	return protocol.Reply{Response: b.groups.ConsumerGroupDescribe(r, groupAccess(b.authorizer(req)))}
}
