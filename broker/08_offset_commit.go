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

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetCommit(_ context.Context, req *protocol.Request) protocol.Reply {
	if r := req.Body.(*kmsg.OffsetCommitRequest); b.share.Exists(r.Group) { // a share group commits no offsets (share.go)
		b.logBad(req, "offset commit to a share group's ID", "group", r.Group)
		return protocol.Reply{Response: share.RefuseOffsetCommit(r)}
	}
	return protocol.Reply{Response: b.groups.OffsetCommit(req.Body.(*kmsg.OffsetCommitRequest))}
}
