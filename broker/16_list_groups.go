package broker

// ListGroups v0–v5.
//
// Behavior: every group the coordinator knows, including groups that only
// have committed offsets (listed as Empty with no protocol type, as Kafka
// lists groups loaded from __consumer_offsets). KIP-848 groups have type
// "consumer" and their own states (Empty, Assigning, Reconciling, Stable).
// v4 filters by state (case-insensitive), v5 by type.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.ListGroups(req.Body.(*kmsg.ListGroupsRequest))}
}
