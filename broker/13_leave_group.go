package broker

// LeaveGroup v0–v5: the group coordinator's (groups.Coordinator.LeaveGroup).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleLeaveGroup(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.LeaveGroup(req.Body.(*kmsg.LeaveGroupRequest))}
}
