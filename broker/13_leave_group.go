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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleLeaveGroup(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.LeaveGroupRequest)
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	members := r.Members
	if r.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: r.MemberID}}
	}
	c := b.coord()
	var g *group
	if c != nil {
		g = c.get(r.Group)
	}
	if g == nil {
		if c == nil {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		} else {
			resp.ErrorCode = kerr.UnknownMemberID.Code
		}
		if r.Version >= 3 {
			resp.ErrorCode = 0
			for _, lm := range members {
				resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: lm.MemberID, InstanceID: lm.InstanceID, ErrorCode: kerr.UnknownMemberID.Code})
			}
		}
		return protocol.Reply{Response: resp}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Response: resp}
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
	return protocol.Reply{Response: resp}
}
