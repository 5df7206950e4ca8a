package broker

// DeleteGroups v0–v2.
//
// Behavior: deletes groups that have no members, with their committed
// offsets. NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for a
// group that has neither members nor offsets. With the authorizer on a
// group needs DELETE (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	az := b.authorizer(req)
	for _, name := range r.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = name
		if !az.group(opDelete, name) {
			rg.ErrorCode = errGroupAuth
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.ErrorCode = b.groups.DeleteGroup(name)
		if b.share.Exists(name) {
			rg.ErrorCode = b.share.Delete(name) // a share group (share.go)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return protocol.Reply{Response: resp}
}
