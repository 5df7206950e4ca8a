package broker

// DeleteGroups v0–v2: the group coordinator deletes groups without members
// and their committed offsets (groups.Coordinator.DeleteGroups), the share
// coordinator share groups. With the authorizer on a group needs DELETE
// (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	share := func(name string) (int16, bool) { // a share group (share.go)
		if !b.share.Exists(name) {
			return 0, false
		}
		return b.share.Delete(name), true
	}
	return protocol.Reply{Response: b.groups.DeleteGroups(r, groupAccess(b.authorizer(req)), share)}
}
