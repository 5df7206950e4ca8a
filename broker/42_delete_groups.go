package broker

// DeleteGroups v0–v2.
//
// Behavior: deletes groups that have no members, with their committed
// offsets. NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND for a
// group that has neither members nor offsets.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteGroups(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	c := b.coord()
	for _, name := range r.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = name
		if c == nil {
			rg.ErrorCode = kerr.CoordinatorNotAvailable.Code
		} else {
			rg.ErrorCode = c.deleteGroup(name)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return protocol.Reply{Response: resp}
}

func (c *coordinator) deleteGroup(name string) int16 {
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
			return storeErrCode(err)
		}
	}
	return 0
}
