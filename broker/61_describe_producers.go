package broker

// DescribeProducers v0.
//
// Lists the producers a partition holds idempotence state for: producer
// ID, epoch, last sequence, last write time, and the first offset of the
// producer's open transaction on that partition (-1 if none), as
// kafka-transactions.sh describe-producers shows them. Coordinator epochs
// are not tracked (-1).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeProducers(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeProducersRequest)
	resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
	resp.Version = req.Version
	node, routed := b.reqNode(req)
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		for _, i := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = i
			var p *partition
			if t != nil {
				p = t.partition(i)
			}
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if sp.ErrorCode = b.leaderCode(node, routed, p); sp.ErrorCode != 0 {
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			open := b.txns.OpenTransactions(p)
			p.mu.Lock()
			if !p.producers.Loaded() {
				p.loadProducerState(b.log, b.now())
			}
			p.producers.Each(func(pid int64, ps *producers.Entry) {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = pid, int32(ps.Epoch), ps.LastSeq
				ap.LastTimestamp = ps.Updated.UnixMilli()
				ap.CoordinatorEpoch = ps.CoordinatorEpoch()
				ap.CurrentTxnStartOffset = -1
				if f, ok := open[pid]; ok {
					ap.CurrentTxnStartOffset = f
				}
				sp.ActiveProducers = append(sp.ActiveProducers, ap)
			})
			p.mu.Unlock()
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
