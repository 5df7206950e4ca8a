package cluster

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MetadataTopic is KRaft's metadata log, the one partition with a quorum.
const MetadataTopic = "__cluster_metadata"

// Quorum answers DescribeQuorum's topics: __cluster_metadata-0's single
// voter is the controller, at epoch 1, its log end and the high watermark
// hw; the other running nodes are observers, as brokers of a KRaft
// cluster are. Any other partition is UNKNOWN_TOPIC_OR_PARTITION. now is
// the replicas' fetch and caught-up time (Unix ms).
func (cs *State) Quorum(r *kmsg.DescribeQuorumRequest, hw, now int64) []kmsg.DescribeQuorumResponseTopic {
	var out []kmsg.DescribeQuorumResponseTopic
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeQuorumResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDescribeQuorumResponseTopicPartition()
			sp.Partition = rp.Partition
			if rt.Topic != MetadataTopic || rp.Partition != 0 {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr("only " + MetadataTopic + "-0 has a quorum")
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			ctl := cs.Controller()
			sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = ctl, 1, hw
			voter := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			voter.ReplicaID, voter.LogEndOffset = ctl, hw
			voter.LastFetchTimestamp, voter.LastCaughtUpTimestamp = now, now
			sp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{voter}
			sp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
			for _, n := range cs.UpNodes() {
				if n.ID != ctl {
					o := voter
					o.ReplicaID = n.ID
					sp.Observers = append(sp.Observers, o)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		out = append(out, st)
	}
	return out
}
