package broker

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker/internal/inspect"
	"github.com/minikafka/minikafka/broker/internal/share"
)

// ReadRecords returns up to limit records of a partition from offset on
// (capped at 10 000), decoded as a consumer sees them: control
// records (transaction markers) skipped, and with committed the records
// of aborted transactions skipped and nothing at or past the last stable
// offset, as a read_committed consumer; without it up to the high
// watermark. next is the offset to read from for the records after them.
// An offset below the log start reads from the log start; at or past the
// end, nothing. The decoding is broker/internal/inspect's.
func (b *Broker) ReadRecords(topic string, partition int32, offset int64, limit int, committed bool) (recs []*kgo.Record, next int64, err error) {
	p := b.partitionOf(topic, partition)
	if p == nil {
		return nil, offset, ErrUnknownPartition
	}
	return inspect.ReadRecords(inspectPartition{b, p, b.storeOf(p)}, topic, partition, offset, limit, committed)
}

// inspectPartition is a partition as inspect.ReadRecords reads it.
type inspectPartition struct {
	b  *Broker
	p  *partition
	st partitionStore
}

func (ip inspectPartition) LogStart() int64      { return ip.st.logStart() }
func (ip inspectPartition) HighWatermark() int64 { return ip.st.highWatermark() }
func (ip inspectPartition) LastStable() int64    { return ip.st.lastStable() }

func (ip inspectPartition) Read(first, last int64) ([]byte, int64, error) {
	return share.ReadRecords(shareView{ip.b}, ip.p.topic.name, ip.p.index, first, last, nil)
}

func (ip inspectPartition) Aborted(from, to int64) []inspect.Aborted {
	var out []inspect.Aborted
	for _, a := range ip.b.txns.abortedIn(ip.p, from, to) {
		out = append(out, inspect.Aborted{PID: a.PID, First: a.First})
	}
	return out
}
