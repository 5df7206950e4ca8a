package cluster

// Placement changes: what a partition's placement becomes when a node
// stops or starts, its ISR is set, it is reassigned or a leader is
// elected. Each returns a new Placement (nil when nothing changes) whose
// epoch the broker sets with Follow, under the partition's lock, as it
// stores it.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrUnknownNode is returned by cluster changes naming a node that is not
// in the cluster.
var ErrUnknownNode = errors.New("broker: unknown node")

// Running is nil for a node of the cluster that is up, else why not.
func (cs *State) Running(node int32) error {
	switch {
	case cs.Index(node) < 0:
		return cs.UnknownNode(node)
	case !cs.IsUp(node):
		return fmt.Errorf("broker: node %d is stopped", node)
	}
	return nil
}

// UnknownNode is ErrUnknownNode for node, naming the cluster's nodes.
func (cs *State) UnknownNode(node int32) error {
	return fmt.Errorf("%w %d (nodes %v)", ErrUnknownNode, node, cs.NodeIDs())
}

// Follow sets pl's leader epoch from cur, the placement it replaces: a new
// leader starts the next epoch at logEnd; otherwise pl keeps cur's
// epochs. It reports whether pl differs from cur.
func (pl *Placement) Follow(cur *Placement, logEnd int64) bool {
	if pl.Leader != cur.Leader {
		pl.Epoch = cur.Epoch + 1
		pl.Epochs = append(slices.Clone(cur.Epochs), EpochStart{Epoch: pl.Epoch, Start: logEnd})
		return true
	}
	pl.Epoch, pl.Epochs = cur.Epoch, cur.Epochs
	return !slices.Equal(pl.ISR, cur.ISR) || !slices.Equal(pl.Replicas, cur.Replicas)
}

// leadFromISR gives a leader that is not in the ISR's place to the first
// in-sync replica (none: the partition is offline).
func (pl *Placement) leadFromISR() {
	if !pl.InISR(pl.Leader) {
		pl.Leader = -1
		if len(pl.ISR) > 0 {
			pl.Leader = pl.ISR[0]
		}
	}
}

// Stopped is cur once node id has died: out of the ISR, its leadership
// gone to the next in-sync replica. Nil when id is not a replica.
func Stopped(cur *Placement, id int32) *Placement {
	if !slices.Contains(cur.Replicas, id) {
		return nil
	}
	pl := cur.Clone()
	pl.ISR = InOrder(cur.Replicas, func(r int32) bool { return r != id && cur.InISR(r) })
	if pl.Leader == id {
		pl.Leader = -1
		if len(pl.ISR) > 0 {
			pl.Leader = pl.ISR[0]
		}
	}
	return pl
}

// Started is cur once node id is back: in the ISR again (the data is
// shared, so it is caught up), and leading if the partition had no
// leader. Nil when id is not a replica.
func Started(cur *Placement, id int32) *Placement {
	if !slices.Contains(cur.Replicas, id) {
		return nil
	}
	pl := cur.Clone()
	pl.ISR = InOrder(cur.Replicas, func(r int32) bool { return r == id || cur.InISR(r) })
	if pl.Leader < 0 {
		pl.Leader = id
	}
	return pl
}

// Reassigned is cur moved to replicas at once (the data is shared): its
// ISR the running ones, its leader kept if it is one of them.
func (cs *State) Reassigned(cur *Placement, replicas []int32) *Placement {
	pl := cur.Clone()
	pl.Replicas = slices.Clone(replicas)
	pl.ISR = InOrder(replicas, cs.IsUp)
	pl.leadFromISR()
	return pl
}

// CheckReassignment is AlterPartitionReassignments' code and message for
// one partition's target replicas; cur is nil for an unknown partition.
func (cs *State) CheckReassignment(cur *Placement, replicas []int32, allowRFChange bool) (int16, string) {
	if cur == nil {
		return kerr.UnknownTopicOrPartition.Code, "This server does not host this topic-partition."
	}
	if replicas == nil {
		return kerr.NoReassignmentInProgress.Code, "No ongoing reassignment for this partition."
	}
	if len(replicas) == 0 {
		return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."
	}
	if n := len(cur.Replicas); len(replicas) != n && !allowRFChange {
		return kerr.InvalidReplicationFactor.Code, fmt.Sprintf("The replication factor is changed from %d to %d, and the request does not allow replication factor changes.", n, len(replicas))
	}
	seen := map[int32]bool{}
	for _, id := range replicas {
		if seen[id] {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
		seen[id] = true
		if cs.Index(id) < 0 {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
	}
	return 0, ""
}

// Preferred is cur led by its first replica (a preferred leader
// election), nil unless that replica is an in-sync replica that is up and
// does not lead already.
func (cs *State) Preferred(cur *Placement) *Placement {
	pref := cur.Replicas[0]
	if cur.Leader == pref || !cur.InISR(pref) || !cs.IsUp(pref) {
		return nil
	}
	pl := cur.Clone()
	pl.Leader = pref
	return pl
}

// Elect is ElectLeaders for one partition: the new placement, or nil
// with Kafka's code and message for why not. PREFERRED (unclean false)
// elects the first replica if it is an in-sync replica that is up;
// UNCLEAN elects the first running replica of a partition without a
// leader, in or out of the ISR.
func (cs *State) Elect(cur *Placement, unclean bool) (*Placement, int16, string) {
	const notNeeded = "Leader election not needed for topic partition"
	if unclean {
		if cur.Leader >= 0 {
			return nil, kerr.ElectionNotNeeded.Code, notNeeded
		}
		for _, r := range cur.Replicas {
			if cs.IsUp(r) {
				pl := cur.Clone()
				pl.Leader, pl.ISR = r, []int32{r}
				return pl, 0, ""
			}
		}
		return nil, kerr.EligibleLeadersNotAvailable.Code, "No running replica can lead the partition"
	}
	if cur.Leader == cur.Replicas[0] {
		return nil, kerr.ElectionNotNeeded.Code, notNeeded
	}
	if pl := cs.Preferred(cur); pl != nil {
		return pl, 0, ""
	}
	return nil, kerr.PreferredLeaderNotAvailable.Code, "Failed to elect leader for partition: the preferred replica is not an in-sync replica that is up"
}
