package broker

// TxnOffsetCommit v0–v6.
//
// Stages a consumer group's offsets in the producer's open transaction
// (durably, in the transaction log). They are written to the group store
// when the transaction commits and dropped when it aborts; until then
// OffsetFetch returns the previous offsets, or UNSTABLE_OFFSET_COMMIT when
// it asks for stable offsets (require_stable). The committer is checked as
// OffsetCommit checks it (v3+ carry the member ID and generation):
// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, so a consumer
// that lost its partitions in a rebalance cannot commit for them. A wrong
// producer ID is INVALID_PRODUCER_ID_MAPPING, any other epoch
// INVALID_PRODUCER_EPOCH (what Kafka's verification answers). The group
// must have been added with AddOffsetsToTxn (INVALID_TXN_STATE, from v4
// TRANSACTION_ABORTABLE, otherwise), except under transaction version 2
// (v5+, KIP-890; UNSUPPORTED_VERSION below it), where the commit adds it.
//
// v6 names topics by ID (the same change as OffsetCommit v10): every
// partition of an ID no topic has is UNKNOWN_TOPIC_ID.
//
// A transaction log that cannot be written (a full disk) answers
// NOT_COORDINATOR, as Kafka's transaction coordinator answers a failed
// append: the client looks it up again and retries.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleTxnOffsetCommit(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	resp.Version = req.Version

	code := b.txns.TxnOffsetCommit(r, req.Version, resp)
	if code != 0 {
		b.logBad(req, "txn offset commit", "transactional_id", r.TransactionalID, "group", r.Group, "error", kerr.ErrorForCode(code))
	}
	return protocol.Reply{Response: resp}
}
