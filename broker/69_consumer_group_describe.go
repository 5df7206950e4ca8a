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
	resp := b.groups.ConsumerGroupDescribe(r)
	if az := b.authorizer(req); az != nil {
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !az.group(opDescribe, g.Group) {
				d := kmsg.NewConsumerGroupDescribeResponseGroup()
				d.Group, d.ErrorCode = g.Group, errGroupAuth
				*g = d
				continue
			}
			g.AuthorizedOperations = az.authorizedOps(r.IncludeAuthorizedOperations, kmsg.ACLResourceTypeGroup, g.Group)
		}
	}
	return protocol.Reply{Response: resp}
}
