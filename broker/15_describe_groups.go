package broker

// DescribeGroups v0–v6.
//
// Behavior: state, protocol type, chosen protocol and members (with their
// metadata and assignment once Stable) of each group. A group the
// coordinator does not know is described as Dead with no error, as Kafka
// does; a group with only committed offsets is Empty. v3+ returns
// authorized operations only when asked (all operations without the
// authorizer). With it, a group needs DESCRIBE, else
// GROUP_AUTHORIZATION_FAILED.
// v6 reports GROUP_ID_NOT_FOUND for unknown groups (KIP-1043). KIP-848
// consumer groups get GROUP_ID_NOT_FOUND ("not a classic group").

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	return protocol.Reply{Response: b.groups.DescribeGroups(r, groupAccess(b.authorizer(req)))}
}
