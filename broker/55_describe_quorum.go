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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

const clusterMetadataTopic = "__cluster_metadata"

func (b *Broker) handleDescribeQuorum(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeQuorumRequest)
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	resp.Version = req.Version
	now := time.Now().UnixMilli()
	hw := 1 + b.metadataChanges.Load()
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeQuorumResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDescribeQuorumResponseTopicPartition()
			sp.Partition = rp.Partition
			if rt.Topic != clusterMetadataTopic || rp.Partition != 0 {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr("only " + clusterMetadataTopic + "-0 has a quorum")
				b.logBad(req, "describe quorum: not the metadata partition", "topic", rt.Topic, "partition", rp.Partition)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			// One voter, the controller; the other running nodes are
			// observers, as brokers of a KRaft cluster are.
			ctl := b.cl.Controller()
			sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = ctl, 1, hw
			voter := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			voter.ReplicaID, voter.LogEndOffset = ctl, hw
			voter.LastFetchTimestamp, voter.LastCaughtUpTimestamp = now, now
			sp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{voter}
			sp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
			for _, n := range b.cl.UpNodes() {
				if n.ID != ctl {
					o := voter
					o.ReplicaID = n.ID
					sp.Observers = append(sp.Observers, o)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
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
