package cluster

// Changing many placements at once: a node that stops or starts, a
// preferred leader election of every partition, ElectLeaders and
// AlterPartitionReassignments. The broker's partitions are seen through
// Partitions; the caller holds the broker's admin lock, so the topic
// table does not change under these.

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partitions is the broker's partitions as the cluster's changes see them.
type Partitions interface {
	// Topics names every topic.
	Topics() []string
	// Placement is a partition's placement, nil for an unknown one.
	Placement(topic string, partition int32) *Placement
	// Set stores pl as the partition's placement, its epoch following
	// the current one (Placement.Follow, taken under the lock appends
	// stamp epochs under); false when nothing changed.
	Set(topic string, partition int32, pl *Placement) bool
	// Persist writes a topic's placements after a change.
	Persist(topic string) error
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Apply stores change(cur) for every partition where it is not nil and
// persists the topics that changed; it returns the partitions that did.
func Apply(ps Partitions, change func(topic string, partition int32, cur *Placement) *Placement) ([]TopicPartition, error) {
	var errs []error
	var changed []TopicPartition
	for _, t := range ps.Topics() {
		n := len(changed)
		for i := int32(0); ; i++ {
			cur := ps.Placement(t, i)
			if cur == nil {
				break
			}
			if pl := change(t, i, cur); pl != nil && ps.Set(t, i, pl) {
				changed = append(changed, TopicPartition{t, i})
			}
		}
		if len(changed) > n {
			if err := ps.Persist(t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return changed, errors.Join(errs...)
}

// ElectLeaders answers ElectLeaders (election type 0 or 1) over ps: see
// Elect for each partition. A request for every partition (null topics)
// lists only the partitions elected or failed, as Kafka does. Unclean
// elections are logged as warnings, persist failures as errors.
func (cs *State) ElectLeaders(ps Partitions, r *kmsg.ElectLeadersRequest, log *slog.Logger) []kmsg.ElectLeadersResponseTopic {
	type target struct {
		name  string
		parts []int32
	}
	var targets []target
	all := r.Topics == nil
	if all {
		names := ps.Topics()
		slices.Sort(names)
		for _, name := range names {
			tg := target{name: name}
			for i := int32(0); ps.Placement(name, i) != nil; i++ {
				tg.parts = append(tg.parts, i)
			}
			targets = append(targets, tg)
		}
	}
	for _, rt := range r.Topics {
		targets = append(targets, target{rt.Topic, rt.Partitions})
	}
	unclean := r.ElectionType == 1
	var out []kmsg.ElectLeadersResponseTopic
	for _, tg := range targets {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = tg.name
		changed := false
		for _, i := range tg.parts {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = i
			cur := ps.Placement(tg.name, i)
			if cur == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr("The topic or partition does not exist on this broker")
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			pl, code, msg := cs.Elect(cur, unclean)
			if pl != nil {
				ps.Set(tg.name, i, pl)
				changed = true
				if unclean {
					log.Warn("unclean leader election", "topic", tg.name, "partition", i, "leader", pl.Leader)
				}
			}
			if all && code == kerr.ElectionNotNeeded.Code {
				continue
			}
			sp.ErrorCode = code
			if msg != "" {
				sp.ErrorMessage = kmsg.StringPtr(msg)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		if changed {
			if err := ps.Persist(tg.name); err != nil {
				log.Error("persisting elected leaders", "err", err)
			}
		}
		if len(st.Partitions) > 0 || !all {
			out = append(out, st)
		}
	}
	return out
}

// Reassign answers AlterPartitionReassignments over ps: each partition
// whose target CheckReassignment accepts is Reassigned at once; refused
// is told of the others.
func (cs *State) Reassign(ps Partitions, r *kmsg.AlterPartitionAssignmentsRequest, allowRFChange bool, log *slog.Logger, refused func(topic string, partition int32, msg string)) []kmsg.AlterPartitionAssignmentsResponseTopic {
	var out []kmsg.AlterPartitionAssignmentsResponseTopic
	for _, rt := range r.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		changed := false
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			cur := ps.Placement(rt.Topic, rp.Partition)
			code, msg := cs.CheckReassignment(cur, rp.Replicas, allowRFChange)
			if code != 0 {
				sp.ErrorCode, sp.ErrorMessage = code, &msg
				refused(rt.Topic, rp.Partition, msg)
			} else if pl := cs.Reassigned(cur, rp.Replicas); ps.Set(rt.Topic, rp.Partition, pl) {
				log.Info("partition reassigned", "topic", rt.Topic, "partition", rp.Partition, "replicas", rp.Replicas, "leader", pl.Leader)
				changed = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		if changed {
			if err := ps.Persist(rt.Topic); err != nil {
				log.Error("persisting reassignment", "err", err)
			}
		}
		out = append(out, st)
	}
	return out
}

// SetNodeUp stops (up false) or starts node id: its placements change as
// Stopped or Started say, and a stopped node's coordinator slots move to
// nodes that are up.
func (cs *State) SetNodeUp(ps Partitions, id int32, up bool, log *slog.Logger) error {
	was, ok := cs.SetUp(id, up)
	if !ok {
		return cs.UnknownNode(id)
	}
	if was == up {
		return nil
	}
	change := Started
	if up {
		log.Info("node started", "node", id)
	} else {
		log.Info("node stopped", "node", id)
		cs.MoveSlotsOff(id)
		change = Stopped
	}
	_, err := Apply(ps, func(_ string, _ int32, cur *Placement) *Placement { return change(cur, id) })
	return err
}

// MoveLeader makes node lead the partition, with a new leader epoch; node
// must be an in-sync replica that is up. The partition must exist.
func (cs *State) MoveLeader(ps Partitions, topic string, partition, node int32, log *slog.Logger) error {
	if err := cs.Running(node); err != nil {
		return err
	}
	cur := ps.Placement(topic, partition)
	switch {
	case !cur.InISR(node):
		return fmt.Errorf("broker: node %d is not an in-sync replica of %s-%d (ISR %v)", node, topic, partition, cur.ISR)
	case cur.Leader == node:
		return nil
	}
	pl := cur.Clone()
	pl.Leader = node
	ps.Set(topic, partition, pl)
	log.Info("partition leader moved", "topic", topic, "partition", partition, "leader", node, "epoch", pl.Epoch)
	return ps.Persist(topic)
}

// SetISR makes isr (replicas that are up) the partition's in-sync
// replicas, in replica order; a leader left out gives way to the first of
// them, and an empty isr leaves the partition offline. The partition must
// exist.
func (cs *State) SetISR(ps Partitions, topic string, partition int32, isr []int32, log *slog.Logger) error {
	cur := ps.Placement(topic, partition)
	for _, r := range isr {
		if !slices.Contains(cur.Replicas, r) {
			return fmt.Errorf("broker: node %d is not a replica of %s-%d (replicas %v)", r, topic, partition, cur.Replicas)
		}
		if !cs.IsUp(r) {
			return fmt.Errorf("broker: node %d is stopped", r)
		}
	}
	pl := cur.Clone()
	pl.ISR = InOrder(cur.Replicas, func(r int32) bool { return slices.Contains(isr, r) })
	pl.leadFromISR()
	if !ps.Set(topic, partition, pl) {
		return nil
	}
	log.Info("partition ISR set", "topic", topic, "partition", partition, "isr", pl.ISR, "leader", pl.Leader)
	return ps.Persist(topic)
}
