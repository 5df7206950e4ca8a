package broker

// InitProducerId v0–v5, for the idempotent (non-transactional) producer.
//
// As Kafka does for a null transactional ID, every call issues a fresh
// producer ID at epoch 0, whatever ProducerID/ProducerEpoch (v3+, KIP-360)
// the client passes — but those two must be both set or both -1, else
// INVALID_REQUEST. A transactional ID asks for transactions, which this
// broker does not offer yet: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, a
// non-retriable error, so the client fails fast instead of retrying.

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
	case r.TransactionalID != nil:
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		b.logBad(req, "init producer id: transactions are not supported", "transactional_id", *r.TransactionalID)
	case (r.ProducerID == -1) != (r.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.logBad(req, "init producer id: producer id and epoch must both be set or both be -1")
	default:
		id, err := b.producers.allocate()
		if err != nil {
			resp.ErrorCode = kerr.KafkaStorageError.Code
			b.log.Error("allocating producer id", "err", err)
			break
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
	}
	return protocol.Reply{Response: resp}
}
