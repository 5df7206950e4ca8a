package broker

// OffsetDelete v0.
//
// Behavior: deletes a group's committed offsets for some partitions.
// GROUP_ID_NOT_FOUND for an unknown group. While the group has members,
// partitions of topics the members subscribe to (consumer protocol
// metadata) get GROUP_SUBSCRIBED_TO_TOPIC; a non-empty group that does not
// use the consumer protocol gets NON_EMPTY_GROUP. Unknown topics get
// UNKNOWN_TOPIC_OR_PARTITION.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetDelete(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.OffsetDelete(req.Body.(*kmsg.OffsetDeleteRequest))}
}
