package txn

// Markers: the control batches that end a transaction in each of its
// partitions, written by EndTxn (complete) or sent by an operator
// (WriteTxnMarkers).

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// ErrStaleMarkerEpoch is a WriteTxnMarkers marker older than the
// producer's epoch on the partition (INVALID_PRODUCER_EPOCH).
var ErrStaleMarkerEpoch = errors.New("marker epoch older than the producer's")

// ErrCoordinatorFenced is a WriteTxnMarkers marker from a coordinator
// epoch older than the producer's last marker on the partition
// (TRANSACTION_COORDINATOR_FENCED).
var ErrCoordinatorFenced = errors.New("marker coordinator epoch older than the producer's last")

// ControlBatch builds a commit or abort marker.
func ControlBatch(pid int64, epoch int16, coordinatorEpoch int32, commit bool, now time.Time) []byte {
	key := []byte{0, 0, 0, 0} // version 0, type 0 = abort
	if commit {
		key[3] = 1
	}
	value := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch)) // version 0, coordinator epoch
	b, err := records.AppendBatch(nil, records.BatchSpec{
		Transactional: true, Control: true, FirstTimestamp: now.UnixMilli(),
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1,
	}, []records.Record{{Key: key, Value: value}})
	if err != nil {
		panic(err) // a fixed one-record batch always encodes
	}
	return b
}

// scanTxn reads the batch headers of p from start and returns the offset of
// the first transactional data batch of pid and of its first marker after
// that (-1 when absent).
func scanTxn(p Partition, pid int64, start int64) (first, marker int64, err error) {
	first, marker = -1, -1
	start = max(start, p.LogStart())
	if start >= p.LogEnd() {
		return -1, -1, nil
	}
	err = p.EachBatchHeader(start, func(h *records.BatchHeader) bool {
		if h.ProducerID != pid || !h.IsTransactional() {
			return true
		}
		if h.IsControl() {
			marker = h.BaseOffset
			return false
		}
		if first < 0 {
			first = h.BaseOffset
		}
		return true
	})
	if errors.Is(err, logstore.ErrOffsetOutOfRange) {
		return -1, -1, nil
	}
	if err != nil {
		return -1, -1, fmt.Errorf("scanning %s-%d: %w", p.Topic(), p.Index(), err)
	}
	return first, marker, nil
}

// writeMarker appends the coordinator's own marker for pid to p, at
// coordinator epoch 0 (this coordinator's only epoch), stamped at (the
// coordinator stamps every marker of one transaction with the same time,
// which tells a transaction's markers apart from its producer's others;
// the uplink relies on it), and updates p's open and aborted sets. It
// returns the offset after the marker.
func (c *Coordinator) writeMarker(p Partition, pid int64, epoch int16, commit bool, at time.Time) (int64, error) {
	end, _, _, err := c.writeMarkerChecked(p, pid, epoch, 0, commit, nil, at)
	return end, err
}

// markerCheck is how a partition leader judges a WriteTxnMarkers marker
// against its producer state, as Kafka's does: an epoch older than the
// producer's is INVALID_PRODUCER_EPOCH; a transaction version 2 marker
// (KIP-1228) must be newer still, unless it repeats the epoch of a
// marker that already closed the producer's transaction there (a retry);
// then a coordinator epoch older than the last marker's is
// TRANSACTION_COORDINATOR_FENCED. The partition calls it under its lock;
// it takes the partition's transaction state (lock order: partition lock
// → partTxn.mu).
func (c *Coordinator) markerCheck(p Partition, pid int64, epoch int16, coordinatorEpoch int32, tv2 bool) func(MarkerProducer) error {
	return func(mp MarkerProducer) error {
		if !mp.Known {
			return nil
		}
		if epoch < mp.Epoch || (tv2 && epoch == mp.Epoch && c.HoldsOpen(p, pid)) {
			return ErrStaleMarkerEpoch
		}
		if mp.CoordinatorEpoch > coordinatorEpoch {
			return ErrCoordinatorFenced
		}
		return nil
	}
}

// writeMarkerChecked is writeMarker for any marker: check (nil for the
// coordinator's own) may refuse it. It also returns the first offset of
// the transaction the marker closed (-1 if none was open) and the
// marker's offset.
func (c *Coordinator) writeMarkerChecked(p Partition, pid int64, epoch int16, coordinatorEpoch int32, commit bool, check func(MarkerProducer) error, at time.Time) (end, first, marker int64, err error) {
	batch := ControlBatch(pid, epoch, coordinatorEpoch, commit, at)
	first, marker = -1, -1
	end, err = p.AppendMarker(batch, pid, epoch, coordinatorEpoch, check, func(base int64) {
		marker = base
		pt := c.partState(p)
		pt.mu.Lock()
		if f, ok := pt.open[pid]; ok {
			first = f
			delete(pt.open, pid)
			if !commit {
				pt.aborted = append(pt.aborted, Aborted{PID: pid, First: f, Last: base})
			}
		}
		pt.mu.Unlock()
	})
	if err != nil {
		return 0, -1, -1, err
	}
	return end, first, marker, nil
}

// WriteTxnMarkers appends each request's markers to its partitions (see
// the broker's 27_write_txn_markers.go for Kafka's rules). refused is
// told of each partition refused before the markers' durability is
// awaited; a failure to make them durable answers KAFKA_STORAGE_ERROR for
// every partition that had succeeded.
func (c *Coordinator) WriteTxnMarkers(ctx context.Context, r *kmsg.WriteTxnMarkersRequest, resp *kmsg.WriteTxnMarkersResponse, refused func(topic string, partition int32, pid int64, code int16)) {
	var waits []pendingEnd
	var aborted []abortedRecord
	for _, m := range r.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		// Serialize with the producer's own requests when the coordinator
		// knows it (lock order: txnState before partition).
		ts := c.getPID(m.ProducerID)
		if ts != nil {
			ts.mu.Lock()
		}
		for _, mt := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			for _, part := range mt.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				p := c.parts.ByName(mt.Topic, part)
				switch {
				case m.ProducerID < 0 || m.ProducerEpoch < 0:
					rp.ErrorCode = kerr.InvalidRequest.Code
				case p == nil:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				default:
					check := c.markerCheck(p, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, r.Version >= 2 && m.TransactionVersion >= 2)
					end, first, marker, err := c.writeMarkerChecked(p, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed, check, c.now())
					switch {
					case errors.Is(err, ErrStaleMarkerEpoch):
						rp.ErrorCode = kerr.InvalidProducerEpoch.Code
					case errors.Is(err, ErrCoordinatorFenced):
						rp.ErrorCode = kerr.TransactionCoordinatorFenced.Code
					case err != nil:
						rp.ErrorCode = kerr.KafkaStorageError.Code
						c.slog.Error("writing a transaction marker", "topic", mt.Topic, "partition", part, "producer_id", m.ProducerID, "err", err)
					default:
						if !m.Committed && first >= 0 {
							id := p.TopicID()
							aborted = append(aborted, abortedRecord{Topic: hex.EncodeToString(id[:]), Partition: part, PID: m.ProducerID, First: first, Last: marker})
						}
						waits = append(waits, pendingEnd{p, end})
					}
				}
				if rp.ErrorCode != 0 && refused != nil {
					refused(mt.Topic, part, m.ProducerID, rp.ErrorCode)
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
		if err := c.log.append(true, record{Aborted: aborted}); err != nil {
			c.slog.Error("persisting aborted transactions", "err", err)
			storageFailed = true
		}
	}
	for _, w := range waits {
		if err := w.p.WaitDurable(ctx, w.end); err != nil {
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
}
