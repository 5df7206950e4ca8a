package broker

// DeleteRecords v0–v2.
//
// Moves a partition's log start offset forward (persisted by logstore).
// Offset -1 means the high watermark; an offset above the high watermark or
// below -1: OFFSET_OUT_OF_RANGE. The answer carries the new low watermark.
// With the authorizer on a topic needs DELETE, else
// TOPIC_AUTHORIZATION_FAILED per partition.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteRecords(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	resp.Version = req.Version
	az := b.authorizer(req)
	node, routed := b.reqNode(req)
	for _, rt := range r.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		t := b.lookupTopic(rt.Topic, [16]byte{})
		denied := !az.topic(opDelete, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			var p *partition
			if t != nil {
				p = t.partition(rp.Partition)
			}
			switch {
			case denied:
				sp.ErrorCode = errTopicAuth
			case p == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case b.leaderCode(node, routed, p) != 0:
				sp.ErrorCode = b.leaderCode(node, routed, p)
			default:
				hw := p.log.HighWatermark()
				off := rp.Offset
				if off == -1 {
					off = hw
				}
				if off < 0 || off > hw {
					sp.ErrorCode = kerr.OffsetOutOfRange.Code
					break
				}
				lw, err := p.log.DeleteRecords(off)
				if err != nil {
					sp.ErrorCode = errCode(err)
					b.log.Error("delete records", "topic", t.name, "partition", p.index, "err", err)
					break
				}
				sp.LowWatermark = lw
			}
			if sp.ErrorCode != 0 {
				b.logBad(req, "delete records rejected", "topic", rt.Topic, "partition", rp.Partition, "offset", rp.Offset, "error", kerr.ErrorForCode(sp.ErrorCode))
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
