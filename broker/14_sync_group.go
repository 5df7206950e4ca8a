package broker

// SyncGroup v0–v5.
//
// Behavior: in CompletingRebalance every member parks until the leader's
// SyncGroup arrives with the assignment; then the group is Stable and every
// member gets its part (an empty assignment if the leader gave none). In
// Stable a member gets its current assignment at once. Errors as Kafka:
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION,
// REBALANCE_IN_PROGRESS (a new join phase began), and since v5
// INCONSISTENT_GROUP_PROTOCOL when the protocol type or name do not match.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleSyncGroup(ctx context.Context, req *protocol.Request) protocol.Reply {
	return groupReply(b.groups.SyncGroup(ctx, groupClient(req), req.Body.(*kmsg.SyncGroupRequest)))
}
