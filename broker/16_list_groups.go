package broker

// ListGroups v0–v5.
//
// Behavior: every group the coordinator knows, including groups that only
// have committed offsets (listed as Empty with no protocol type, as Kafka
// lists groups loaded from __consumer_offsets). KIP-848 groups have type
// "consumer" and their own states (Empty, Assigning, Reconciling, Stable).
// v4 filters by state (case-insensitive), v5 by type. Share groups are
// listed with type "share" (Empty or Stable). With the authorizer on, a
// principal without DESCRIBE on the cluster sees only the groups it may
// DESCRIBE, as Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListGroupsRequest)
	// A principal without DESCRIBE on the cluster sees the groups it may
	// DESCRIBE; each node lists the groups it coordinates (admin clients
	// ask them all).
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
	return protocol.Reply{Response: b.groups.ListGroups(r, b.share.ListGroups(r), keep)} // share groups (share.go)
}
