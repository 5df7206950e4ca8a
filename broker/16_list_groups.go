package broker

// ListGroups v0–v5: the group coordinator's groups
// (groups.Coordinator.ListGroups), then the share groups with type "share"
// (share.Coordinator.ListGroups). With the authorizer on, a principal
// without DESCRIBE on the cluster sees only the groups it may DESCRIBE, as
// Kafka. In a cluster each node lists the groups it coordinates (admin
// clients ask them all).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListGroupsRequest)
	az := b.authorizer(req)
	filter := az != nil && !az.visible(opDescribe, kmsg.ACLResourceTypeCluster, clusterName)
	node, routed := b.reqNode(req)
	var keep func(string) bool
	if filter || routed {
		keep = func(g string) bool {
			return (!filter || az.visible(opDescribe, kmsg.ACLResourceTypeGroup, g)) &&
				(!routed || b.cl.Coordinator(coordGroup, g) == node)
		}
	}
	return protocol.Reply{Response: b.groups.ListGroups(r, b.share.ListGroups(r), keep)}
}
