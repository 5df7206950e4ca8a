package broker

// AddOffsetsToTxn v0–v4.
//
// Makes a consumer group's offsets part of the producer's transaction
// (starting it if none is open); TxnOffsetCommit then sends the offsets,
// which become visible to OffsetFetch only when the transaction commits.
// Errors as AddPartitionsToTxn; an empty group ID is INVALID_GROUP_ID.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAddOffsetsToTxn(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AddOffsetsToTxnRequest)
	resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	resp.Version = req.Version
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return protocol.Reply{Response: resp}
	}
	ts, code := b.txns.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 25, req.Version)
	if ts != nil {
		if !ts.groups[r.Group] || ts.state != txnOngoing {
			had, state, start, updated := ts.groups[r.Group], ts.state, ts.start, ts.updated
			ts.groups[r.Group] = true
			if ts.state != txnOngoing {
				ts.state, ts.start = txnOngoing, b.now()
			}
			ts.updated = b.now()
			if err := b.txns.persist(ts, true); err != nil {
				// Not written (a full disk): as if never asked, so
				// that the retry writes it.
				if !had {
					delete(ts.groups, r.Group)
				}
				ts.state, ts.start, ts.updated = state, start, updated
				code = coordinatorErrCode(err)
				b.log.Error("add offsets to txn", "transactional_id", r.TransactionalID, "err", err)
			}
		}
		ts.mu.Unlock()
	}
	if code != 0 {
		b.logBad(req, "add offsets to txn", "transactional_id", r.TransactionalID, "error", kerr.ErrorForCode(code))
	}
	resp.ErrorCode = code
	return protocol.Reply{Response: resp}
}
