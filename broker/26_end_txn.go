package broker

// EndTxn v0–v5.
//
// Commits or aborts the producer's transaction: the Prepare state is made
// durable, a commit or abort marker (control batch) is appended to every
// partition of the transaction, on commit the pending TxnOffsetCommit
// offsets are written to the group store, and the client is answered once
// the markers are durable (see broker/internal/txn). Up to v4 the epoch
// stays: a retry (same decision, same epoch, or the epoch before the
// broker's timeout abort) succeeds, the opposite decision is
// INVALID_TXN_STATE, as is ending a transaction that never started, and
// any other epoch is PRODUCER_FENCED (v2+).
//
// v5 is transaction version 2 (KIP-890 part 2; UNSUPPORTED_VERSION while
// transaction.version is finalized below 2, 57_update_features.go): every
// EndTxn bumps the epoch, the markers carry the bumped one (fencing the
// old epoch on every partition) and the answer names the producer ID and
// epoch to go on with; at the last epoch (32766) the markers take 32767
// and the answer is a new producer ID at epoch 0. A retry names the epoch
// before the bump (or the replaced producer ID) and gets the same answer;
// the opposite decision then is INVALID_TXN_STATE, and an EndTxn v4 at
// that epoch PRODUCER_FENCED. With nothing open, a commit is
// INVALID_TXN_STATE and an abort bumps the epoch. These are the answers a
// real Kafka 4.4 gave (compat_test/kafkadiff_txnv2_test.go).
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
