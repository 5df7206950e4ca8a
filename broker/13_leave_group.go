package broker

// LeaveGroup v0–v5.
//
// Behavior: removes members (v0–v2 one member id; v3+ a batch of members,
// each by member id and/or group.instance.id, with an error per member),
// which starts a rebalance for the remaining members. A member named by
// instance id alone is resolved to the current member with that id; a
// member id that does not match the instance's current member is
// FENCED_INSTANCE_ID; unknown members are UNKNOWN_MEMBER_ID.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleLeaveGroup(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.LeaveGroup(req.Body.(*kmsg.LeaveGroupRequest))}
}
