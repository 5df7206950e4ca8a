package broker

// OffsetFetch v0–v10.
//
// Behavior: returns committed offsets (-1 and an empty metadata string for
// partitions without one). Null topics (v2+) mean every committed offset
// of the group. v8+ batches several groups. RequireStable (v7+) answers
// UNSTABLE_OFFSET_COMMIT for a partition while an open transaction holds
// an offset for it (the transaction coordinator says which). v9 names the member and its epoch for KIP-848 groups:
// UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH (the current or previous epoch
// passes). v10 names topics by id: a requested id no topic has answers its
// partitions with UNKNOWN_TOPIC_ID; a fetch of all offsets lists topics by
// their current id and leaves out offsets of a name no topic has now.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetFetch(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.OffsetFetch(req.Body.(*kmsg.OffsetFetchRequest))}
}
