package broker

// DescribeGroups v0–v6.
//
// Behavior: state, protocol type, chosen protocol and members (with their
// metadata and assignment once Stable) of each group. A group the
// coordinator does not know is described as Dead with no error, as Kafka
// does; a group with only committed offsets is Empty. v3+ returns
// authorized operations only when asked (all operations: no ACLs here).
// v6 reports GROUP_ID_NOT_FOUND for unknown groups (KIP-1043). KIP-848
// consumer groups get GROUP_ID_NOT_FOUND ("not a classic group").

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// groupOpsAll is the authorized-operations bit set for a group: READ(3),
// DESCRIBE(8), DELETE(6).
const groupOpsAll = 1<<3 | 1<<6 | 1<<8

func (b *Broker) handleDescribeGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	c := b.coord()
	for _, name := range r.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = name
		rg.AuthorizedOperations = -2147483648
		if r.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = groupOpsAll
		}
		if c == nil {
			rg.ErrorCode = kerr.CoordinatorNotAvailable.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g := c.get(name)
		if g == nil {
			rg.State = stateDead.String()
			if len(c.store.GroupOffsets(name)) > 0 {
				rg.State = stateEmpty.String()
			} else if r.Version >= 6 {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
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
	return protocol.Reply{Response: resp}
}
