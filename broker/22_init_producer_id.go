package broker

// InitProducerId v0–v5, for the idempotent (non-transactional) producer.
//
// As Kafka does for a null transactional ID, every call issues a fresh
// producer ID at epoch 0, whatever ProducerID/ProducerEpoch (v3+, KIP-360)
// the client passes — but those two must be both set or both -1, else
// INVALID_REQUEST. A transactional ID goes to the transaction coordinator
// (broker/internal/txn): its producer ID is kept and its epoch bumped on every call,
// fencing the previous producer (PRODUCER_FENCED from v4, else
// INVALID_PRODUCER_EPOCH, when a KIP-360 caller names a stale epoch), an
// open transaction is aborted first, and transaction.timeout.ms must be in
// (0, 15 min] (INVALID_TRANSACTION_TIMEOUT). An empty transactional ID is
// INVALID_REQUEST.
//
// Storage failures (a full disk) answer what Kafka answers for them, codes
// every client retries: a block of producer IDs that cannot be recorded is
// COORDINATOR_LOAD_IN_PROGRESS (Kafka's answer while no block is at hand);
// a transaction log that cannot be written is NOT_COORDINATOR (Kafka's
// transaction coordinator on a failed append).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleInitProducerID(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case (r.ProducerID == -1) != (r.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "init producer id: producer id and epoch must both be set or both be -1")
	case r.TransactionalID != nil && *r.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "init producer id: empty transactional id")
	case r.TransactionalID != nil:
		var err error
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode, err = b.txns.InitProducerID(*r.TransactionalID, r.TransactionTimeoutMillis, r.ProducerID, r.ProducerEpoch, req.Version)
		if resp.ErrorCode == kerr.KafkaStorageError.Code {
			resp.ErrorCode = coordinatorErrCode(err)
		}
		if resp.ErrorCode != 0 {
			resp.ProducerID, resp.ProducerEpoch = -1, -1
			b.logBad(req, "init producer id", "transactional_id", *r.TransactionalID, "error", kerr.ErrorForCode(resp.ErrorCode), "err", err)
		}
	default:
		id, err := b.producers.Allocate()
		if err != nil {
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			b.log.Error("allocating producer id", "err", err)
			break
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
	}
	return protocol.Reply{Response: resp}
}
