package groups

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RefuseJoin answers a JoinGroup naming a group ID the share coordinator
// holds (one namespace of group IDs): GROUP_ID_NOT_FOUND, as Kafka.
func RefuseJoin(r *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode, resp.Generation = kerr.GroupIDNotFound.Code, -1
	return resp
}

// JoinGroup (v0–v9) handles a classic JoinGroup. It answers at once (resp)
// or, when the member must wait for the join phase to end, returns wait,
// which blocks until the answer is ready, ctx ends or the client drains.
//   - A session timeout outside group.min.session.timeout.ms and
//     group.max.session.timeout.ms (Settings) is INVALID_SESSION_TIMEOUT.
//   - An empty member id from a v4+ client without a group.instance.id is
//     answered with MEMBER_ID_REQUIRED and a fresh id to rejoin with (the id
//     is pending until it rejoins or its session timeout passes).
//   - A new or changed member starts a rebalance; the answer waits until
//     every known member has rejoined or the rebalance timeout passes
//     (members that did not rejoin are dropped). The first rebalance of an
//     Empty group waits group.initial.rebalance.delay.ms
//     (Config.InitialRebalanceDelay).
//   - A known member rejoining a Stable group with unchanged protocols (and
//     not the leader) gets the current generation back without a rebalance.
//   - Static members (group.instance.id): a rejoin with an unknown member id
//     replaces the old id, which is fenced from then on
//     (FENCED_INSTANCE_ID); if the group is Stable and the protocol the
//     group would select is unchanged, no rebalance happens and the member
//     gets its old assignment from SyncGroup.
//   - The protocol is chosen by vote among the protocols every member
//     supports; INCONSISTENT_GROUP_PROTOCOL if a joiner has none in common.
//
// Version notes: v1 adds the rebalance timeout (v0 uses the session
// timeout), v5 the instance id, v7 the protocol type in the answer, v9
// SkipAssignment (always false here: the leader always assigns).
func (c *Coordinator) JoinGroup(ctx context.Context, cl Client, r *kmsg.JoinGroupRequest) (resp *kmsg.JoinGroupResponse, wait func() (*kmsg.JoinGroupResponse, error)) {
	errResp := func(code int16, memberID string) (*kmsg.JoinGroupResponse, func() (*kmsg.JoinGroupResponse, error)) {
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = code
		resp.Generation = -1
		resp.MemberID = memberID
		return resp, nil
	}
	if r.Group == "" {
		return errResp(kerr.InvalidGroupID.Code, r.MemberID)
	}
	session := time.Duration(r.SessionTimeoutMillis) * time.Millisecond
	if session < c.minSession || session > c.maxSession {
		return errResp(kerr.InvalidSessionTimeout.Code, r.MemberID)
	}
	rebalance := time.Duration(r.RebalanceTimeoutMillis) * time.Millisecond
	if r.Version == 0 || rebalance <= 0 {
		rebalance = session
	}
	if r.ProtocolType == "" || len(r.Protocols) == 0 {
		return errResp(kerr.InconsistentGroupProtocol.Code, r.MemberID)
	}
	instanceID := ""
	if r.InstanceID != nil {
		instanceID = *r.InstanceID
	}
	var g *group
	if r.MemberID == "" {
		g = c.getOrCreate(r.Group)
	} else if g = c.get(r.Group); g == nil {
		return errResp(kerr.UnknownMemberID.Code, r.MemberID)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		return errResp(kerr.CoordinatorNotAvailable.Code, r.MemberID)
	}
	if g.isConsumer() {
		return errResp(kerr.InconsistentGroupProtocol.Code, r.MemberID)
	}
	clientID, host := cl.ID, cl.Host

	var m *member
	switch {
	case r.MemberID == "" && instanceID != "" && g.static[instanceID] != "":
		// A static member restarting: take over the old member's place.
		old := g.members[g.static[instanceID]]
		if !g.supports(r.ProtocolType, r.Protocols, old.id) {
			return errResp(kerr.InconsistentGroupProtocol.Code, "")
		}
		prevLeader := g.leader
		g.answerJoinErr(old, kerr.FencedInstanceID.Code)
		g.answerSyncErr(old, kerr.FencedInstanceID.Code)
		if old.expiry != nil {
			old.expiry.Stop()
		}
		delete(g.members, old.id)
		m = old
		m.id = newMemberID(instanceID)
		g.members[m.id] = m
		g.static[instanceID] = m.id
		if g.leader == old.id {
			g.leader = m.id
		}
		m.clientID, m.host, m.session, m.rebalance = clientID, host, session, rebalance
		m.joinVersion = r.Version
		m.protocols = r.Protocols
		if g.state == stateStable && g.selectProtocol() == g.protocol {
			// KIP-345: no rebalance; the member syncs to get its old
			// assignment. A Stable group would not broadcast a new plan,
			// so a returning leader must not assign: v9+ says so with
			// SkipAssignment (KIP-814); older versions get the previous
			// leader id, which no longer matches the member's, as Kafka
			// does.
			resp := g.joinResponse(m)
			resp.Version = r.Version
			if r.Version >= 9 {
				if m.id == g.leader {
					resp.Members = g.memberList()
					resp.SkipAssignment = true
				}
			} else {
				resp.LeaderID = prevLeader
			}
			g.armSession(m)
			return resp, nil
		}
		wait := g.parkJoin(ctx, cl, m, r)
		if g.state == statePreparingRebalance {
			g.maybeCompleteJoin()
		} else {
			// CompletingRebalance: the leader may be assigning to the
			// old member id; Stable with a different protocol choice.
			g.prepareRebalance()
		}
		return nil, wait

	case r.MemberID == "":
		if !g.supports(r.ProtocolType, r.Protocols, "") {
			return errResp(kerr.InconsistentGroupProtocol.Code, "")
		}
		id := newMemberID(clientID)
		if r.Version >= 4 && instanceID == "" {
			// KIP-394: hand out the id and wait for the rejoin with it.
			g.pending[id] = time.AfterFunc(session, func() {
				g.mu.Lock()
				defer g.mu.Unlock()
				if _, ok := g.pending[id]; ok {
					delete(g.pending, id)
					g.maybeCompleteJoin()
				}
			})
			return errResp(kerr.MemberIDRequired.Code, id)
		}
		if instanceID != "" {
			id = newMemberID(instanceID) // Kafka: static ids start with the instance id
		}
		m = &member{id: id, instanceID: instanceID}
		return g.addMember(ctx, cl, m, r, clientID, host, session, rebalance)

	default:
		if g.fenced(r.InstanceID, r.MemberID) {
			return errResp(kerr.FencedInstanceID.Code, r.MemberID)
		}
		if t, ok := g.pending[r.MemberID]; ok {
			t.Stop()
			delete(g.pending, r.MemberID)
			if !g.supports(r.ProtocolType, r.Protocols, "") {
				g.maybeCompleteJoin()
				return errResp(kerr.InconsistentGroupProtocol.Code, r.MemberID)
			}
			m = &member{id: r.MemberID, instanceID: instanceID}
			return g.addMember(ctx, cl, m, r, clientID, host, session, rebalance)
		}
		m = g.members[r.MemberID]
		if m == nil {
			return errResp(kerr.UnknownMemberID.Code, r.MemberID)
		}
		if !g.supports(r.ProtocolType, r.Protocols, m.id) {
			return errResp(kerr.InconsistentGroupProtocol.Code, r.MemberID)
		}
		m.clientID, m.host, m.session, m.rebalance = clientID, host, session, rebalance
		unchanged := sameProtocols(m.protocols, r.Protocols)
		switch g.state {
		case stateCompletingRebalance, stateStable:
			if unchanged && (g.state == stateCompletingRebalance || m.id != g.leader) {
				// Nothing changed: answer with the current generation.
				resp := g.joinResponse(m)
				resp.Version = r.Version
				if m.id == g.leader {
					resp.Members = g.memberList()
				}
				g.armSession(m)
				return resp, nil
			}
			m.protocols = r.Protocols
			wait := g.parkJoin(ctx, cl, m, r)
			g.prepareRebalance()
			return nil, wait
		case statePreparingRebalance:
			m.protocols = r.Protocols
			wait := g.parkJoin(ctx, cl, m, r)
			g.maybeCompleteJoin()
			return nil, wait
		default: // Empty: a known member id cannot exist here
			return errResp(kerr.UnknownMemberID.Code, r.MemberID)
		}
	}
}

// addMember adds a new member and triggers (or joins) a rebalance.
// REQUIRES g.mu.
func (g *group) addMember(ctx context.Context, cl Client, m *member, r *kmsg.JoinGroupRequest, clientID, host string, session, rebalance time.Duration) (*kmsg.JoinGroupResponse, func() (*kmsg.JoinGroupResponse, error)) {
	m.clientID, m.host, m.session, m.rebalance = clientID, host, session, rebalance
	m.protocolType, m.protocols = r.ProtocolType, r.Protocols
	if len(g.members) == 0 {
		g.protocolType = r.ProtocolType
	}
	g.members[m.id] = m
	if m.instanceID != "" {
		g.static[m.instanceID] = m.id
	}
	wait := g.parkJoin(ctx, cl, m, r)
	switch g.state {
	case stateEmpty, stateStable, stateCompletingRebalance:
		g.prepareRebalance()
	case statePreparingRebalance:
		if g.initialDelay {
			// Kafka's InitialDelayedJoin: each new member extends the
			// delay, up to the rebalance timeout.
			g.joinTimer.Reset(min(g.c.initialDelay, g.rebalanceTimeout()))
		}
		g.maybeCompleteJoin()
	}
	return nil, wait
}

// parkJoin registers m as waiting in JoinGroup and returns the wait that
// delivers the response when the join phase completes. REQUIRES g.mu.
func (g *group) parkJoin(ctx context.Context, cl Client, m *member, r *kmsg.JoinGroupRequest) func() (*kmsg.JoinGroupResponse, error) {
	// A duplicate join (a client that gave up on its earlier one) replaces
	// it; the earlier request is told to retry rather than left hanging.
	g.answerJoinErr(m, kerr.RebalanceInProgress.Code)
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	m.joinCh = ch
	m.joinVersion = r.Version
	if m.expiry != nil {
		m.expiry.Stop()
	}
	return func() (*kmsg.JoinGroupResponse, error) {
		resp, err := awaitGroup(ctx, cl, ch, func() *kmsg.JoinGroupResponse {
			resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
			resp.ErrorCode, resp.Generation, resp.MemberID = kerr.NotCoordinator.Code, -1, m.id
			return resp
		})
		if err != nil {
			return nil, err
		}
		resp.Version = r.Version
		return resp, nil
	}
}

// awaitGroup waits for a parked JoinGroup/SyncGroup answer. If the
// connection goes away the writer stops waiting (the member stays parked,
// as in Kafka, until the round completes); on a graceful shutdown the
// client is told NOT_COORDINATOR so it looks for the coordinator again.
func awaitGroup[T any](ctx context.Context, cl Client, ch <-chan T, onDrain func() T) (T, error) {
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	case <-cl.Draining:
		return onDrain(), nil
	}
}
