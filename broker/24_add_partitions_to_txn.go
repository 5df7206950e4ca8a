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

	var ps []*partition
	bad := false
	for _, rt := range r.Topics {
		t := b.lookupTopic(rt.Topic, [16]byte{})
		for _, i := range rt.Partitions {
			var p *partition
			if t != nil && !isInternalTopic(t.name) {
				p = t.partition(i)
			}
			if p == nil {
				bad = true
				continue
			}
			ps = append(ps, p)
		}
	}
	code := int16(0)
	if !bad {
		ts, c := b.txns.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 24, req.Version)
		code = c
		if ts != nil {
			if err := b.txns.addPartitions(ts, ps); err != nil {
				code = coordinatorErrCode(err)
				b.log.Error("add partitions to txn", "transactional_id", r.TransactionalID, "err", err)
			}
			ts.mu.Unlock()
		}
	}
	if code != 0 {
		b.logBad(req, "add partitions to txn", "transactional_id", r.TransactionalID, "error", kerr.ErrorForCode(code))
	}
	for _, rt := range r.Topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		for _, i := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition = i
			switch {
			case t == nil || t.partition(i) == nil || isInternalTopic(t.name):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case bad:
				sp.ErrorCode = kerr.OperationNotAttempted.Code
			default:
				sp.ErrorCode = code
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
