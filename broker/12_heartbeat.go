package broker

// Heartbeat v0–v4.
//
// Behavior: keeps a member's session alive. UNKNOWN_MEMBER_ID for unknown
// groups or members (and in Empty), FENCED_INSTANCE_ID for a replaced
// static member, ILLEGAL_GENERATION for a stale generation,
// REBALANCE_IN_PROGRESS while a join phase runs (the client rejoins).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.HeartbeatRequest)
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = b.heartbeat(r)
	return protocol.Reply{Response: resp}
}

func (b *Broker) heartbeat(r *kmsg.HeartbeatRequest) int16 {
	c := b.coord()
	if c == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	g := c.get(r.Group)
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if g.fenced(r.InstanceID, r.MemberID) {
		return kerr.FencedInstanceID.Code
	}
	m := g.members[r.MemberID]
	if m == nil || g.state == stateEmpty {
		return kerr.UnknownMemberID.Code
	}
	if r.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if m.joinCh == nil {
		g.armSession(m)
	}
	if g.state == statePreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}
