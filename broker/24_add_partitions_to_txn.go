package broker

// AddPartitionsToTxn v0–v5.
//
// Adds partitions to the producer's transaction, starting it if none is
// open, and records durably (transaction log) where each partition's log
// ended, so a restart knows where to look for the transaction's data. Every
// partition must exist (UNKNOWN_TOPIC_OR_PARTITION); if one does not, the
// others are not added and get OPERATION_NOT_ATTEMPTED, as in Kafka.
// Producer errors: INVALID_PRODUCER_ID_MAPPING for an unknown ID,
// PRODUCER_FENCED (v2+; INVALID_PRODUCER_EPOCH before) for another epoch.
//
// v4+ (KIP-890) is the form a partition leader sends the transaction
// coordinator: several transactions per request, each either added to or,
// with verify_only, checked (a partition not in the transaction is
// TRANSACTION_ABORTABLE). It takes CLUSTER_ACTION on the cluster when the
// authorizer is on (CLUSTER_AUTHORIZATION_FAILED). On one node the
// produce path asks the coordinator directly, so only tools send it here.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAddPartitionsToTxn(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	resp.Version = req.Version
	if req.Version >= 4 {
		b.txns.AddPartitionsToTxns(r, resp)
		return protocol.Reply{Response: resp}
	}
	if code := b.txns.AddPartitionsToTxn(r, req.Version, resp); code != 0 {
		b.logBad(req, "add partitions to txn", "transactional_id", r.TransactionalID, "error", kerr.ErrorForCode(code))
	}
	return protocol.Reply{Response: resp}
}
