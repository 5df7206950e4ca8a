package broker

// AddPartitionsToTxn v0–v3 (the client versions; v4+ batch several
// transactions for broker-to-broker verification and are not offered).
//
// Adds partitions to the producer's transaction, starting it if none is
// open, and records durably (transaction log) where each partition's log
// ended, so a restart knows where to look for the transaction's data. Every
// partition must exist (UNKNOWN_TOPIC_OR_PARTITION); if one does not, the
// others are not added and get OPERATION_NOT_ATTEMPTED, as in Kafka.
// Producer errors: INVALID_PRODUCER_ID_MAPPING for an unknown ID,
// PRODUCER_FENCED (v2+; INVALID_PRODUCER_EPOCH before) for an old epoch.

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
	if code := b.txns.AddPartitionsToTxn(r, req.Version, resp); code != 0 {
		b.logBad(req, "add partitions to txn", "transactional_id", r.TransactionalID, "error", kerr.ErrorForCode(code))
	}
	return protocol.Reply{Response: resp}
}
