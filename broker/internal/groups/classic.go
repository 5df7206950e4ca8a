package groups

import (
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (g *group) setState(s groupState) {
	g.state = s
	g.stateSince = g.c.now()
}

// fenced reports whether memberID lost its static instance id to a newer
// member (FENCED_INSTANCE_ID), REQUIRES g.mu.
func (g *group) fenced(instanceID *string, memberID string) bool {
	if instanceID == nil || *instanceID == "" {
		return false
	}
	cur, ok := g.static[*instanceID]
	return ok && cur != memberID
}

// armSession (re)starts m's session timer. REQUIRES g.mu.
func (g *group) armSession(m *member) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	id := m.id
	m.expiry = time.AfterFunc(m.session, func() { g.sessionExpired(id, m) })
}

func (g *group) sessionExpired(id string, m *member) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.members[id] != m {
		return
	}
	// A member parked in JoinGroup or SyncGroup is alive by definition.
	if m.joinCh != nil || m.syncCh != nil {
		g.armSession(m)
		return
	}
	g.c.log.Info("group member session expired", "group", g.name, "member", id)
	g.removeMember(m)
}

// removeMember drops m and moves the state machine on. REQUIRES g.mu.
func (g *group) removeMember(m *member) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	g.answerJoinErr(m, kerr.UnknownMemberID.Code)
	g.answerSyncErr(m, kerr.UnknownMemberID.Code)
	delete(g.members, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	switch g.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalance()
	case statePreparingRebalance:
		g.maybeCompleteJoin()
	}
}

func (g *group) answerJoinErr(m *member, code int16) {
	if m.joinCh == nil {
		return
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = m.joinVersion
	resp.ErrorCode = code
	resp.Generation = -1
	resp.MemberID = m.id
	m.joinCh <- resp
	m.joinCh = nil
}

func (g *group) answerSyncErr(m *member, code int16) {
	if m.syncCh == nil {
		return
	}
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = m.syncVersion
	resp.ErrorCode = code
	m.syncCh <- resp
	m.syncCh = nil
}

// rebalanceTimeout is the longest rebalance timeout of any member.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalance)
	}
	return d
}

// prepareRebalance starts a new round: every member must rejoin within the
// rebalance timeout. REQUIRES g.mu.
func (g *group) prepareRebalance() {
	if g.state == stateCompletingRebalance {
		// Assignments of the generation being completed are void.
		for _, m := range g.members {
			m.assignment = nil
			g.answerSyncErr(m, kerr.RebalanceInProgress.Code)
		}
	}
	wasEmpty := g.state == stateEmpty
	g.setState(statePreparingRebalance)
	if g.joinTimer != nil {
		g.joinTimer.Stop()
	}
	delay := g.rebalanceTimeout()
	g.initialDelay = false
	if wasEmpty && g.c.initialDelay > 0 {
		g.initialDelay = true
		delay = min(g.c.initialDelay, delay)
	}
	gen := g.generation
	g.joinTimer = time.AfterFunc(delay, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state == statePreparingRebalance && g.generation == gen {
			g.initialDelay = false
			g.completeJoin()
		}
	})
	g.maybeCompleteJoin()
}

// maybeCompleteJoin completes the join phase early once every known member
// has rejoined and no MEMBER_ID_REQUIRED joiner is outstanding (unless the
// initial delay is still running). REQUIRES g.mu.
func (g *group) maybeCompleteJoin() {
	if g.state != statePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			return
		}
	}
	g.completeJoin()
}

// completeJoin ends the join phase: members that did not rejoin are dropped
// (static members keep their place, as in Kafka), a protocol is chosen and
// every waiting member is answered. REQUIRES g.mu.
func (g *group) completeJoin() {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	for _, m := range g.members {
		if m.joinCh == nil && m.instanceID == "" {
			if m.expiry != nil {
				m.expiry.Stop()
			}
			g.answerSyncErr(m, kerr.UnknownMemberID.Code)
			delete(g.members, m.id)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.setState(stateEmpty)
		return
	}
	g.protocol = g.selectProtocol()
	if _, ok := g.members[g.leader]; !ok {
		g.leader = ""
		for _, id := range g.memberIDs() {
			if g.members[id].joinCh != nil {
				g.leader = id
				break
			}
		}
		if g.leader == "" {
			g.leader = g.memberIDs()[0]
		}
	}
	g.setState(stateCompletingRebalance)
	for _, id := range g.memberIDs() {
		m := g.members[id]
		if m.joinCh == nil {
			continue
		}
		resp := g.joinResponse(m)
		if id == g.leader {
			resp.Members = g.memberList()
		}
		m.joinCh <- resp
		m.joinCh = nil
		g.armSession(m)
	}
}

// memberList is what the leader gets: every member's metadata for the
// chosen protocol. REQUIRES g.mu.
func (g *group) memberList() []kmsg.JoinGroupResponseMember {
	var out []kmsg.JoinGroupResponseMember
	for _, id := range g.memberIDs() {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		if m.instanceID != "" {
			jm.InstanceID = &m.instanceID
		}
		for _, p := range m.protocols {
			if p.Name == g.protocol {
				jm.ProtocolMetadata = p.Metadata
				break
			}
		}
		out = append(out, jm)
	}
	return out
}

func (g *group) joinResponse(m *member) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = m.joinVersion
	resp.Generation = g.generation
	pt, p := g.protocolType, g.protocol
	resp.ProtocolType = &pt
	resp.Protocol = &p
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	return resp
}

func (g *group) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// selectProtocol picks the protocol every member supports that most
// members list first among those candidates (Kafka's vote). REQUIRES g.mu.
func (g *group) selectProtocol() string {
	candidates := g.commonProtocols()
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if candidates[p.Name] {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestN := "", -1
	// Iterate in the first member's preference order for a stable tie break.
	if ids := g.memberIDs(); len(ids) > 0 {
		for _, p := range g.members[ids[0]].protocols {
			if n, ok := votes[p.Name]; ok && n > bestN {
				best, bestN = p.Name, n
			}
		}
	}
	return best
}

// commonProtocols is the set of protocol names every member supports.
func (g *group) commonProtocols() map[string]bool {
	var set map[string]bool
	for _, m := range g.members {
		next := map[string]bool{}
		for _, p := range m.protocols {
			if set == nil || set[p.Name] {
				next[p.Name] = true
			}
		}
		set = next
	}
	return set
}

// supports reports whether a member with these protocols can join: same
// protocol type and at least one protocol in common with everybody else.
// REQUIRES g.mu.
func (g *group) supports(protocolType string, protocols []kmsg.JoinGroupRequestProtocol, except string) bool {
	if len(g.members) == 0 || (len(g.members) == 1 && g.members[except] != nil) {
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range protocols {
		ok := true
		for id, m := range g.members {
			if id == except {
				continue
			}
			found := false
			for _, mp := range m.protocols {
				if mp.Name == p.Name {
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func sameProtocols(a, b []kmsg.JoinGroupRequestProtocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].Metadata) != string(b[i].Metadata) {
			return false
		}
	}
	return true
}
