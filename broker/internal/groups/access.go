package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Access is the authorizer's word on one request's principal, as the
// broker decides it (and logs its denials). The methods that take one are
// given nil when nothing is to be checked, and then allow everything.
type Access interface {
	// Group and Topic decide op on a group or a topic; a denial is
	// logged.
	Group(op kmsg.ACLOperation, group string) bool
	Topic(op kmsg.ACLOperation, topic string) bool
	// TopicVisible decides op on a topic without logging a denial, for a
	// listing the principal sees only part of.
	TopicVisible(op kmsg.ACLOperation, topic string) bool
	// GroupOps is a group's KIP-430 authorized_operations: the bits of
	// the operations the principal may do when asked, math.MinInt32 when
	// not.
	GroupOps(asked bool, group string) int32
}

var errGroupAuth = kerr.GroupAuthorizationFailed.Code

// offsetVerdict is what an OffsetFetch shows of a topic's committed
// offsets.
type offsetVerdict int8

const (
	offsetsShown   offsetVerdict = iota
	offsetsLeftOut               // a fetch of all offsets: not listed
	offsetsRefused               // a named topic: TOPIC_AUTHORIZATION_FAILED
)

// offsetTopicVerdict decides a topic of an OffsetFetch; "" (an ID no topic
// has) is the coordinator's to answer.
func offsetTopicVerdict(acc Access, all bool, name string) offsetVerdict {
	switch {
	case name == "":
		return offsetsShown
	case all && acc.TopicVisible(kmsg.ACLOperationDescribe, name):
		return offsetsShown
	case all:
		return offsetsLeftOut
	case acc.Topic(kmsg.ACLOperationDescribe, name):
		return offsetsShown
	}
	return offsetsRefused
}

// authorizedOffsetFetch is OffsetFetch under the authorizer. Before v8 the
// broker has checked the one group already; from v8 each group needs
// DESCRIBE, and the denied ones are answered after the others. A named
// topic the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED
// in its partitions; a fetch of all offsets leaves such topics out.
func (c *Coordinator) authorizedOffsetFetch(r *kmsg.OffsetFetchRequest, acc Access) *kmsg.OffsetFetchResponse {
	if r.Version < 8 {
		resp := c.offsetFetch(r)
		all := r.Topics == nil
		kept := resp.Topics[:0]
		for _, t := range resp.Topics {
			switch offsetTopicVerdict(acc, all, t.Topic) {
			case offsetsShown:
				kept = append(kept, t)
				continue
			case offsetsLeftOut:
				continue
			}
			for i := range t.Partitions {
				p := &t.Partitions[i]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), kerr.TopicAuthorizationFailed.Code
			}
			kept = append(kept, t)
		}
		resp.Topics = kept
		return resp
	}
	cp := *r
	cp.Groups = nil
	var denied []kmsg.OffsetFetchResponseGroup
	for _, g := range r.Groups {
		if acc.Group(kmsg.ACLOperationDescribe, g.Group) {
			cp.Groups = append(cp.Groups, g)
			continue
		}
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, errGroupAuth
		denied = append(denied, rg)
	}
	resp := c.offsetFetch(&cp)
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
			if r.Version >= 10 {
				if n, ok := c.b.TopicName(t.TopicID); ok {
					name = n
				}
			}
			switch offsetTopicVerdict(acc, all, name) {
			case offsetsShown:
				kept = append(kept, t)
				continue
			case offsetsLeftOut:
				continue
			}
			for i := range t.Partitions {
				p := &t.Partitions[i]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, kmsg.StringPtr(""), kerr.TopicAuthorizationFailed.Code
			}
			kept = append(kept, t)
		}
		g.Topics = kept
	}
	resp.Groups = append(resp.Groups, denied...)
	return resp
}
