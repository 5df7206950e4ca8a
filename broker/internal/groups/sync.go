package groups

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup (v0–v5) handles a classic SyncGroup: at once (resp), or
// through wait while the group waits for its leader's assignment (as
// JoinGroup). In CompletingRebalance every member parks until the leader's
// SyncGroup arrives with the assignment; then the group is Stable and every
// member gets its part (an empty assignment if the leader gave none). In
// Stable a member gets its current assignment at once. Errors as Kafka:
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION,
// REBALANCE_IN_PROGRESS (a new join phase began), and since v5
// INCONSISTENT_GROUP_PROTOCOL when the protocol type or name do not match.
func (c *Coordinator) SyncGroup(ctx context.Context, cl Client, r *kmsg.SyncGroupRequest) (resp *kmsg.SyncGroupResponse, wait func() (*kmsg.SyncGroupResponse, error)) {
	errResp := func(code int16) (*kmsg.SyncGroupResponse, func() (*kmsg.SyncGroupResponse, error)) {
		resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	g := c.get(r.Group)
	if g == nil {
		return errResp(kerr.UnknownMemberID.Code)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		return errResp(kerr.CoordinatorNotAvailable.Code)
	}
	if g.fenced(r.InstanceID, r.MemberID) {
		return errResp(kerr.FencedInstanceID.Code)
	}
	m := g.members[r.MemberID]
	if m == nil {
		return errResp(kerr.UnknownMemberID.Code)
	}
	if r.Generation != g.generation {
		return errResp(kerr.IllegalGeneration.Code)
	}
	if (r.ProtocolType != nil && *r.ProtocolType != g.protocolType) || (r.Protocol != nil && *r.Protocol != g.protocol) {
		return errResp(kerr.InconsistentGroupProtocol.Code)
	}
	switch g.state {
	case statePreparingRebalance:
		return errResp(kerr.RebalanceInProgress.Code)
	case stateStable:
		g.armSession(m)
		return g.syncResponse(m, r.Version), nil
	case stateCompletingRebalance:
		g.answerSyncErr(m, kerr.RebalanceInProgress.Code) // duplicate sync
		ch := make(chan *kmsg.SyncGroupResponse, 1)
		m.syncCh, m.syncVersion = ch, r.Version
		if m.id == g.leader {
			assigned := map[string][]byte{}
			for _, a := range r.GroupAssignment {
				assigned[a.MemberID] = a.MemberAssignment
			}
			for id, mm := range g.members {
				mm.assignment = assigned[id]
			}
			g.setState(stateStable)
			for _, mm := range g.members {
				if mm.syncCh != nil {
					mm.syncCh <- g.syncResponse(mm, mm.syncVersion)
					mm.syncCh = nil
				}
				g.armSession(mm)
			}
		}
		return nil, func() (*kmsg.SyncGroupResponse, error) {
			resp, err := awaitGroup(ctx, cl, ch, func() *kmsg.SyncGroupResponse {
				resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
				resp.ErrorCode = kerr.NotCoordinator.Code
				return resp
			})
			if err != nil {
				return nil, err
			}
			return resp, nil
		}
	}
	return errResp(kerr.UnknownMemberID.Code)
}

func (g *group) syncResponse(m *member, version int16) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = version
	pt, p := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &pt, &p
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}
