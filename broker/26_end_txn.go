package broker

// EndTxn v0–v5.
//
// Commits or aborts the producer's transaction: the Prepare state is made
// durable, a commit or abort marker (control batch) is appended to every
// partition of the transaction, on commit the pending TxnOffsetCommit
// offsets are written to the group store, and the client is answered once
// the markers are durable (see txn.go). A retry of an EndTxn that already
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
	resp.ErrorCode = b.endTxn(r, req.Version, resp)
	if resp.ErrorCode != 0 {
		b.logBad(req, "end txn", "transactional_id", r.TransactionalID, "commit", r.Commit, "error", kerr.ErrorForCode(resp.ErrorCode))
	}
	return protocol.Reply{Response: resp}
}

func (b *Broker) endTxn(r *kmsg.EndTxnRequest, version int16, resp *kmsg.EndTxnResponse) int16 {
	c := b.txns
	ts := c.get(r.TransactionalID)
	if ts == nil {
		return kerr.InvalidProducerIDMapping.Code
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.pid != r.ProducerID {
		return kerr.InvalidProducerIDMapping.Code
	}
	done := (r.Commit && ts.state == txnCompleteCommit) || (!r.Commit && ts.state == txnCompleteAbort)
	if done && (r.ProducerEpoch == ts.lastEpoch || (r.ProducerEpoch == ts.epoch && version < 5)) {
		// A retry of the EndTxn that completed this (or, for an
		// abort, the broker's timeout abort).
		resp.ProducerID, resp.ProducerEpoch = ts.pid, ts.epoch
		return 0
	}
	prepared := (r.Commit && ts.state == txnPrepareCommit) || (!r.Commit && ts.state == txnPrepareAbort)
	if prepared && (r.ProducerEpoch == ts.epoch || r.ProducerEpoch == ts.lastEpoch) {
		// A retry of the EndTxn whose Prepare is durable but whose
		// markers were not all written: write the missing ones.
		if err := c.complete(ts, r.Commit, true); err != nil {
			b.log.Error("end txn: completing", "transactional_id", ts.id, "err", err)
			return coordinatorErrCode(err)
		}
		resp.ProducerID, resp.ProducerEpoch = ts.pid, ts.epoch
		return 0
	}
	if code := checkProducer(ts, r.ProducerID, r.ProducerEpoch, 26, version); code != 0 {
		return code
	}
	switch ts.state {
	case txnPrepareCommit, txnPrepareAbort:
		if err := c.complete(ts, ts.state == txnPrepareCommit, true); err != nil {
			b.log.Error("end txn: completing", "transactional_id", ts.id, "err", err)
			return kerr.ConcurrentTransactions.Code
		}
		return kerr.InvalidTxnState.Code
	case txnOngoing:
	default:
		if version < 5 || r.Commit {
			return kerr.InvalidTxnState.Code
		}
		// KIP-890: an abort with nothing produced still bumps the epoch.
	}
	epoch, lastEpoch := ts.epoch, ts.lastEpoch
	if version >= 5 {
		c.bump(ts) // the markers carry the new epoch, fencing the old one
	}
	if err := c.endTxn(ts, r.Commit); err != nil {
		b.log.Error("end txn", "transactional_id", ts.id, "err", err)
		if ts.state != txnPrepareCommit && ts.state != txnPrepareAbort {
			// The Prepare was not written: as if this EndTxn never came.
			ts.epoch, ts.lastEpoch = epoch, lastEpoch
		}
		return coordinatorErrCode(err)
	}
	resp.ProducerID, resp.ProducerEpoch = ts.pid, ts.epoch
	return 0
}
