package broker

// DescribeShareGroupOffsets v0–v1 (KIP-932).
//
// Behavior: per group, the share-partition start offset (SPSO) of each
// requested partition (-1 where the group has none), or of every
// partition with state when Topics is null; v1 adds the lag.
// GROUP_ID_NOT_FOUND for an unknown group or a consumer group's ID.
// With the authorizer on a group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED)
// and topics the principal may not DESCRIBE are left out.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeShareGroupOffsets(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	az := b.authorizer(req)
	for i := range r.Groups {
		if !az.group(opDescribe, r.Groups[i].GroupID) {
			g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			g.GroupID, g.ErrorCode = r.Groups[i].GroupID, errGroupAuth
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g := b.share.DescribeOffsets(req.Version, &r.Groups[i])
		kept := g.Topics[:0]
		for _, t := range g.Topics {
			if az.topicVisible(opDescribe, t.Topic) {
				kept = append(kept, t)
			}
		}
		g.Topics = kept
		resp.Groups = append(resp.Groups, g)
	}
	return protocol.Reply{Response: resp}
}
