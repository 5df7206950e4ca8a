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
	code := b.txns.AddOffsetsToTxn(r, req.Version)
	if code != 0 {
		b.logBad(req, "add offsets to txn", "transactional_id", r.TransactionalID, "error", kerr.ErrorForCode(code))
	}
	resp.ErrorCode = code
	return protocol.Reply{Response: resp}
}
