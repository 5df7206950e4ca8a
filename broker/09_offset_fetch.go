package broker

// OffsetFetch v0–v10.
//
// Behavior: returns committed offsets (-1 and an empty metadata string for
// partitions without one). Null topics (v2+) mean every committed offset
// of the group. v8+ batches several groups. RequireStable (v7+) answers
// UNSTABLE_OFFSET_COMMIT for a partition while an open transaction holds
// an offset for it (pendingTxnOffset, set by the transaction coordinator). v9 names the member and its epoch for KIP-848 groups:
// UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH (the current or previous epoch
// passes). v10 names topics by id: a requested id no topic has answers its
// partitions with UNKNOWN_TOPIC_ID; a fetch of all offsets lists topics by
// their current id and leaves out offsets of a name no topic has now.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// pendingTxnOffset, when set by the transaction coordinator, reports
// whether an open transaction holds an uncommitted offset for the group's
// partition (KIP-447 require_stable).
var pendingTxnOffset func(b *Broker, group, topic string, partition int32) bool

// fetchedPartition is one partition of an OffsetFetch answer.
type fetchedPartition struct {
	partition int32
	offset    int64
	epoch     int32
	metadata  string
	code      int16
}

type fetchedTopic struct {
	topic string
	id    [16]byte // v10: the requested id (or the topic's, for all)
	parts []fetchedPartition
}

// fetchOffsets answers one group: the requested topics (nil = all).
func (b *Broker) fetchOffsets(group string, topics map[string][]int32, order []string, all, requireStable bool) ([]fetchedTopic, int16) {
	c := b.coord()
	if c == nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	stable := func(topic string, fp *fetchedPartition) {
		if requireStable && pendingTxnOffset != nil && pendingTxnOffset(b, group, topic, fp.partition) {
			fp.offset, fp.epoch, fp.metadata, fp.code = -1, -1, "", kerr.UnstableOffsetCommit.Code
		}
	}
	if all {
		var out []fetchedTopic
		for _, cm := range c.store.GroupOffsets(group) {
			if len(out) == 0 || out[len(out)-1].topic != cm.Topic {
				out = append(out, fetchedTopic{topic: cm.Topic})
			}
			t := &out[len(out)-1]
			fp := fetchedPartition{cm.Partition, cm.Offset.Offset, cm.Offset.LeaderEpoch, cm.Offset.Metadata, 0}
			stable(cm.Topic, &fp)
			t.parts = append(t.parts, fp)
		}
		return out, 0
	}
	out := make([]fetchedTopic, 0, len(order))
	for _, name := range order {
		ft := fetchedTopic{topic: name}
		for _, p := range topics[name] {
			fp := fetchedPartition{partition: p, offset: -1, epoch: -1}
			if o, ok := c.store.Get(group, name, p); ok {
				fp = fetchedPartition{p, o.Offset, o.LeaderEpoch, o.Metadata, 0}
			}
			stable(name, &fp)
			ft.parts = append(ft.parts, fp)
		}
		out = append(out, ft)
	}
	return out, 0
}

func (b *Broker) handleOffsetFetch(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version >= 8 {
		for _, rg := range r.Groups {
			topics, order := map[string][]int32{}, []string(nil)
			var unknown []fetchedTopic // v10 ids no topic has
			ids := map[string][16]byte{}
			for _, t := range rg.Topics {
				name := t.Topic
				if r.Version >= 10 {
					var ok bool
					if name, ok = b.TopicName(t.TopicID); !ok {
						ft := fetchedTopic{id: t.TopicID}
						for _, p := range t.Partitions {
							ft.parts = append(ft.parts, fetchedPartition{partition: p, offset: -1, epoch: -1, code: kerr.UnknownTopicID.Code})
						}
						unknown = append(unknown, ft)
						continue
					}
					ids[name] = t.TopicID
				}
				if _, ok := topics[name]; !ok {
					order = append(order, name)
				}
				topics[name] = append(topics[name], t.Partitions...)
			}
			fts, code := b.fetchOffsets(rg.Group, topics, order, rg.Topics == nil, r.RequireStable)
			if r.Version >= 10 {
				kept := fts[:0]
				for _, ft := range fts {
					var ok bool
					if ft.id, ok = ids[ft.topic]; !ok {
						ft.id, ok = b.TopicID(ft.topic)
					}
					if ok {
						kept = append(kept, ft)
					}
				}
				fts = append(kept, unknown...)
			}
			if rg.MemberID != nil && code == 0 {
				if g := b.coord().get(rg.Group); g != nil {
					g.mu.Lock()
					if g.isConsumer() {
						if code = g.validateConsumerCommit(*rg.MemberID, rg.MemberEpoch, 9); code != 0 {
							fts = nil
						}
					}
					g.mu.Unlock()
				}
			}
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, code
			for _, ft := range fts {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic, t.TopicID = ft.topic, ft.id
				for _, fp := range ft.parts {
					p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					p.Partition, p.Offset, p.LeaderEpoch, p.ErrorCode = fp.partition, fp.offset, fp.epoch, fp.code
					md := fp.metadata
					p.Metadata = &md
					t.Partitions = append(t.Partitions, p)
				}
				g.Topics = append(g.Topics, t)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return protocol.Reply{Response: resp}
	}
	topics, order := map[string][]int32{}, []string(nil)
	for _, t := range r.Topics {
		if _, ok := topics[t.Topic]; !ok {
			order = append(order, t.Topic)
		}
		topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
	}
	// v0–v1 have no null topics; an empty list there means nothing.
	fts, code := b.fetchOffsets(r.Group, topics, order, r.Topics == nil && r.Version >= 2, r.RequireStable)
	resp.ErrorCode = code
	for _, ft := range fts {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = ft.topic
		for _, fp := range ft.parts {
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch, p.ErrorCode = fp.partition, fp.offset, fp.epoch, fp.code
			md := fp.metadata
			p.Metadata = &md
			if code != 0 {
				p.ErrorCode = code
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return protocol.Reply{Response: resp}
}
