package broker

// DeleteShareGroupOffsets v0 (KIP-932).
//
// Behavior: removes an empty share group's state for each topic;
// NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND for an unknown
// group or a consumer group's ID, UNKNOWN_TOPIC_OR_PARTITION per topic.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteShareGroupOffsets(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.share.DeleteOffsets(req.Body.(*kmsg.DeleteShareGroupOffsetsRequest))}
}
