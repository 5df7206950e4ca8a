package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat (v0–v4) keeps a classic member's session alive.
// UNKNOWN_MEMBER_ID for unknown groups or members (and in Empty),
// FENCED_INSTANCE_ID for a replaced static member, ILLEGAL_GENERATION for a
// stale generation, REBALANCE_IN_PROGRESS while a join phase runs (the
// client rejoins).
func (c *Coordinator) Heartbeat(r *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeat(r)
	return resp
}

func (c *Coordinator) heartbeat(r *kmsg.HeartbeatRequest) int16 {
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

// LeaveGroup (v0–v5) removes classic members (v0–v2 one member id; v3+ a
// batch of members, each by member id and/or group.instance.id, with an
// error per member), which starts a rebalance for the remaining members. A
// member named by instance id alone is resolved to the current member with
// that id; a member id that does not match the instance's current member
// is FENCED_INSTANCE_ID; unknown members are UNKNOWN_MEMBER_ID.
func (c *Coordinator) LeaveGroup(r *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	members := r.Members
	if r.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: r.MemberID}}
	}
	g := c.get(r.Group)
	if g == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		if r.Version >= 3 {
			resp.ErrorCode = 0
			for _, lm := range members {
				resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: lm.MemberID, InstanceID: lm.InstanceID, ErrorCode: kerr.UnknownMemberID.Code})
			}
		}
		return resp
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	for _, lm := range members {
		code := int16(0)
		id := lm.MemberID
		if lm.InstanceID != nil && *lm.InstanceID != "" {
			cur, ok := g.static[*lm.InstanceID]
			switch {
			case !ok:
				code = kerr.UnknownMemberID.Code
			case id != "" && id != cur:
				code = kerr.FencedInstanceID.Code
			default:
				id = cur
			}
		}
		if code == 0 {
			if m := g.members[id]; m != nil {
				g.removeMember(m)
			} else if t, ok := g.pending[id]; ok {
				t.Stop()
				delete(g.pending, id)
				g.maybeCompleteJoin()
			} else {
				code = kerr.UnknownMemberID.Code
			}
		}
		if r.Version < 3 {
			resp.ErrorCode = code
		} else {
			resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: lm.MemberID, InstanceID: lm.InstanceID, ErrorCode: code})
		}
	}
	return resp
}
