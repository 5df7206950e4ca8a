package broker

// DescribeShareGroupOffsets v0–v1 (KIP-932).
//
// Behavior: per group, the share-partition start offset (SPSO) of each
// requested partition (-1 where the group has none), or of every
// partition with state when Topics is null; v1 adds the lag.
// GROUP_ID_NOT_FOUND for an unknown group or a consumer group's ID.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeShareGroupOffsets(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	for i := range r.Groups {
		resp.Groups = append(resp.Groups, b.share.DescribeOffsets(req.Version, &r.Groups[i]))
	}
	return protocol.Reply{Response: resp}
}
