package broker

// OffsetFetch v0–v10.
//
// Behavior: returns committed offsets (-1 and an empty metadata string for
// partitions without one). Null topics (v2+) mean every committed offset
// of the group. v8+ batches several groups. RequireStable (v7+) answers
// UNSTABLE_OFFSET_COMMIT for a partition while an open transaction holds
// an offset for it (the transaction coordinator says which). v9 names the member and its epoch for KIP-848 groups:
// UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH (the current or previous epoch
// passes). v10 names topics by id: a requested id no topic has answers its
// partitions with UNKNOWN_TOPIC_ID; a fetch of all offsets lists topics by
// their current id and leaves out offsets of a name no topic has now.
//
// With the authorizer on, as Kafka: a group needs DESCRIBE
// (GROUP_AUTHORIZATION_FAILED, per group from v8); a named topic the
// principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED in its
// partitions, and a fetch of all offsets leaves such topics out.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetFetch(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	az := b.authorizer(req)
	if az == nil {
		return protocol.Reply{Response: b.groups.OffsetFetch(r)}
	}
	if req.Version < 8 {
		if !az.group(opDescribe, r.Group) {
			return protocol.Reply{Response: errorResponse(r, errGroupAuth)}
		}
		resp := b.groups.OffsetFetch(r)
		all := r.Topics == nil
		kept := resp.Topics[:0]
		for _, t := range resp.Topics {
			switch offsetTopicVerdict(az, all, t.Topic) {
			case offsetsShown:
				kept = append(kept, t)
				continue
			case offsetsLeftOut:
				continue
			}
			for i := range t.Partitions {
				p := &t.Partitions[i]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), errTopicAuth
			}
			kept = append(kept, t)
		}
		resp.Topics = kept
		return protocol.Reply{Response: resp}
	}
	cp := *r
	cp.Groups = nil
	var denied []kmsg.OffsetFetchResponseGroup
	for _, g := range r.Groups {
		if az.group(opDescribe, g.Group) {
			cp.Groups = append(cp.Groups, g)
			continue
		}
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, errGroupAuth
		denied = append(denied, rg)
	}
	var resp *kmsg.OffsetFetchResponse
	if len(cp.Groups) > 0 {
		resp = b.groups.OffsetFetch(&cp)
	} else {
		resp = r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.Version = req.Version
	}
	for gi := range resp.Groups {
		g := &resp.Groups[gi]
		all := true
		for _, rg := range cp.Groups {
			if rg.Group == g.Group {
				all = rg.Topics == nil
			}
		}
		kept := g.Topics[:0]
		for _, t := range g.Topics {
			name := t.Topic
			if req.Version >= 10 {
				if tp := b.lookupTopic("", t.TopicID); tp != nil {
					name = tp.name
				}
			}
			switch offsetTopicVerdict(az, all, name) {
			case offsetsShown:
				kept = append(kept, t)
				continue
			case offsetsLeftOut:
				continue
			}
			for i := range t.Partitions {
				p := &t.Partitions[i]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), errTopicAuth
			}
			kept = append(kept, t)
		}
		g.Topics = kept
	}
	resp.Groups = append(resp.Groups, denied...)
	return protocol.Reply{Response: resp}
}

type offsetVerdict int8

const (
	offsetsShown   offsetVerdict = iota
	offsetsLeftOut               // a fetch of all offsets: not listed
	offsetsRefused               // a named topic: TOPIC_AUTHORIZATION_FAILED
)

// offsetTopicVerdict is what an OffsetFetch shows of a topic's committed
// offsets; "" (an ID no topic has) is the coordinator's to answer.
func offsetTopicVerdict(az *authz, all bool, name string) offsetVerdict {
	switch {
	case name == "":
		return offsetsShown
	case all && az.topicVisible(opDescribe, name):
		return offsetsShown
	case all:
		return offsetsLeftOut
	case az.topic(opDescribe, name):
		return offsetsShown
	}
	return offsetsRefused
}
