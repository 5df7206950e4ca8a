package groups

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
)

// OffsetCommit (v0–v10) validates the committer as Kafka's classic
// coordinator does, then stores every valid partition's offset in one
// groupstore change (under fsync=always the answer waits for the fsync,
// shared with concurrent commits).
//   - generation < 0 and no members (a "simple" consumer, e.g. kadm or a
//     manual-assignment client): accepted, creating the group if needed.
//   - a group unknown to the coordinator with generation >= 0:
//     ILLEGAL_GENERATION.
//   - a replaced static member: FENCED_INSTANCE_ID; CompletingRebalance:
//     REBALANCE_IN_PROGRESS; not a member: UNKNOWN_MEMBER_ID; wrong
//     generation: ILLEGAL_GENERATION. Commits during PreparingRebalance from
//     the current generation are accepted (clients commit while revoking).
//   - per partition: UNKNOWN_TOPIC_OR_PARTITION for a missing topic or
//     partition, OFFSET_METADATA_TOO_LARGE over offset.metadata.max.bytes;
//     v10 names topics by id, and every partition of an id no topic has is
//     UNKNOWN_TOPIC_ID (before any group check, as Kafka's KafkaApis
//     answers it before the coordinator sees the request).
//
// Consumer (KIP-848) groups: the generation is the member epoch; the
// member's current or previous epoch is accepted (as Kafka 4.3 accepts
// commits racing an epoch bump), anything else is STALE_MEMBER_EPOCH (v9+)
// or ILLEGAL_GENERATION.
//
// Version notes: v1 carries a per-partition commit timestamp, v2–v4 a
// retention time (an explicit expiry), v6 the leader epoch, v7 the
// instance id, v9 KIP-848 member epochs, v10 topic ids instead of names
// (KIP-848; offsets are still stored by name, so a topic deleted and
// recreated under the same name starts without them: deletion drops them).
func (c *Coordinator) OffsetCommit(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := c.validateCommit(r)
	nowMs := c.now().UnixMilli()
	expire := int64(-1)
	if r.Version >= 2 && r.Version <= 4 && r.RetentionTimeMillis >= 0 {
		expire = nowMs + r.RetentionTimeMillis
	}
	var commits []groupstore.Commit
	type ref struct{ t, p int }
	var refs []ref
	for i, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		ct := c.CommitTopic(r.Version >= 10, t.Topic, t.TopicID)
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = ct.PartitionError(code, p.Partition, p.Metadata)
			if rp.ErrorCode == 0 {
				o := groupstore.Offset{Offset: p.Offset, LeaderEpoch: -1, CommitMs: nowMs, ExpireMs: expire}
				if r.Version >= 6 {
					o.LeaderEpoch = p.LeaderEpoch
				}
				if r.Version == 1 && p.Timestamp >= 0 {
					o.CommitMs = p.Timestamp
				}
				if p.Metadata != nil {
					o.Metadata = *p.Metadata
				}
				commits = append(commits, groupstore.Commit{Topic: ct.Name, Partition: p.Partition, Offset: o})
				refs = append(refs, ref{i, j})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(commits) > 0 {
		if err := c.store.Commit(r.Group, commits); err != nil {
			c.log.Error("committing offsets", "group", r.Group, "err", err)
			for _, rf := range refs {
				resp.Topics[rf.t].Partitions[rf.p].ErrorCode = storeErrCode(err)
			}
		}
	}
	return resp
}

// validateCommit applies Kafka's membership and generation checks.
func (c *Coordinator) validateCommit(r *kmsg.OffsetCommitRequest) int16 {
	if r.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	generation := r.Generation
	if r.Version == 0 {
		generation = -1
	}
	g := c.get(r.Group)
	if g == nil {
		if generation >= 0 {
			// From v9 (KIP-848) Kafka names the missing group; older
			// versions keep the generation error clients expect.
			if r.Version >= 9 {
				return kerr.GroupIDNotFound.Code
			}
			return kerr.IllegalGeneration.Code
		}
		g = c.getOrCreate(r.Group)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.state == stateDead:
		return kerr.CoordinatorNotAvailable.Code
	case g.isConsumer():
		return g.validateConsumerCommit(r.MemberID, generation, r.Version)
	case g.fenced(r.InstanceID, r.MemberID):
		return kerr.FencedInstanceID.Code
	case generation < 0 && g.state == stateEmpty:
		return 0
	case g.state == stateCompletingRebalance:
		return kerr.RebalanceInProgress.Code
	}
	m := g.members[r.MemberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if m.joinCh == nil && m.syncCh == nil && m.session > 0 {
		g.armSession(m) // a commit counts as a heartbeat, as in Kafka
	}
	return 0
}

// CommitTopic is one topic of an OffsetCommit or TxnOffsetCommit, named
// by name or (OffsetCommit v10+, TxnOffsetCommit v6+) by topic ID.
type CommitTopic struct {
	Name   string
	known  bool // false: an unknown topic ID
	exists bool
	nparts int32
}

// CommitTopic resolves a committed topic by name, or by id when byID.
func (c *Coordinator) CommitTopic(byID bool, name string, id [16]byte) CommitTopic {
	ct := CommitTopic{Name: name, known: true}
	if byID {
		ct.Name, ct.known = c.b.TopicName(id)
	}
	ct.nparts, ct.exists = c.b.PartitionCount(ct.Name)
	return ct
}

// PartitionError is the error of one partition: an unknown topic ID, the
// request-wide code if any, then an unknown partition, then metadata over
// Kafka's offset.metadata.max.bytes; 0 to commit it.
func (ct CommitTopic) PartitionError(requestCode int16, partition int32, metadata *string) int16 {
	switch {
	case !ct.known:
		return kerr.UnknownTopicID.Code
	case requestCode != 0:
		return requestCode
	case !ct.exists || partition < 0 || partition >= ct.nparts:
		return kerr.UnknownTopicOrPartition.Code
	case metadata != nil && len(*metadata) > offsetMetadataMaxBytes:
		return kerr.OffsetMetadataTooLarge.Code
	}
	return 0
}

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
func (c *Coordinator) fetchOffsets(group string, topics map[string][]int32, order []string, all, requireStable bool) ([]fetchedTopic, int16) {
	// After a failed write the store's memory may hold a commit that was
	// answered with an error; as Kafka's coordinator does when its offsets
	// partition fails, answer none rather than one that may not be there.
	if c.store.Err() != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	stable := func(topic string, fp *fetchedPartition) {
		if requireStable && c.b.TxnOffsetPending(group, topic, fp.partition) {
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

// OffsetFetch (v0–v10) answers committed offsets (-1 and an empty metadata
// string for partitions without one). Null topics (v2+) mean every
// committed offset of the group. v8+ batches several groups. RequireStable
// (v7+) answers UNSTABLE_OFFSET_COMMIT for a partition while an open
// transaction holds an offset for it (Broker.TxnOffsetPending). v9 names
// the member and its epoch for KIP-848 groups: UNKNOWN_MEMBER_ID or
// STALE_MEMBER_EPOCH (the current or previous epoch passes). v10 names
// topics by id: a requested id no topic has answers its partitions with
// UNKNOWN_TOPIC_ID; a fetch of all offsets lists topics by their current
// id and leaves out offsets of a name no topic has now.
//
// acc, when not nil, hides what the principal may not see
// (authorizedOffsetFetch).
func (c *Coordinator) OffsetFetch(r *kmsg.OffsetFetchRequest, acc Access) *kmsg.OffsetFetchResponse {
	if acc != nil {
		return c.authorizedOffsetFetch(r, acc)
	}
	return c.offsetFetch(r)
}

func (c *Coordinator) offsetFetch(r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
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
					if name, ok = c.b.TopicName(t.TopicID); !ok {
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
			fts, code := c.fetchOffsets(rg.Group, topics, order, rg.Topics == nil, r.RequireStable)
			if r.Version >= 10 {
				kept := fts[:0]
				for _, ft := range fts {
					var ok bool
					if ft.id, ok = ids[ft.topic]; !ok {
						ft.id, ok = c.b.TopicID(ft.topic)
					}
					if ok {
						kept = append(kept, ft)
					}
				}
				fts = append(kept, unknown...)
			}
			if rg.MemberID != nil && code == 0 {
				if g := c.get(rg.Group); g != nil {
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
		return resp
	}
	topics, order := map[string][]int32{}, []string(nil)
	for _, t := range r.Topics {
		if _, ok := topics[t.Topic]; !ok {
			order = append(order, t.Topic)
		}
		topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
	}
	// v0–v1 have no null topics; an empty list there means nothing.
	fts, code := c.fetchOffsets(r.Group, topics, order, r.Topics == nil && r.Version >= 2, r.RequireStable)
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
	return resp
}

// OffsetDelete (v0) deletes a group's committed offsets for some
// partitions. GROUP_ID_NOT_FOUND for an unknown group. While the group has
// members, partitions of topics the members subscribe to (consumer
// protocol metadata) get GROUP_SUBSCRIBED_TO_TOPIC; a non-empty group that
// does not use the consumer protocol gets NON_EMPTY_GROUP. Unknown topics
// get UNKNOWN_TOPIC_OR_PARTITION.
func (c *Coordinator) OffsetDelete(r *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g := c.get(r.Group)
	if g == nil && len(c.store.GroupOffsets(r.Group)) == 0 {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
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
				return resp
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
			case !c.topicExists(t.Topic):
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
		c.log.Error("deleting committed offsets", "group", r.Group, "err", err)
		resp.ErrorCode = storeErrCode(err)
	}
	return resp
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

// ValidateTxnCommit applies OffsetCommit's membership checks to a
// transactional commit (Kafka's GroupCoordinator.handleTxnCommitOffsets).
func (c *Coordinator) ValidateTxnCommit(r *kmsg.TxnOffsetCommitRequest, version int16) int16 {
	if r.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	if version < 3 {
		return 0 // no member information
	}
	g := c.get(r.Group)
	if g == nil {
		if r.Generation >= 0 {
			return kerr.IllegalGeneration.Code
		}
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.state == stateDead:
		return kerr.CoordinatorNotAvailable.Code
	case g.isConsumer():
		if r.Generation < 0 && r.MemberID == "" {
			return 0
		}
		return g.validateConsumerCommit(r.MemberID, r.Generation, 9)
	case g.fenced(r.InstanceID, r.MemberID):
		return kerr.FencedInstanceID.Code
	case r.Generation < 0 && r.MemberID == "":
		return 0
	}
	if g.members[r.MemberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	if r.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	return 0
}

// CommitTransactionalOffsets writes the offsets a transaction staged with
// TxnOffsetCommit once it commits (Kafka's onTransactionCompleted): as an
// OffsetCommit would, in one groupstore change.
func (c *Coordinator) CommitTransactionalOffsets(group string, commits []groupstore.Commit) error {
	return c.store.Commit(group, commits)
}

// Committed is the group's committed offset of a partition.
func (c *Coordinator) Committed(group, topic string, partition int32) (groupstore.Offset, bool) {
	return c.store.Get(group, topic, partition)
}

// StoredGroups lists the groups with committed offsets.
func (c *Coordinator) StoredGroups() []string { return c.store.Groups() }

// GroupOffsets lists the group's committed offsets.
func (c *Coordinator) GroupOffsets(group string) []groupstore.Commit {
	return c.store.GroupOffsets(group)
}
