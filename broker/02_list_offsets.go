package broker

// ListOffsets v1–v11.
//
// Special timestamps: -1 latest (the high watermark, or under
// read_committed isolation (v2+) the last stable offset), -2
// earliest (log start offset), -3 max timestamp (v7+, KIP-734: the offset
// and timestamp of the record with the largest timestamp), -4 earliest
// local (v8+, KIP-405: the log start offset, everything is local), -5
// latest tiered (v9+: nothing is tiered, so -1/-1, as Kafka without remote
// storage). Any other timestamp finds the first record with a timestamp at
// or after it below the high watermark, or -1/-1 when there is none.
// LeaderEpoch is our single epoch 0 for found offsets, -1 otherwise.
// CurrentLeaderEpoch (v4+) is checked like Fetch. With the authorizer on
// a topic needs DESCRIBE, else TOPIC_AUTHORIZATION_FAILED per partition.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListOffsets(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	resp.Version = req.Version
	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(r.Topics))
	az := b.authorizer(req)
	node, routed := b.reqNode(req)
	for ti := range r.Topics {
		rt := &r.Topics[ti]
		st := &resp.Topics[ti]
		*st = kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		denied := !az.topic(opDescribe, rt.Topic)
		st.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			sp := &st.Partitions[pi]
			*sp = kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Offset, sp.Timestamp, sp.LeaderEpoch = -1, -1, -1
			if denied {
				sp.ErrorCode = errTopicAuth
				continue
			}
			var p *partition
			if t != nil {
				p = t.partition(rp.Partition)
			}
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				b.logBad(req, "list offsets: unknown topic or partition", "topic", rt.Topic, "partition", rp.Partition)
				continue
			}
			if sp.ErrorCode = b.leaderCode(node, routed, p); sp.ErrorCode != 0 {
				continue
			}
			if req.Version >= 4 {
				if sp.ErrorCode = leaderEpochCode(p, rp.CurrentLeaderEpoch); sp.ErrorCode != 0 {
					continue
				}
			}
			if sp.ErrorCode = partitionFault(ctx, t.name, p.index); sp.ErrorCode != 0 {
				continue
			}
			st := b.storeOf(p)
			off, ts, found, err := st.listOffset(rp.Timestamp)
			if rp.Timestamp == -1 && req.Version >= 2 && r.IsolationLevel == 1 {
				off = st.lastStable()
			}
			if err != nil {
				sp.ErrorCode = errCode(err)
				b.log.Error("list offsets", "topic", t.name, "partition", p.index, "err", err)
				continue
			}
			if found {
				// The epoch of the batch holding the offset; the log's
				// end belongs to the current one.
				pl := p.place.Load()
				sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, pl.Epoch
				if off < st.logEnd() {
					sp.LeaderEpoch = pl.EpochAt(off)
				}
			}
		}
	}
	return protocol.Reply{Response: resp}
}
