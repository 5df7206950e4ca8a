package broker

// ShareGroupDescribe v1 (KIP-932).
//
// Behavior: each group's state (Empty or Stable), epochs, the "simple"
// assignor and its members with their assignments; GROUP_ID_NOT_FOUND
// for an unknown group or one that is not a share group, as Kafka.
// Authorized operations are computed when asked; with the authorizer on a
// group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleShareGroupDescribe(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ShareGroupDescribeRequest)
	resp := b.share.Describe(r)
	az := b.authorizer(req) // nil: everything allowed
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if !az.group(opDescribe, g.GroupID) {
			d := kmsg.NewShareGroupDescribeResponseGroup()
			d.GroupID, d.ErrorCode = g.GroupID, errGroupAuth
			*g = d
			continue
		}
		if g.ErrorCode == 0 {
			g.AuthorizedOperations = az.authorizedOps(r.IncludeAuthorizedOperations, kmsg.ACLResourceTypeGroup, g.GroupID)
		}
	}
	return protocol.Reply{Response: resp}
}
