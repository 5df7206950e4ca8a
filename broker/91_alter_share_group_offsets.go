package broker

// AlterShareGroupOffsets v0 (KIP-932).
//
// Behavior: sets the SPSO of each partition of an empty share group
// (creating the group, as Kafka does); NON_EMPTY_GROUP while it has
// members, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST for an offset
// outside the log, GROUP_ID_NOT_FOUND for a consumer group's ID.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterShareGroupOffsets(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.share.AlterOffsets(req.Body.(*kmsg.AlterShareGroupOffsetsRequest))}
}
