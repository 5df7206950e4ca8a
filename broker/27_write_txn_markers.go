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
// and a later produce opens a new transaction on it. Coordinator epochs
// are written into the marker but not checked (one coordinator, never
// fenced), and forwarded topics, which take no transactions, answer
// INVALID_TXN_STATE. The answer comes once the markers are durable under
// the broker's sync policy, as EndTxn's.

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleWriteTxnMarkers(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.WriteTxnMarkersRequest)
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Version = req.Version
	var waits []logEnd
	var aborted []abortedRecord
	for _, m := range r.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		// Serialize with the producer's own requests when the coordinator
		// knows it (txn.go's lock order: txnState before partition).
		ts := b.txns.getPID(m.ProducerID)
		if ts != nil {
			ts.mu.Lock()
		}
		for _, mt := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			t := b.lookupTopic(mt.Topic, [16]byte{})
			for _, part := range mt.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				var p *partition
				if t != nil {
					p = t.partition(part)
				}
				switch {
				case m.ProducerID < 0 || m.ProducerEpoch < 0:
					rp.ErrorCode = kerr.InvalidRequest.Code
				case p == nil:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				default:
					end, first, marker, err := b.txns.writeMarkerChecked(p, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed, true, b.now())
					switch {
					case errors.Is(err, errStaleMarkerEpoch):
						rp.ErrorCode = kerr.InvalidProducerEpoch.Code
					case err != nil:
						rp.ErrorCode = kerr.KafkaStorageError.Code
						b.log.Error("writing a transaction marker", "topic", mt.Topic, "partition", part, "producer_id", m.ProducerID, "err", err)
					default:
						if !m.Committed && first >= 0 {
							aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(t.id[:]), Partition: part, PID: m.ProducerID, First: first, Last: marker})
						}
						waits = append(waits, logEnd{b.storeOf(p), end})
					}
				}
				if rp.ErrorCode != 0 {
					b.logRoutine(req, "transaction marker refused", "topic", mt.Topic, "partition", part, "producer_id", m.ProducerID, "err", kerr.ErrorForCode(rp.ErrorCode))
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		if ts != nil {
			ts.mu.Unlock()
		}
		resp.Markers = append(resp.Markers, rm)
	}
	// The aborted index is what lets read_committed consumers skip the
	// records after a restart; it is written before the answer.
	storageFailed := false
	if len(aborted) > 0 {
		if err := b.txns.log.append(true, txnRecord{Aborted: aborted}); err != nil {
			b.log.Error("persisting aborted transactions", "err", err)
			storageFailed = true
		}
	}
	for _, w := range waits {
		if err := w.st.waitDurable(ctx, w.end); err != nil {
			storageFailed = true
		}
	}
	if storageFailed {
		for i := range resp.Markers {
			for j := range resp.Markers[i].Topics {
				for k := range resp.Markers[i].Topics[j].Partitions {
					if rp := &resp.Markers[i].Topics[j].Partitions[k]; rp.ErrorCode == 0 {
						rp.ErrorCode = kerr.KafkaStorageError.Code
					}
				}
			}
		}
	}
	return protocol.Reply{Response: resp}
}
