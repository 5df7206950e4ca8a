package broker

// WriteTxnMarkers v1–v2 (v0 went with Kafka 4's KIP-896).
//
// In a cluster the transaction coordinator sends it to the leaders of a
// transaction's partitions; on one node the coordinator writes its own
// markers, so what sends it here is an operator: `kafka-transactions.sh
// abort` (KIP-664) aborting a hanging transaction, or a test. Each marker
// is a COMMIT or ABORT control batch appended to each named partition, as
// the leader appends one: refused with INVALID_PRODUCER_EPOCH when older
// than the producer's epoch on that partition, UNKNOWN_TOPIC_OR_PARTITION
// for a partition this node does not have, KAFKA_STORAGE_ERROR when the
// write fails, and INVALID_REQUEST for a negative producer ID or epoch.
// A marker is written even when the producer has no open transaction on
// the partition, as Kafka writes it. An abort that closes an open
// transaction enters the partition's aborted index and the transaction
// log (read_committed consumers skip its records, across restarts too),
// and the LSO moves past it. When the producer's transaction is one the
// coordinator tracks, the partition simply has no open data any more: a
// later EndTxn writes its own marker there as well, which is harmless,
// and a later produce opens a new transaction on it.
//
// The coordinator epoch is checked as a partition leader checks it: older
// than the one of the producer's last marker on the partition is
// TRANSACTION_COORDINATOR_FENCED (after the epoch check), and the marker
// keeps its own (DescribeProducers shows it; this broker's coordinator
// writes epoch 0, as a fresh Kafka's). v2 (KIP-1228) carries the
// transaction version: a TV2 marker must be newer than the producer's
// epoch there, unless it repeats the epoch of one that already closed the
// producer's transaction (a retry). Forwarded topics, which take no
// transactions, answer INVALID_TXN_STATE. The answer comes once the
// markers are durable under the broker's sync policy, as EndTxn's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleWriteTxnMarkers(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.WriteTxnMarkersRequest)
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Version = req.Version
	b.txns.WriteTxnMarkers(ctx, r, resp, func(topic string, partition int32, pid int64, code int16) {
		b.logRoutine(req, "transaction marker refused", "topic", topic, "partition", partition, "producer_id", pid, "err", kerr.ErrorForCode(code))
	})
	return protocol.Reply{Response: resp}
}
