package broker

// EndTxn v0–v5.
//
// Commits or aborts the producer's transaction: the Prepare state is made
// durable, a commit or abort marker (control batch) is appended to every
// partition of the transaction, on commit the pending TxnOffsetCommit
// offsets are written to the group store, and the client is answered once
// the markers are durable (see broker/internal/txn). A retry of an EndTxn that already
// completed (same decision, same or previous epoch) succeeds, which also
// covers an abort of a transaction the broker aborted on timeout; the
// opposite decision then is INVALID_TXN_STATE, as is ending a transaction
// that never started (v0–v4). v5 (KIP-890) bumps the epoch on every EndTxn
// and returns the new producer ID and epoch; an empty abort then succeeds.
//
// A transaction log or partition that cannot be written (a full disk)
// answers NOT_COORDINATOR, as Kafka's transaction coordinator answers a
// failed append; clients retry. If the Prepare was not written nothing
// changed (not even the v5 epoch) and the retry starts over; if it was,
// the retry writes the markers that are missing and succeeds.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleEndTxn(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.EndTxnRequest)
	resp := r.ResponseKind().(*kmsg.EndTxnResponse)
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	resp.ErrorCode = b.txns.EndTxn(r, req.Version, resp)
	if resp.ErrorCode != 0 {
		b.logBad(req, "end txn", "transactional_id", r.TransactionalID, "commit", r.Commit, "error", kerr.ErrorForCode(resp.ErrorCode))
	}
	return protocol.Reply{Response: resp}
}
