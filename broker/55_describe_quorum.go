package broker

// DescribeQuorum v0–v2.
//
// Kafka 4 is always KRaft, and tools (kafka-metadata-quorum, admin
// clients) ask for the quorum of __cluster_metadata partition 0. This node
// is its single voter and its leader, at epoch 1; there are no observers.
// minikafka keeps no metadata log, so the high watermark and the voter's
// log end offset are the count of topic changes (creations, deletions,
// partition additions) since start, which moves as a metadata log's would.
// Any other topic or partition gets UNKNOWN_TOPIC_OR_PARTITION, as
// Kafka's raft client answers. v2 lists the node with the listener the
// request came in on.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeQuorum(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeQuorumRequest)
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	resp.Version = req.Version
	resp.Topics = b.cl.Quorum(r, 1+b.metadataChanges.Load(), time.Now().UnixMilli())
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				b.logBad(req, "describe quorum: not the metadata partition", "topic", t.Topic, "partition", p.Partition)
			}
		}
	}
	if req.Version >= 2 {
		name := req.Conn.Listener
		if name == "" {
			name = "PLAINTEXT"
		}
		for _, mb := range b.metadataBrokers(req) {
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = mb.NodeID
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			l.Name, l.Host, l.Port = name, mb.Host, uint16(mb.Port)
			n.Listeners = []kmsg.DescribeQuorumResponseNodeListener{l}
			resp.Nodes = append(resp.Nodes, n)
		}
	}
	return protocol.Reply{Response: resp}
}
