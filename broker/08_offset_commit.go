package broker

// OffsetCommit v0–v10.
//
// Behavior: validates the committer as Kafka's classic coordinator does,
// then stores every valid partition's offset in one groupstore change
// (under fsync=always the response waits for the fsync, shared with
// concurrent commits).
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

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetCommit(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	code := b.validateCommit(r)
	nowMs := b.Now().UnixMilli()
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
		ct := b.commitTopic(r.Version >= 10, t.Topic, t.TopicID)
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = ct.partitionError(code, p.Partition, p.Metadata)
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
				commits = append(commits, groupstore.Commit{Topic: ct.name, Partition: p.Partition, Offset: o})
				refs = append(refs, ref{i, j})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(commits) > 0 {
		if err := b.coord().store.Commit(r.Group, commits); err != nil {
			b.log.Error("committing offsets", "group", r.Group, "err", err)
			for _, rf := range refs {
				resp.Topics[rf.t].Partitions[rf.p].ErrorCode = storeErrCode(err)
			}
		}
	}
	return protocol.Reply{Response: resp}
}

// validateCommit applies Kafka's membership and generation checks.
func (b *Broker) validateCommit(r *kmsg.OffsetCommitRequest) int16 {
	c := b.coord()
	if c == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
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

// commitTopic is one topic of an OffsetCommit or TxnOffsetCommit, named
// by name or (OffsetCommit v10+, TxnOffsetCommit v6+) by topic ID.
type commitTopic struct {
	name   string
	known  bool // false: an unknown topic ID
	exists bool
	nparts int32
}

func (b *Broker) commitTopic(byID bool, name string, id [16]byte) commitTopic {
	ct := commitTopic{name: name, known: true}
	if byID {
		ct.name, ct.known = b.TopicName(id)
	}
	ct.nparts, ct.exists = b.PartitionCount(ct.name)
	return ct
}

// partitionError is the error of one partition: an unknown topic ID, the
// request-wide code if any, then an unknown partition, then metadata over
// Kafka's offset.metadata.max.bytes; 0 to commit it.
func (ct commitTopic) partitionError(requestCode int16, partition int32, metadata *string) int16 {
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
