package broker

import (
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxInspectRecords bounds one ReadRecords call.
const maxInspectRecords = 10000

// ReadRecords returns up to limit records of a partition from offset on
// (capped at 10 000), decoded as a consumer sees them: control
// records (transaction markers) skipped, and with committed the records
// of aborted transactions skipped and nothing at or past the last stable
// offset, as a read_committed consumer; without it up to the high
// watermark. next is the offset to read from for the records after them.
// An offset below the log start reads from the log start; at or past the
// end, nothing.
func (b *Broker) ReadRecords(topic string, partition int32, offset int64, limit int, committed bool) (recs []*kgo.Record, next int64, err error) {
	t := b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return nil, offset, ErrUnknownPartition
	}
	p := t.partition(partition)
	if p == nil {
		return nil, offset, ErrUnknownPartition
	}
	limit = min(limit, maxInspectRecords)
	st := b.storeOf(p)
	next = offset
	for len(recs) < limit {
		next = max(next, st.logStart())
		end := st.highWatermark()
		lso := min(st.lastStable(), end)
		if committed {
			end = lso
		}
		if next >= end {
			return recs, next, nil
		}
		last := min(end-1, next+int64(limit-len(recs))-1)
		data, covered, err := b.readShareRecords(p, next, last, nil)
		if err != nil {
			return recs, next, err
		}
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.Partition, fp.HighWatermark, fp.LastStableOffset, fp.LogStartOffset = partition, end, lso, st.logStart()
		fp.RecordBatches = data
		iso := kgo.ReadUncommitted()
		if committed {
			iso = kgo.ReadCommitted()
			for _, a := range b.txns.abortedIn(p, next, covered) {
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
