package groups

import (
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupOpsAll is the authorized-operations bit set for a group: READ(3),
// DESCRIBE(8), DELETE(6).
const groupOpsAll = 1<<3 | 1<<6 | 1<<8

// authorizedOps is a described group's authorized_operations: every
// operation when the request asks (KIP-430; no ACLs yet), else Kafka's
// "not asked" value, INT32_MIN.
func authorizedOps(asked bool) int32 {
	if asked {
		return groupOpsAll
	}
	return -2147483648
}

// DescribeGroups (v0–v6) describes classic groups: state, protocol type,
// chosen protocol and members (with their metadata and assignment once
// Stable). A group the coordinator does not know is described as Dead with
// no error, as Kafka does (v6: GROUP_ID_NOT_FOUND, KIP-1043); a group with
// only committed offsets is Empty. KIP-848 consumer groups get
// GROUP_ID_NOT_FOUND ("not a classic group"). v3+ returns authorized
// operations only when asked (all operations without acc). Under acc a
// group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED), and its authorized
// operations are the principal's.
func (c *Coordinator) DescribeGroups(r *kmsg.DescribeGroupsRequest, acc Access) *kmsg.DescribeGroupsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, name := range r.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = name
		rg.AuthorizedOperations = authorizedOps(r.IncludeAuthorizedOperations)
		g := c.get(name)
		if g == nil {
			rg.State = stateDead.String()
			if len(c.store.GroupOffsets(name)) > 0 {
				rg.State = stateEmpty.String()
			} else if r.Version >= 6 {
				rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+name+" not found.")
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g.mu.Lock()
		if g.isConsumer() {
			// A KIP-848 group: ConsumerGroupDescribe describes it.
			msg := "group " + name + " is not a classic group"
			rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
			g.mu.Unlock()
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.State = g.state.String()
		rg.ProtocolType = g.protocolType
		if g.state == stateStable {
			rg.Protocol = g.protocol
		}
		for _, id := range g.memberIDs() {
			m := g.members[id]
			dm := kmsg.NewDescribeGroupsResponseGroupMember()
			dm.MemberID, dm.ClientID, dm.ClientHost = id, m.clientID, m.host
			if m.instanceID != "" {
				iid := m.instanceID
				dm.InstanceID = &iid
			}
			if g.state == stateStable {
				for _, p := range m.protocols {
					if p.Name == g.protocol {
						dm.ProtocolMetadata = p.Metadata
					}
				}
				dm.MemberAssignment = m.assignment
			}
			rg.Members = append(rg.Members, dm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, rg)
	}
	if acc != nil {
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !acc.Group(kmsg.ACLOperationDescribe, g.Group) {
				d := kmsg.NewDescribeGroupsResponseGroup()
				d.Group, d.ErrorCode = g.Group, errGroupAuth
				*g = d
				continue
			}
			g.AuthorizedOperations = acc.GroupOps(r.IncludeAuthorizedOperations, g.Group)
		}
	}
	return resp
}

// ListGroups (v0–v5) lists every group the coordinator knows, including
// groups that only have committed offsets (listed as Empty with no
// protocol type, as Kafka lists groups loaded from __consumer_offsets),
// and then others (share groups, filtered by their coordinator). KIP-848
// groups have type "consumer" and their own states (Empty, Assigning,
// Reconciling, Stable). v4 filters by state (case-insensitive), v5 by
// type. keep, when set, leaves out the groups it refuses (those the
// principal may not see, those another node coordinates).
func (c *Coordinator) ListGroups(r *kmsg.ListGroupsRequest, others []kmsg.ListGroupsResponseGroup, keep func(group string) bool) *kmsg.ListGroupsResponse {
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	type entry struct{ name, protocolType, state, typ string }
	seen := map[string]entry{}
	groups := c.snapshot()
	for _, g := range groups {
		g.mu.Lock()
		switch {
		case g.state == stateDead:
		case g.cg != nil && len(g.members) == 0:
			seen[g.name] = entry{g.name, "consumer", g.cgState(), "consumer"}
		default:
			seen[g.name] = entry{g.name, g.protocolType, g.state.String(), "classic"}
		}
		g.mu.Unlock()
	}
	for _, name := range c.store.Groups() {
		if _, ok := seen[name]; !ok {
			seen[name] = entry{name, "", stateEmpty.String(), "classic"}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := seen[n]
		if len(r.StatesFilter) > 0 && !containsFold(r.StatesFilter, e.state) {
			continue
		}
		if len(r.TypesFilter) > 0 && !containsFold(r.TypesFilter, e.typ) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = e.name, e.protocolType, e.state, e.typ
		resp.Groups = append(resp.Groups, lg)
	}
	resp.Groups = append(resp.Groups, others...)
	if keep != nil {
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !keep(g.Group) })
	}
	return resp
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// DeleteGroups deletes groups without members, with their committed
// offsets: NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for a
// group with neither members nor offsets. Under acc a group needs DELETE
// (GROUP_AUTHORIZATION_FAILED). other, when set, deletes a group of
// another kind (a share group) by that name: its code, when it has one,
// is the answer.
func (c *Coordinator) DeleteGroups(r *kmsg.DeleteGroupsRequest, acc Access, other func(name string) (int16, bool)) *kmsg.DeleteGroupsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range r.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = name
		if acc != nil && !acc.Group(kmsg.ACLOperationDelete, name) {
			rg.ErrorCode = errGroupAuth
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.ErrorCode = c.DeleteGroup(name)
		if other != nil {
			if code, ok := other(name); ok {
				rg.ErrorCode = code
			}
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// DeleteGroup deletes a group without members and its committed offsets;
// it returns the error code for the group.
func (c *Coordinator) DeleteGroup(name string) int16 {
	if name == "" {
		return kerr.InvalidGroupID.Code
	}
	c.mu.Lock()
	g := c.groups[name]
	if g != nil {
		g.mu.Lock()
		if g.state != stateEmpty && g.state != stateDead {
			g.mu.Unlock()
			c.mu.Unlock()
			return kerr.NonEmptyGroup.Code
		}
		g.setState(stateDead)
		g.mu.Unlock()
		delete(c.groups, name)
	}
	c.mu.Unlock()
	hasOffsets := len(c.store.GroupOffsets(name)) > 0
	if g == nil && !hasOffsets {
		return kerr.GroupIDNotFound.Code
	}
	if hasOffsets {
		if err := c.store.DeleteGroup(name); err != nil {
			c.log.Error("deleting group's committed offsets", "group", name, "err", err)
			return storeErrCode(err)
		}
	}
	return 0
}

// GroupState is what the coordinator holds of a group, for inspection
// (tests, operators): its type ("classic" or "consumer"), Kafka's state
// name, its epoch (the classic generation or the consumer group epoch),
// its members and the member ids handed out with MEMBER_ID_REQUIRED that
// have not joined yet.
type GroupState struct {
	Type, State      string
	Epoch            int32
	Members, Pending int
}

// Group reports the state of a group the coordinator holds in memory;
// false for a group it does not know (one with only committed offsets
// after a restart, for example).
func (c *Coordinator) Group(name string) (GroupState, bool) {
	g := c.get(name)
	if g == nil {
		return GroupState{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cg != nil && len(g.members) == 0 {
		return GroupState{Type: "consumer", State: g.cgState(), Epoch: g.cg.epoch, Members: len(g.cg.members)}, true
	}
	return GroupState{Type: "classic", State: g.state.String(), Epoch: g.generation, Members: len(g.members), Pending: len(g.pending)}, true
}
