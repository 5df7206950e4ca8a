package broker

// ConsumerGroupDescribe v0–v1 (KIP-848).
//
// Behavior: epochs, assignor, state (Empty, Assigning, Reconciling,
// Stable) and members with their current and target assignments.
// GROUP_ID_NOT_FOUND for unknown groups and for classic groups with
// members.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleConsumerGroupDescribe(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ConsumerGroupDescribeRequest)
	resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	c := b.coord()
	for _, name := range r.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = name
		rg.AuthorizedOperations = -2147483648
		if r.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = groupOpsAll
		}
		var g *group
		if c != nil {
			g = c.get(name)
		}
		if g == nil {
			rg.ErrorCode = kerr.GroupIDNotFound.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g.mu.Lock()
		if len(g.members) > 0 || g.cg == nil {
			msg := "group " + name + " is not a consumer group"
			rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
			g.mu.Unlock()
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		cg := g.cg
		rg.State, rg.Epoch, rg.AssignmentEpoch, rg.AssignorName = g.cgState(), cg.epoch, cg.assignmentEpoch, cg.assignor
		ids := make([]string, 0, len(cg.members))
		for id := range cg.members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			m := cg.members[id]
			dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			dm.MemberID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = id, m.epoch, m.clientID, m.host
			if m.instanceID != "" {
				iid := m.instanceID
				dm.InstanceID = &iid
			}
			if m.rackID != "" {
				rack := m.rackID
				dm.RackID = &rack
			}
			dm.SubscribedTopics = append([]string{}, m.subscribed...)
			if m.regexSrc != "" {
				re := m.regexSrc
				dm.SubscribedTopicRegex = &re
			}
			dm.Assignment = g.describeAssignment(m.assigned)
			dm.TargetAssignment = g.describeAssignment(cg.target[id])
			dm.MemberType = 1 // -1 unknown, 0 classic, 1 consumer
			rg.Members = append(rg.Members, dm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, rg)
	}
	return protocol.Reply{Response: resp}
}

func (g *group) describeAssignment(a assignment) kmsg.Assignment {
	out := kmsg.NewAssignment()
	for _, t := range g.toWire(a).Topics {
		at := kmsg.NewAssignmentTopicPartition()
		at.TopicID, at.Partitions = t.TopicID, t.Partitions
		at.Topic, _ = g.c.b.TopicName(t.TopicID)
		out.TopicPartitions = append(out.TopicPartitions, at)
	}
	return out
}
