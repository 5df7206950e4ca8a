package broker

// The simulated cluster (Config.Nodes): broker/internal/cluster's doc
// has the model. Here: routing requests by it, the embedding program's
// cluster changes and the partitions as those changes see them.
//
// Placement changes are made under adminMu (they rewrite topic.json);
// a leader change also takes the partition's mu, the lock appends stamp
// the epoch under, so each epoch's first offset is exact.

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/broker/internal/errresp"
	"github.com/minikafka/minikafka/protocol"
)

// NodeSpec is one node of the simulated cluster.
type NodeSpec = cluster.Node

// placement is a partition's place in the cluster (broker/internal/cluster);
// partition.place holds one, replaced whole.
type placement = cluster.Placement

const (
	coordGroup = cluster.GroupCoordinator
	coordTxn   = cluster.TxnCoordinator
)

// reqNode is the node req was sent to. ok is false when the request is
// not routed: one node only, or a request of the embedding program or the
// console, which every node answers.
func (b *Broker) reqNode(req *protocol.Request) (int32, bool) {
	if !b.cl.Multi() || req == nil || req.Conn == nil || !req.Conn.FromNetwork() {
		return 0, false
	}
	if _, ok := b.listener(req); !ok {
		return 0, false
	}
	return req.Conn.Node, true
}

// leaderCode is the error for a partition request sent to node: 0 when
// node leads the partition (or the request is not routed).
func (b *Broker) leaderCode(node int32, routed bool, p *partition) int16 {
	if !routed {
		return 0
	}
	if p.place.Load().Leader != node {
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// replicaCode is leaderCode for reads a follower may serve (Fetch v11+,
// KIP-392): any in-sync replica will do.
func (b *Broker) replicaCode(node int32, routed bool, p *partition) int16 {
	if !routed {
		return 0
	}
	if pl := p.place.Load(); pl.Leader != node && (pl.Leader < 0 || !pl.InISR(node)) {
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// leaderEpochCode compares a client's CurrentLeaderEpoch with the
// partition's.
func leaderEpochCode(p *partition, e int32) int16 {
	if e < 0 {
		return 0 // no check requested
	}
	cur := p.place.Load().Epoch
	switch {
	case e > cur:
		return kerr.UnknownLeaderEpoch.Code
	case e < cur:
		return kerr.FencedLeaderEpoch.Code
	}
	return 0
}

// ErrUnknownNode is returned by cluster changes naming a node that is not
// in the cluster.
var ErrUnknownNode = cluster.ErrUnknownNode

// NodeState is a node as Nodes reports it.
type NodeState = cluster.NodeState

// Nodes lists the cluster's nodes.
func (b *Broker) Nodes() []NodeState { return b.cl.NodeStates() }

// PartitionPlacement is a partition's replicas, ISR, leader and epoch.
type PartitionPlacement = cluster.Where

// Placement reports where a partition is.
func (b *Broker) Placement(topic string, partition int32) (PartitionPlacement, error) {
	p, err := b.findPartition(topic, partition)
	if err != nil {
		return PartitionPlacement{}, err
	}
	return p.place.Load().Where(), nil
}

// Coordinator is the node coordinating a group ("group") or a
// transactional ID ("transaction").
func (b *Broker) Coordinator(kind, key string) (int32, error) {
	k, err := cluster.KindOf(kind)
	if err != nil {
		return -1, err
	}
	return b.cl.Coordinator(k, key), nil
}

func (b *Broker) findPartition(topic string, partition int32) (*partition, error) {
	t := b.lookupTopic(topic, [16]byte{})
	if t == nil {
		return nil, fmt.Errorf("broker: unknown topic %q", topic)
	}
	p := t.partition(partition)
	if p == nil {
		return nil, fmt.Errorf("broker: topic %q has no partition %d", topic, partition)
	}
	return p, nil
}

// partitionOf is the named partition, nil when there is none.
func (b *Broker) partitionOf(topic string, partition int32) *partition {
	if t := b.lookupTopic(topic, [16]byte{}); t != nil {
		return t.partition(partition)
	}
	return nil
}

// changePlacement stores pl as p's placement; when its leader differs
// from the current one, the epoch is bumped and its first offset recorded
// under p.mu (the lock appends stamp epochs under). It reports whether
// anything changed. The caller holds adminMu and persists the topic.
func (b *Broker) changePlacement(p *partition, pl *placement) bool {
	st := b.storeOf(p) // before p.mu: opening a forwarded partition's spool takes it
	p.mu.Lock()
	defer p.mu.Unlock()
	if !pl.Follow(p.place.Load(), st.logEnd()) {
		return false
	}
	p.place.Store(pl)
	return true
}

// persistPlacementLocked writes t's placements to its topic.json after a
// change (and counts it for DescribeQuorum); the caller holds adminMu.
func (b *Broker) persistPlacementLocked(t *topic) error {
	b.metadataChanges.Add(1)
	if err := b.writeTopicMeta(t, t.partitions(), t.cfg.Load().Set); err != nil {
		return fmt.Errorf("broker: persisting %s's placement: %w", t.name, err)
	}
	return nil
}

// clusterView is the broker's partitions as the cluster's changes see
// them (cluster.Partitions); its user holds adminMu.
type clusterView struct{ b *Broker }

func (v clusterView) Topics() []string {
	byName := v.b.topics.Load().byName
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	return names
}

func (v clusterView) Placement(topic string, i int32) *placement {
	if p := v.b.partitionOf(topic, i); p != nil {
		return p.place.Load()
	}
	return nil
}

func (v clusterView) Set(topic string, i int32, pl *placement) bool {
	return v.b.changePlacement(v.b.partitionOf(topic, i), pl)
}

func (v clusterView) Persist(topic string) error {
	return v.b.persistPlacementLocked(v.b.lookupTopic(topic, [16]byte{}))
}

// StopNode takes a node down, as a broker that died: it leaves every ISR,
// its leaderships move to the next in-sync replica that is up (the
// partition is offline when there is none), and the coordinators it held
// move to the next node that is up. Its listeners are the embedding
// program's to close.
func (b *Broker) StopNode(id int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	return b.cl.SetNodeUp(clusterView{b}, id, false, b.log)
}

// StartNode brings a stopped node back: it rejoins the ISR of its
// replicas (the data is shared, so it is caught up) and leads the
// partitions that had no leader. Leadership of the others returns to it
// through ElectLeaders or auto.leader.rebalance.enable.
func (b *Broker) StartNode(id int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	return b.cl.SetNodeUp(clusterView{b}, id, true, b.log)
}

// MoveLeader makes node lead the partition, with a new leader epoch. The
// node must be an in-sync replica that is up.
func (b *Broker) MoveLeader(topic string, partition, node int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if _, err := b.findPartition(topic, partition); err != nil {
		return err
	}
	return b.cl.MoveLeader(clusterView{b}, topic, partition, node, b.log)
}

// SetISR sets a partition's in-sync replicas (a subset of its replicas
// that are up). A leader left out gives way to the first of isr; an empty
// isr leaves the partition offline. Producing with acks=all to a
// partition whose ISR is smaller than min.insync.replicas is refused with
// NOT_ENOUGH_REPLICAS.
func (b *Broker) SetISR(topic string, partition int32, isr []int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if _, err := b.findPartition(topic, partition); err != nil {
		return err
	}
	return b.cl.SetISR(clusterView{b}, topic, partition, isr, b.log)
}

// MoveCoordinator makes node coordinate key's slot: the group (kind
// "group") or transactional ID ("transaction") and every other key that
// hashes to the same coordinator partition.
func (b *Broker) MoveCoordinator(kind, key string, node int32) error {
	k, err := cluster.KindOf(kind)
	if err != nil {
		return err
	}
	if err := b.cl.Running(node); err != nil {
		return err
	}
	if s, old := b.cl.MoveSlot(k, key, node); old != node {
		b.log.Info("coordinator moved", "kind", kind, "key", key, "slot", s, "from", old, "to", node)
	}
	return nil
}

// electPreferredLocked makes each partition's first replica its leader
// where it is an in-sync replica that is up (auto.leader.rebalance.enable),
// and puts every coordinator slot back on its default node when that node
// is up. It returns the partitions whose leader changed. The caller holds
// adminMu.
func (b *Broker) electPreferredLocked() ([]cluster.TopicPartition, error) {
	b.cl.HomeSlots()
	return cluster.Apply(clusterView{b}, func(_ string, _ int32, cur *placement) *placement { return b.cl.Preferred(cur) })
}

// notLeaderProduce fills a NOT_LEADER_OR_FOLLOWER produce answer as
// KIP-951 has it (v10+): the partition's current leader and epoch, and
// that leader's endpoint among the response's brokers, so the producer
// retries there without a metadata round trip. It returns the message.
func (b *Broker) notLeaderProduce(req *protocol.Request, resp *kmsg.ProduceResponse, sp *kmsg.ProduceResponseTopicPartition, p *partition, node int32) string {
	pl := p.place.Load()
	if req.Version >= 10 && pl.Leader >= 0 {
		sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = pl.Leader, pl.Epoch
		if !slices.ContainsFunc(resp.Brokers, func(br kmsg.ProduceResponseBroker) bool { return br.NodeID == pl.Leader }) {
			if host, port, ok := b.addrFor(req, pl.Leader); ok {
				br := kmsg.NewProduceResponseBroker()
				br.NodeID, br.Host, br.Port, br.Rack = pl.Leader, host, port, b.rackPtr(pl.Leader)
				resp.Brokers = append(resp.Brokers, br)
			}
		}
	}
	return fmt.Sprintf("node %d is not the leader of %s-%d (leader %d, epoch %d)", node, p.topic.name, p.index, pl.Leader, pl.Epoch)
}

// rackPtr is a node's rack for a response field, nil when it has none.
func (b *Broker) rackPtr(node int32) *string {
	if r := b.cl.Rack(node); r != "" {
		return &r
	}
	return nil
}

// routeCoordinated answers NOT_COORDINATOR for a group or transaction
// request sent to a node that does not coordinate (all of) its keys, as
// Kafka's coordinators do; clients look the coordinator up again. ok is
// false when the request is the node's to serve.
func (b *Broker) routeCoordinated(req *protocol.Request) (protocol.Reply, bool) {
	node, routed := b.reqNode(req)
	if !routed {
		return protocol.Reply{}, false
	}
	kind, keys := cluster.CoordinatedKeys(req.Body)
	for _, k := range keys {
		if c := b.cl.Coordinator(kind, k); c != node {
			b.logRoutine(req, "not the coordinator", "key", k, "node", node, "coordinator", c)
			return protocol.Reply{Response: errresp.For(req.Body, kerr.NotCoordinator.Code)}, true
		}
	}
	return protocol.Reply{}, false
}

// leaderRebalanceLoop is auto.leader.rebalance.enable: every interval,
// leadership goes back to each partition's preferred replica, and the
// coordinators to their home nodes.
func (b *Broker) leaderRebalanceLoop() {
	defer b.bg.Done()
	every := b.cfg.LeaderImbalanceCheckInterval
	if every <= 0 {
		every = 300 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-b.closing:
			return
		case <-tick.C:
		}
		b.adminMu.Lock()
		moved, err := b.electPreferredLocked()
		b.adminMu.Unlock()
		if err != nil {
			b.log.Error("auto leader rebalance", "err", err)
		}
		if len(moved) > 0 {
			b.log.Info("auto leader rebalance: preferred leaders restored", "partitions", len(moved))
		}
	}
}
