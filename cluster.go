package minikafka

import (
	"errors"

	"github.com/minikafka/minikafka/broker"
)

// The simulated cluster's controls (WithNodes). Each takes effect at once,
// as a controller's decision would reach every broker: clients find out
// through the errors of their next requests and their next metadata.

// NodeInfo is a node of the cluster as Nodes reports it.
type NodeInfo struct {
	ID         int32  `json:"id"`
	Rack       string `json:"rack,omitempty"`
	Up         bool   `json:"up"`
	Controller bool   `json:"controller"`
	// Addr is the advertised address of the node's first listener.
	Addr string `json:"addr"`
}

// Nodes lists the cluster's nodes (one without WithNodes).
func (b *Broker) Nodes() []NodeInfo {
	var out []NodeInfo
	for _, n := range b.brk.Nodes() {
		ni := NodeInfo{ID: n.ID, Rack: n.Rack, Up: n.Up, Controller: n.Controller}
		for _, l := range b.listeners {
			if l.Node == n.ID {
				ni.Addr = l.Advertised
				break
			}
		}
		out = append(out, ni)
	}
	return out
}

// StopNode stops a node as if its broker died: its listeners stop
// accepting and its connections close, its partition leaderships move to
// another in-sync replica with a new leader epoch (a partition with no
// other is offline), it leaves every ISR, and the group and transaction
// coordinators it held move to a running node. Nothing acknowledged is
// lost: the data is shared.
func (b *Broker) StopNode(id int32) error {
	if err := b.brk.StopNode(id); err != nil {
		return err
	}
	b.nodeMu.Lock()
	defer b.nodeMu.Unlock()
	if b.stopped == nil {
		b.stopped = map[int32]bool{}
	}
	b.stopped[id] = true
	for i, s := range b.srvs {
		if b.listeners[i].Node == id {
			_ = s.SetRefusing(true) // going down cannot fail
		}
	}
	b.log.Info("node stopped", "node", id)
	return nil
}

// StartNode starts a stopped node again: its listeners bind their
// addresses again, it rejoins the ISRs of its replicas and leads the
// partitions that were offline. The leaderships it had come back through
// ElectLeaders (or WithAutoLeaderRebalance). It fails if a port was taken
// meanwhile.
func (b *Broker) StartNode(id int32) error {
	b.nodeMu.Lock()
	defer b.nodeMu.Unlock()
	var errs []error
	for i, s := range b.srvs {
		if b.listeners[i].Node == id {
			errs = append(errs, s.SetRefusing(false))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	delete(b.stopped, id)
	return b.brk.StartNode(id)
}

// MoveLeader makes node lead a partition, with a new leader epoch; node
// must be one of its in-sync replicas.
func (b *Broker) MoveLeader(topic string, partition, node int32) error {
	return b.brk.MoveLeader(topic, partition, node)
}

// SetISR sets a partition's in-sync replicas (replicas of it on running
// nodes). With fewer than the topic's min.insync.replicas, produce with
// acks=all is refused with NOT_ENOUGH_REPLICAS; acks=1 still succeeds. A
// leader left out of isr gives way to the first of it.
func (b *Broker) SetISR(topic string, partition int32, isr ...int32) error {
	return b.brk.SetISR(topic, partition, isr)
}

// MoveCoordinator makes node the coordinator of a group (kind "group") or
// transactional ID ("transaction"), and of the other keys of its
// coordinator partition, as a leader move of __consumer_offsets or
// __transaction_state would.
func (b *Broker) MoveCoordinator(kind, key string, node int32) error {
	return b.brk.MoveCoordinator(kind, key, node)
}

// Coordinator is the node coordinating a group ("group") or
// transactional ID ("transaction").
func (b *Broker) Coordinator(kind, key string) (int32, error) { return b.brk.Coordinator(kind, key) }

// PartitionPlacement is where a partition is in the cluster.
type PartitionPlacement = broker.PartitionPlacement

// Placement reports a partition's replicas, ISR, leader and leader epoch.
func (b *Broker) Placement(topic string, partition int32) (PartitionPlacement, error) {
	return b.brk.Placement(topic, partition)
}

// nodeStopped reports whether StopNode is in force for a listener's node
// (Up leaves such listeners down).
func (b *Broker) nodeStopped(node int32) bool {
	b.nodeMu.Lock()
	defer b.nodeMu.Unlock()
	return b.stopped[node]
}
