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
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListGroupsRequest)
	resp := b.groups.ListGroups(r)
	resp.Groups = append(resp.Groups, b.share.ListGroups(r)...) // share groups (share.go)
	if az := b.authorizer(req); az != nil && !az.visible(opDescribe, kmsg.ACLResourceTypeCluster, clusterName) {
		kept := resp.Groups[:0]
		for _, g := range resp.Groups {
			if az.visible(opDescribe, kmsg.ACLResourceTypeGroup, g.Group) {
				kept = append(kept, g)
			}
		}
		resp.Groups = kept
	}
	// Each node lists the groups it coordinates; admin clients ask them
	// all.
	if node, routed := b.reqNode(req); routed {
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return b.cl.Coordinator(coordGroup, g.Group) != node
		})
	}
	return protocol.Reply{Response: resp}
}
