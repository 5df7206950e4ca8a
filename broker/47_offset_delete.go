package broker

// OffsetDelete v0.
//
// Behavior: deletes a group's committed offsets for some partitions.
// GROUP_ID_NOT_FOUND for an unknown group. While the group has members,
// partitions of topics the members subscribe to (consumer protocol
// metadata) get GROUP_SUBSCRIBED_TO_TOPIC; a non-empty group that does not
// use the consumer protocol gets NON_EMPTY_GROUP. Unknown topics get
// UNKNOWN_TOPIC_OR_PARTITION.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetDelete(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetDeleteRequest)
	resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	c := b.coord()
	if c == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Response: resp}
	}
	g := c.get(r.Group)
	if g == nil && len(c.store.GroupOffsets(r.Group)) == 0 {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return protocol.Reply{Response: resp}
	}
	var subscribed map[string]bool
	if g != nil {
		g.mu.Lock()
		if g.isConsumer() {
			subscribed = map[string]bool{}
			for _, m := range g.cg.members {
				for _, t := range c.subscribedTo(m) {
					subscribed[t] = true
				}
			}
		} else if len(g.members) > 0 {
			if g.protocolType != "consumer" {
				g.mu.Unlock()
				resp.ErrorCode = kerr.NonEmptyGroup.Code
				return protocol.Reply{Response: resp}
			}
			subscribed = g.subscribedTopics()
		}
		g.mu.Unlock()
	}
	var del []groupstore.TopicPartition
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case !b.TopicExists(t.Topic):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case subscribed[t.Topic]:
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				del = append(del, groupstore.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if err := c.store.DeleteOffsets(r.Group, del); err != nil {
		resp.ErrorCode = storeErrCode(err)
	}
	return protocol.Reply{Response: resp}
}

// subscribedTopics parses the members' consumer-protocol metadata for the
// chosen protocol. REQUIRES g.mu.
func (g *group) subscribedTopics() map[string]bool {
	topics := map[string]bool{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if p.Name != g.protocol && g.protocol != "" {
				continue
			}
			var md kmsg.ConsumerMemberMetadata
			if md.ReadFrom(p.Metadata) == nil {
				for _, t := range md.Topics {
					topics[t] = true
				}
			}
			break
		}
	}
	return topics
}
