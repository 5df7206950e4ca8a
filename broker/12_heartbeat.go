package broker

// Heartbeat v0–v4.
//
// Behavior: keeps a member's session alive. UNKNOWN_MEMBER_ID for unknown
// groups or members (and in Empty), FENCED_INSTANCE_ID for a replaced
// static member, ILLEGAL_GENERATION for a stale generation,
// REBALANCE_IN_PROGRESS while a join phase runs (the client rejoins).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.HeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = b.groups.Heartbeat(r)
	return protocol.Reply{Response: resp}
}
