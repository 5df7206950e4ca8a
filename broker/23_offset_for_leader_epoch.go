package broker

// OffsetForLeaderEpoch v0–v4.
//
// Answered from the partition's leader epochs (cluster.go: one, 0, until
// a leader moves): the current epoch ends at the log end offset, an older
// one where the next began, a newer one is UNDEFINED (-1/-1), as Kafka's
// leader epoch cache answers. Sent to a node that does not lead the
// partition: NOT_LEADER_OR_FOLLOWER. CurrentLeaderEpoch (v2+) is checked
// like Fetch. With the authorizer on
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
	node, routed := b.reqNode(req)
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
			case b.leaderCode(node, routed, p) != 0:
				sp.ErrorCode = b.leaderCode(node, routed, p)
			case req.Version >= 2 && leaderEpochCode(p, rp.CurrentLeaderEpoch) != 0:
				sp.ErrorCode = leaderEpochCode(p, rp.CurrentLeaderEpoch)
			default:
				sp.LeaderEpoch, sp.EndOffset = p.place.Load().EpochEnd(rp.LeaderEpoch, b.storeOf(p).logEnd())
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
