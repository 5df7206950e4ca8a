package share

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client is who sent a request.
type Client struct{ ID, Host string }

// Heartbeat serves ShareGroupHeartbeat: join (epoch 0), heartbeat, leave
// (epoch -1). Share groups have no revocation step: a member takes the
// group's new assignment, and epoch, on its next heartbeat.
func (c *Coordinator) Heartbeat(cl Client, r *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	fail := func(e *kerr.Error, msg string) *kmsg.ShareGroupHeartbeatResponse {
		resp.ErrorCode, resp.ErrorMessage = e.Code, kmsg.StringPtr(msg)
		return resp
	}
	switch {
	case strings.TrimSpace(r.GroupID) == "":
		return fail(kerr.InvalidRequest, "GroupId can't be empty.")
	case r.MemberID == "" || len(r.MemberID) > 36:
		return fail(kerr.InvalidRequest, "MemberId can't be empty or longer than 36 characters.")
	case r.MemberEpoch < -1:
		return fail(kerr.InvalidRequest, "MemberEpoch is invalid.")
	case r.MemberEpoch == 0 && len(r.SubscribedTopicNames) == 0:
		return fail(kerr.InvalidRequest, "SubscribedTopicNames must be set in first request.")
	case r.RackID != nil && strings.TrimSpace(*r.RackID) == "":
		return fail(kerr.InvalidRequest, "RackId can't be empty.")
	}
	if c.b.OtherGroup(r.GroupID) {
		return fail(kerr.GroupIDNotFound, "Group "+r.GroupID+" is not a share group.")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[r.GroupID]
	resp.HeartbeatIntervalMillis = int32(c.heartbeatInterval(r.GroupID).Milliseconds())
	now := c.cfg.Now()
	var m *member
	switch r.MemberEpoch {
	case -1:
		if g == nil || g.members[r.MemberID] == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		c.leaveMember(g, r.MemberID)
		c.signal()
		resp.MemberID, resp.MemberEpoch = &r.MemberID, -1
		return resp
	case 0:
		if g == nil {
			g = c.getOrCreate(r.GroupID)
		}
		m = g.members[r.MemberID]
		if m == nil {
			if len(g.members) >= c.cfg.MaxGroupSize {
				return fail(kerr.GroupMaxSizeReached, "")
			}
			m = &member{id: r.MemberID}
			g.members[r.MemberID] = m
			g.epoch++
		}
	default:
		if g == nil || g.members[r.MemberID] == nil {
			return fail(kerr.UnknownMemberID, "")
		}
		m = g.members[r.MemberID]
		if r.MemberEpoch != m.epoch {
			return fail(kerr.FencedMemberEpoch, "")
		}
	}
	m.clientID, m.host, m.lastSeen = cl.ID, cl.Host, now
	if r.RackID != nil {
		m.rack = r.RackID
	}
	if r.SubscribedTopicNames != nil {
		subs := slices.Clone(r.SubscribedTopicNames)
		slices.Sort(subs)
		subs = slices.Compact(subs)
		if !slices.Equal(subs, m.subs) {
			m.subs = subs
			g.epoch++
		}
	}
	c.rebalance(g)
	changed := m.epoch != g.epoch
	if changed {
		m.epoch = g.epoch
		m.assigned = g.assignment[m.id]
	}
	resp.MemberID, resp.MemberEpoch = &r.MemberID, m.epoch
	if changed || r.SubscribedTopicNames != nil {
		a := &kmsg.ShareGroupHeartbeatResponseAssignment{}
		for _, id := range sortedIDs(m.assigned) {
			tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = id, m.assigned[id]
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		resp.Assignment = a
	}
	return resp
}

func sortedIDs(m map[[16]byte][]int32) [][16]byte {
	ids := slices.Collect(maps.Keys(m))
	slices.SortFunc(ids, func(a, b [16]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
	return ids
}

// rebalance computes the target assignment with the simple assignor and
// bumps the group epoch when it changed (members, subscriptions or
// partition counts). Kafka's simple assignor for one subscription: with
// fewer members than partitions each partition goes to one member, round
// robin; with more, members share partitions (member i reads partition
// i mod P).
func (c *Coordinator) rebalance(g *group) {
	ids := slices.Sorted(maps.Keys(g.members))
	subsOf := map[string][]string{}
	for _, id := range ids {
		for _, t := range g.members[id].subs {
			subsOf[t] = append(subsOf[t], id)
		}
	}
	next := map[string]map[[16]byte][]int32{}
	for _, t := range slices.Sorted(maps.Keys(subsOf)) {
		tid, ok := c.b.TopicID(t)
		n, ok2 := c.b.PartitionCount(t)
		if !ok || !ok2 || n <= 0 {
			continue
		}
		subs := subsOf[t]
		add := func(m string, p int32) {
			if next[m] == nil {
				next[m] = map[[16]byte][]int32{}
			}
			next[m][tid] = append(next[m][tid], p)
		}
		if len(subs) >= int(n) {
			for i, m := range subs {
				add(m, int32(i)%n)
			}
		} else {
			for p := range n {
				add(subs[int(p)%len(subs)], p)
			}
		}
	}
	if !assignmentsEqual(next, g.assignment) {
		g.assignment = next
		g.epoch++
	}
	g.assignEpoch = g.epoch
	for _, id := range ids {
		if g.assignment[id] == nil {
			g.assignment[id] = map[[16]byte][]int32{}
		}
	}
}

func assignmentsEqual(a, b map[string]map[[16]byte][]int32) bool {
	norm := func(m map[[16]byte][]int32) map[[16]byte][]int32 {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	for k := range a {
		if !maps.EqualFunc(norm(a[k]), norm(b[k]), slices.Equal) {
			return false
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && len(b[k]) > 0 {
			return false
		}
	}
	return true
}

// leaveMember serves a member's leave (epoch -1). A consumer that closes
// sends its last acknowledgements (epoch -1 on its share session) and the
// leave at once, on two connections; Kafka's coordinator releases the
// session only after the leave is written, so the acknowledgements come
// first there. Here the leave keeps an open session and the member's
// locks until that session ends (its epoch -1 request, its connection's
// close, or the locks' expiry), so the last acknowledgements apply
// rather than fail with SHARE_SESSION_NOT_FOUND. The session accepts
// nothing but its close meanwhile; so for each node's session of the
// member.
func (c *Coordinator) leaveMember(g *group, id string) {
	var kept map[tp]struct{}
	for k, s := range g.sessions {
		if k.member != id {
			continue
		}
		s.left = true
		if kept == nil {
			kept = map[tp]struct{}{}
		}
		for p := range s.parts {
			kept[p] = struct{}{}
		}
	}
	if kept == nil {
		c.removeMember(g, id)
		return
	}
	c.dropMember(g, id, kept)
}

// removeMember drops a member, its sessions and its locks.
func (c *Coordinator) removeMember(g *group, id string) { c.dropMember(g, id, nil) }

// dropMember drops a member and its locks, but for those in the
// partitions of the sessions kept (a leaving member's, see leaveMember);
// with none kept (nil), its sessions go too.
func (c *Coordinator) dropMember(g *group, id string, kept map[tp]struct{}) {
	delete(g.members, id)
	if kept == nil {
		for k := range g.sessions {
			if k.member == id {
				delete(g.sessions, k)
			}
		}
	}
	delete(g.assignment, id)
	g.epoch++
	var dirty []*partition
	for _, sp := range g.parts {
		if _, held := kept[tp{sp.id, sp.p}]; held {
			continue
		}
		if sp.releaseOwner(id, c.deliveryLimit(g.name)) {
			dirty = append(dirty, sp)
		}
	}
	if len(dirty) > 0 {
		c.persist(g, dirty...)
	}
	c.rebalance(g)
}

func (g *group) state() string {
	if len(g.members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// Describe serves ShareGroupDescribe.
func (c *Coordinator) Describe(r *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range r.GroupIDs {
		dg := kmsg.NewShareGroupDescribeResponseGroup()
		dg.GroupID = name
		dg.AuthorizedOperations = -2147483648
		g := c.groups[name]
		switch {
		case g == nil && c.b.OtherGroup(name):
			dg.ErrorCode, dg.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+name+" is not a share group.")
			dg.GroupState = "Dead"
		case g == nil:
			dg.ErrorCode, dg.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+name+" not found.")
			dg.GroupState = "Dead"
		default:
			dg.GroupState, dg.GroupEpoch, dg.AssignmentEpoch, dg.Assignor = g.state(), g.epoch, g.assignEpoch, "simple"
			for _, id := range slices.Sorted(maps.Keys(g.members)) {
				m := g.members[id]
				dm := kmsg.NewShareGroupDescribeResponseGroupMember()
				dm.MemberID, dm.RackID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = m.id, m.rack, m.epoch, m.clientID, m.host
				dm.SubscribedTopicNames = slices.Clone(m.subs)
				if dm.SubscribedTopicNames == nil {
					dm.SubscribedTopicNames = []string{}
				}
				for _, tid := range sortedIDs(m.assigned) {
					t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
					t.TopicID, t.Partitions = tid, m.assigned[tid]
					t.Topic, _ = c.b.TopicName(tid)
					dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, t)
				}
				dg.Members = append(dg.Members, dm)
			}
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// GroupInfo is a share group as ListGroups sees it.
type GroupInfo struct{ Name, State string }

// Groups lists the share groups.
func (c *Coordinator) Groups() []GroupInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]GroupInfo, 0, len(c.groups))
	for _, name := range slices.Sorted(maps.Keys(c.groups)) {
		out = append(out, GroupInfo{name, c.groups[name].state()})
	}
	return out
}

// Exists reports whether name is a share group.
func (c *Coordinator) Exists(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[name] != nil
}

// Delete deletes a share group and its state (DeleteGroups): false with
// NON_EMPTY_GROUP's code while it has members, GROUP_ID_NOT_FOUND when
// there is no such share group.
func (c *Coordinator) Delete(name string) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[name]
	if g == nil {
		return kerr.GroupIDNotFound.Code
	}
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	if err := c.st.write(&frame{kind: kindGroupDel, group: name}); err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	delete(c.groups, name) // its configs stay, as Kafka keeps them apart from the group
	return 0
}

// ListGroups is ListGroups' share groups (KIP-932: protocol type and group
// type "share"), those its states and types filters keep.
func (c *Coordinator) ListGroups(r *kmsg.ListGroupsRequest) []kmsg.ListGroupsResponseGroup {
	var out []kmsg.ListGroupsResponseGroup
	for _, g := range c.Groups() {
		if len(r.StatesFilter) > 0 && !slices.ContainsFunc(r.StatesFilter, func(s string) bool { return strings.EqualFold(s, g.State) }) {
			continue
		}
		if len(r.TypesFilter) > 0 && !slices.ContainsFunc(r.TypesFilter, func(s string) bool { return strings.EqualFold(s, "share") }) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.Name, "share", g.State, "share"
		out = append(out, lg)
	}
	return out
}
