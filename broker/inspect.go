package broker

import "errors"

// Inspection for tests and operators (the control API, minikafka's
// Broker.Partition and friends): read-only views of the broker's state
// taken without a Kafka client, each a copy so callers cannot race the
// handlers.

// ErrUnknownPartition is returned by the inspection methods for a topic or
// partition the broker does not have.
var ErrUnknownPartition = errors.New("unknown topic or partition")

// PartitionOffsets are a partition's log start, high watermark and last
// stable offset (the bound of read_committed consumers).
type PartitionOffsets struct {
	LogStart, HighWatermark, LastStable int64
}

// PartitionOffsets reports a partition's offsets.
func (b *Broker) PartitionOffsets(topic string, partition int32) (PartitionOffsets, error) {
	p := b.partitionOf(topic, partition)
	if p == nil {
		return PartitionOffsets{}, ErrUnknownPartition
	}
	st := b.storeOf(p)
	hw := st.highWatermark()
	return PartitionOffsets{LogStart: st.logStart(), HighWatermark: hw, LastStable: min(st.lastStable(), hw)}, nil
}

// CommittedOffset is one committed offset of a group.
type CommittedOffset struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	CommitMs    int64
}

// GroupOffsets lists a group's committed offsets, sorted by topic and
// partition; empty for a group with none.
func (b *Broker) GroupOffsets(group string) []CommittedOffset {
	cs := b.groups.GroupOffsets(group)
	out := make([]CommittedOffset, len(cs))
	for i, c := range cs {
		out[i] = CommittedOffset{Topic: c.Topic, Partition: c.Partition, Offset: c.Offset.Offset,
			LeaderEpoch: c.Offset.LeaderEpoch, Metadata: c.Offset.Metadata, CommitMs: c.Offset.CommitMs}
	}
	return out
}

// GroupState is a group as the coordinator holds it in memory: type
// ("classic" or "consumer"), Kafka's state name, epoch (generation or
// consumer group epoch), member count and member ids not yet joined.
type GroupState struct {
	Type, State      string
	Epoch            int32
	Members, Pending int
}

// GroupState reports a group's state; false for a group the coordinator
// does not hold in memory.
func (b *Broker) GroupState(group string) (GroupState, bool) {
	g, ok := b.groups.Group(group)
	if !ok {
		return GroupState{}, false
	}
	return GroupState{Type: g.Type, State: g.State, Epoch: g.Epoch, Members: g.Members, Pending: g.Pending}, true
}
