package broker

// DescribeGroups v0–v6: the group coordinator's
// (groups.Coordinator.DescribeGroups). With the authorizer on, a group
// needs DESCRIBE, else GROUP_AUTHORIZATION_FAILED; authorized operations
// are the principal's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	return protocol.Reply{Response: b.groups.DescribeGroups(r, groupAccess(b.authorizer(req)))}
}
