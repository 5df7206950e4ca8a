// Package inspect reads a partition's records as a consumer sees them,
// for the control API's record inspection (minikafka's Broker.ReadRecords)
// without a Kafka client: the broker hands it a Partition (its store's
// offsets and raw batches, the transaction coordinator's aborted
// transactions) and it decodes them with kgo, as a consumer would. It
// imports neither broker nor protocol (internal/lint checks that).
package inspect

import (
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MaxRecords bounds one ReadRecords call.
const MaxRecords = 10000

// Aborted is an aborted transaction: its producer and first offset.
type Aborted struct {
	PID, First int64
}

// Partition is what ReadRecords needs of a partition.
type Partition interface {
	LogStart() int64
	HighWatermark() int64
	LastStable() int64
	// Read returns the raw record batches holding offsets first through
	// last (as Fetch would send them) and the offset after the last one
	// they cover.
	Read(first, last int64) (data []byte, covered int64, err error)
	// Aborted lists the transactions aborted in [from, to).
	Aborted(from, to int64) []Aborted
}

// ReadRecords returns up to limit records of p from offset on (capped at
// MaxRecords), decoded as a consumer sees them: control records
// (transaction markers) skipped, and with committed the records of
// aborted transactions skipped and nothing at or past the last stable
// offset, as a read_committed consumer; without it up to the high
// watermark. next is the offset to read from for the records after them.
// An offset below the log start reads from the log start; at or past the
// end, nothing. topic and partition name the records.
func ReadRecords(p Partition, topic string, partition int32, offset int64, limit int, committed bool) (recs []*kgo.Record, next int64, err error) {
	limit = min(limit, MaxRecords)
	next = offset
	for len(recs) < limit {
		next = max(next, p.LogStart())
		end := p.HighWatermark()
		lso := min(p.LastStable(), end)
		if committed {
			end = lso
		}
		if next >= end {
			return recs, next, nil
		}
		last := min(end-1, next+int64(limit-len(recs))-1)
		data, covered, err := p.Read(next, last)
		if err != nil {
			return recs, next, err
		}
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.Partition, fp.HighWatermark, fp.LastStableOffset, fp.LogStartOffset = partition, end, lso, p.LogStart()
		fp.RecordBatches = data
		iso := kgo.ReadUncommitted()
		if committed {
			iso = kgo.ReadCommitted()
			for _, a := range p.Aborted(next, covered) {
				at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				at.ProducerID, at.FirstOffset = a.PID, a.First
				fp.AbortedTransactions = append(fp.AbortedTransactions, at)
			}
		}
		got, after := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: next, Topic: topic, Partition: partition, IsolationLevel: iso,
		}, &fp, kgo.DefaultDecompressor(), nil)
		if got.Err != nil {
			return recs, next, got.Err
		}
		for _, r := range got.Records {
			if r.Offset >= next && r.Offset < end && len(recs) < limit {
				recs = append(recs, r)
				next = r.Offset + 1
			}
		}
		if after <= next && covered <= next {
			return recs, next, nil // nothing more decodable below end
		}
		next = max(next, min(max(after, covered), end))
	}
	return recs, next, nil
}
