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
//
// With the authorizer on, as Kafka: a group needs DESCRIBE
// (GROUP_AUTHORIZATION_FAILED, per group from v8); a named topic the
// principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED in its
// partitions, and a fetch of all offsets leaves such topics out.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetFetch(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	az := b.authorizer(req)
	if req.Version < 8 && !az.group(opDescribe, r.Group) {
		return protocol.Reply{Response: errorResponse(r, errGroupAuth)}
	}
	return protocol.Reply{Response: b.groups.OffsetFetch(r, groupAccess(az))}
}
