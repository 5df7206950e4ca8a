package broker

// OffsetForLeaderEpoch v0–v4.
//
// Every partition has had one leader epoch, 0, since its first record. A
// request for epoch 0 gets epoch 0 and the log end offset (Kafka answers
// the latest epoch with the log end offset); any other epoch gets
// UNDEFINED (-1/-1), as Kafka does for epochs it never had.
// CurrentLeaderEpoch (v2+) is checked like Fetch. With the authorizer on
// a topic needs DESCRIBE, else TOPIC_AUTHORIZATION_FAILED per partition.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetForLeaderEpoch(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	resp.Version = req.Version
	az := b.authorizer(req)
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		denied := !az.topic(opDescribe, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			var p *partition
			if t != nil {
				p = t.partition(rp.Partition)
			}
			switch {
			case denied:
				sp.ErrorCode = errTopicAuth
			case p == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				b.logBad(req, "offset for leader epoch: unknown topic or partition", "topic", rt.Topic, "partition", rp.Partition)
			case partitionFault(ctx, t.name, p.index) != 0:
				sp.ErrorCode = partitionFault(ctx, t.name, p.index)
			case req.Version >= 2 && checkLeaderEpoch(rp.CurrentLeaderEpoch) != 0:
				sp.ErrorCode = checkLeaderEpoch(rp.CurrentLeaderEpoch)
			case rp.LeaderEpoch == leaderEpoch:
				sp.LeaderEpoch, sp.EndOffset = leaderEpoch, b.storeOf(p).logEnd()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
