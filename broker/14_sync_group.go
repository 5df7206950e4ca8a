package broker

// SyncGroup v0–v5: the group coordinator's (groups.Coordinator.SyncGroup);
// a member waiting for its leader's assignment is answered from the
// connection's writer (groupReply).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleSyncGroup(ctx context.Context, req *protocol.Request) protocol.Reply {
	return groupReply(b.groups.SyncGroup(ctx, groupClient(req), req.Body.(*kmsg.SyncGroupRequest)))
}
