package broker

// The simulated cluster (Config.Nodes).
//
// One Broker can answer as several Kafka nodes: each node has its own
// listeners (Listener.Node), and every partition has replicas, an ISR, a
// leader and a leader epoch, kept in a placement. The data is stored once;
// replicas are the cluster's view of it, so a stopped node loses nothing
// and a replica that rejoins is caught up at once. What the simulation
// reproduces is what clients see of a real cluster: requests sent to a
// node that does not lead a partition, or does not coordinate a group or
// transactional ID, are refused as Kafka refuses them, leaders and
// coordinators move when nodes stop, and every leader change bumps the
// partition's leader epoch, which is stamped into the batches appended
// from then on and recorded (the epoch's first offset) for
// OffsetForLeaderEpoch.
//
// Placements are persisted in topic.json, so leader epochs never go back
// after a restart (clients refuse metadata with an older epoch). Node
// up/down state and coordinator moves are not persisted: a restart starts
// every node, as a whole cluster's restart would, and coordinators go back
// to their default nodes.
//
// Placement changes are made under adminMu (they rewrite topic.json);
// a leader change also takes the partition's mu, the lock appends stamp
// the epoch under, so each epoch's first offset is exact.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// NodeSpec is one node of the simulated cluster.
type NodeSpec struct {
	ID int32
	// Rack is the node's broker.rack ("" for none).
	Rack string
}

// placement is a partition's place in the cluster. It is immutable:
// changes store a new one.
type placement struct {
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
	// Leader is -1 while no in-sync replica is up (the partition is
	// offline).
	Leader int32 `json:"leader"`
	Epoch  int32 `json:"epoch"`
	// Epochs is each leader epoch's first offset, oldest first.
	Epochs []epochStart `json:"epochs"`
}

type epochStart struct {
	Epoch int32 `json:"epoch"`
	Start int64 `json:"start"`
}

func (pl *placement) clone() *placement {
	c := *pl
	c.Replicas = slices.Clone(pl.Replicas)
	c.ISR = slices.Clone(pl.ISR)
	c.Epochs = slices.Clone(pl.Epochs)
	return &c
}

// epochEnd answers OffsetForLeaderEpoch for epoch as Kafka's leader epoch
// cache does: the current epoch ends at logEnd; an older one at the
// first offset of the next epoch, reported with the largest known epoch
// not above it (or itself when it is older than all); an epoch newer than
// the current one, or -1, is UNDEFINED (-1, -1).
func (pl *placement) epochEnd(epoch int32, logEnd int64) (int32, int64) {
	switch {
	case epoch < 0 || epoch > pl.Epoch:
		return -1, -1
	case epoch == pl.Epoch:
		return epoch, logEnd
	}
	floor := epoch
	for i, e := range pl.Epochs {
		if e.Epoch > epoch {
			return floor, e.Start
		}
		if i == len(pl.Epochs)-1 {
			break
		}
		floor = e.Epoch
	}
	return pl.Epoch, logEnd
}

// epochAt is the leader epoch of the batch holding offset.
func (pl *placement) epochAt(offset int64) int32 {
	for i := len(pl.Epochs) - 1; i >= 0; i-- {
		if pl.Epochs[i].Start <= offset {
			return pl.Epochs[i].Epoch
		}
	}
	return pl.Epoch
}

func (pl *placement) inISR(node int32) bool { return slices.Contains(pl.ISR, node) }

// coordinator kinds: group and transaction coordinators are placed apart.
const (
	coordGroup = iota
	coordTxn
	coordKinds
)

// coordSlots is how many coordinator partitions each kind has (Kafka's
// offsets.topic.num.partitions and transaction.state.log.num.partitions
// default to 50): a key's coordinator is its slot's node, and moving a
// coordinator moves every key of its slot, as moving a partition of
// __consumer_offsets does.
const coordSlots = 50

type clusterState struct {
	nodes []NodeSpec // in the configured order; the first is the controller
	multi bool
	up    []atomic.Bool
	coord [coordKinds][coordSlots]atomic.Int32
}

func newClusterState(cfg Config) (*clusterState, error) {
	cs := &clusterState{nodes: slices.Clone(cfg.Nodes)}
	if len(cs.nodes) == 0 {
		cs.nodes = []NodeSpec{{ID: cfg.NodeID, Rack: cfg.Rack}}
	}
	seen := map[int32]bool{}
	for _, n := range cs.nodes {
		if n.ID < 0 || seen[n.ID] {
			return nil, fmt.Errorf("broker: node ids %v: each must be unique and >= 0", cs.nodeIDs())
		}
		seen[n.ID] = true
	}
	cs.multi = len(cs.nodes) > 1
	cs.up = make([]atomic.Bool, len(cs.nodes))
	for i := range cs.up {
		cs.up[i].Store(true)
	}
	for k := range cs.coord {
		for s := range cs.coord[k] {
			cs.coord[k][s].Store(cs.nodes[s%len(cs.nodes)].ID)
		}
	}
	return cs, nil
}

func (cs *clusterState) nodeIDs() []int32 {
	ids := make([]int32, len(cs.nodes))
	for i, n := range cs.nodes {
		ids[i] = n.ID
	}
	return ids
}

func (cs *clusterState) index(id int32) int {
	for i, n := range cs.nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

func (cs *clusterState) isUp(id int32) bool {
	i := cs.index(id)
	return i >= 0 && cs.up[i].Load()
}

func (cs *clusterState) rack(id int32) string {
	if i := cs.index(id); i >= 0 {
		return cs.nodes[i].Rack
	}
	return ""
}

// upNodes lists the running nodes in order.
func (cs *clusterState) upNodes() []NodeSpec {
	var out []NodeSpec
	for i, n := range cs.nodes {
		if cs.up[i].Load() {
			out = append(out, n)
		}
	}
	return out
}

// controller is the first running node (-1 with none).
func (cs *clusterState) controller() int32 {
	for i, n := range cs.nodes {
		if cs.up[i].Load() {
			return n.ID
		}
	}
	return -1
}

// assignReplicas places a new topic's partitions as Kafka's rack-unaware
// assignment does: partition p's first replica on node (start+p) mod n,
// the others after it, shifted by one more every n partitions so that
// followers spread too. start comes from the topic's name, so a name
// places the same way every time.
//
// When every node has a rack, the nodes are taken in rack-alternated order
// and each further replica goes to a rack that has none of the
// partition's replicas yet while there is one, as Kafka's rack-aware
// assignment does.
func (cs *clusterState) assignReplicas(name string, from, nparts int32, rf int) [][]int32 {
	order, racks := cs.rackAlternated()
	n := len(order)
	rf = max(1, min(rf, n))
	h := fnv.New32a()
	h.Write([]byte(name))
	start := int(h.Sum32() % uint32(n))
	shift := start
	out := make([][]int32, 0, nparts-from)
	for p := int(from); p < int(nparts); p++ {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + start) % n
		rs := []int32{order[first].ID}
		rackUsed := map[string]bool{order[first].Rack: true}
		for k := 0; len(rs) < rf; k++ {
			// The k-th candidate after the first, shifted as Kafka's
			// assignment shifts followers (by the rack count when
			// rack-aware, so followers change racks too).
			next := order[(first+1+(shift*max(racks, 1)+k)%(n-1))%n]
			fresh := racks == 0 || !rackUsed[next.Rack] || len(rackUsed) == racks
			if fresh && !slices.Contains(rs, next.ID) {
				rs = append(rs, next.ID)
				rackUsed[next.Rack] = true
			}
		}
		out = append(out, rs)
	}
	return out
}

// rackAlternated orders the nodes for placement: as configured when some
// node has no rack (racks 0), else taking one node of each rack in turn
// (racks and the nodes in each sorted), so consecutive nodes are in
// different racks.
func (cs *clusterState) rackAlternated() ([]NodeSpec, int) {
	byRack := map[string][]NodeSpec{}
	for _, n := range cs.nodes {
		if n.Rack == "" {
			return cs.nodes, 0
		}
		byRack[n.Rack] = append(byRack[n.Rack], n)
	}
	names := make([]string, 0, len(byRack))
	for r, ns := range byRack {
		names = append(names, r)
		slices.SortFunc(ns, func(a, b NodeSpec) int { return int(a.ID) - int(b.ID) })
	}
	slices.Sort(names)
	var out []NodeSpec
	for i := 0; len(out) < len(cs.nodes); i++ {
		for _, r := range names {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out, len(names)
}

// newPlacement is the placement of a new partition on replicas: the first
// running replica leads, at epoch 0.
func (cs *clusterState) newPlacement(replicas []int32) *placement {
	pl := &placement{Replicas: replicas, Leader: -1, Epochs: []epochStart{{0, 0}}}
	for _, r := range replicas {
		if cs.isUp(r) {
			pl.ISR = append(pl.ISR, r)
		}
	}
	if len(pl.ISR) > 0 {
		pl.Leader = pl.ISR[0]
	}
	return pl
}

// javaStringHash is Java's String.hashCode, which Kafka's coordinator
// placement uses.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func coordSlot(key string) int {
	h := javaStringHash(key)
	if h == -1<<31 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return int(h) % coordSlots
}

// coordinator is the node coordinating key.
func (cs *clusterState) coordinator(kind int, key string) int32 {
	return cs.coord[kind][coordSlot(key)].Load()
}

// reqNode is the node req was sent to. ok is false when the request is
// not routed: one node only, or a request of the embedding program or the
// console, which every node answers.
func (b *Broker) reqNode(req *protocol.Request) (int32, bool) {
	if !b.cl.multi || req == nil || req.Conn == nil || !req.Conn.FromNetwork() {
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
	if pl := p.place.Load(); pl.Leader != node && (pl.Leader < 0 || !pl.inISR(node)) {
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// notCoordinator reports whether req, about key, went to a node that does
// not coordinate it.
func (b *Broker) notCoordinator(req *protocol.Request, kind int, key string) bool {
	node, routed := b.reqNode(req)
	return routed && b.cl.coordinator(kind, key) != node
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
var ErrUnknownNode = errors.New("broker: unknown node")

// NodeState is a node as Nodes reports it.
type NodeState struct {
	ID         int32
	Rack       string
	Up         bool
	Controller bool
}

// Nodes lists the cluster's nodes.
func (b *Broker) Nodes() []NodeState {
	ctl := b.cl.controller()
	out := make([]NodeState, len(b.cl.nodes))
	for i, n := range b.cl.nodes {
		out[i] = NodeState{ID: n.ID, Rack: n.Rack, Up: b.cl.up[i].Load(), Controller: n.ID == ctl}
	}
	return out
}

// PartitionPlacement is a partition's replicas, ISR, leader and epoch.
type PartitionPlacement struct {
	Replicas, ISR []int32
	Leader        int32
	LeaderEpoch   int32
}

// Placement reports where a partition is.
func (b *Broker) Placement(topic string, partition int32) (PartitionPlacement, error) {
	p, err := b.findPartition(topic, partition)
	if err != nil {
		return PartitionPlacement{}, err
	}
	pl := p.place.Load()
	return PartitionPlacement{Replicas: slices.Clone(pl.Replicas), ISR: slices.Clone(pl.ISR), Leader: pl.Leader, LeaderEpoch: pl.Epoch}, nil
}

// Coordinator is the node coordinating a group ("group") or a
// transactional ID ("transaction").
func (b *Broker) Coordinator(kind, key string) (int32, error) {
	k, err := coordKind(kind)
	if err != nil {
		return -1, err
	}
	return b.cl.coordinator(k, key), nil
}

func coordKind(kind string) (int, error) {
	switch kind {
	case "group", "share":
		return coordGroup, nil
	case "transaction", "txn":
		return coordTxn, nil
	}
	return 0, fmt.Errorf("broker: coordinator kind %q: want group or transaction", kind)
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

// changeLeader stores pl as p's placement; when its leader differs from
// the current one, the epoch is bumped and its first offset recorded
// under p.mu (the lock appends stamp epochs under). It reports whether
// anything changed. The caller holds adminMu and persists the topic.
func (b *Broker) changePlacement(p *partition, pl *placement) bool {
	st := b.storeOf(p) // before p.mu: opening a forwarded partition's spool takes it
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.place.Load()
	if pl.Leader != cur.Leader {
		pl.Epoch = cur.Epoch + 1
		pl.Epochs = append(slices.Clone(cur.Epochs), epochStart{pl.Epoch, st.logEnd()})
	} else {
		pl.Epoch, pl.Epochs = cur.Epoch, cur.Epochs
		if slices.Equal(pl.ISR, cur.ISR) && slices.Equal(pl.Replicas, cur.Replicas) {
			return false
		}
	}
	p.place.Store(pl)
	return true
}

// eachPartitionLocked calls f on every partition; the topics f changed are
// persisted. The caller holds adminMu.
func (b *Broker) eachPartitionLocked(f func(p *partition) bool) error {
	var errs []error
	for _, t := range b.topics.Load().byName {
		changed := false
		for _, p := range t.partitions() {
			if f(p) {
				changed = true
			}
		}
		if changed {
			b.metadataChanges.Add(1)
			if err := b.writeTopicMeta(t, t.partitions(), t.cfg.Load().Set); err != nil {
				errs = append(errs, fmt.Errorf("broker: persisting %s's placement: %w", t.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// inOrder keeps the members of set in the order of replicas.
func inOrder(replicas []int32, set func(int32) bool) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if set(r) {
			out = append(out, r)
		}
	}
	return out
}

// StopNode takes a node down, as a broker that died: it leaves every ISR,
// its leaderships move to the next in-sync replica that is up (the
// partition is offline when there is none), and the coordinators it held
// move to the next node that is up. Its listeners are the embedding
// program's to close.
func (b *Broker) StopNode(id int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	i := b.cl.index(id)
	if i < 0 {
		return fmt.Errorf("%w %d (nodes %v)", ErrUnknownNode, id, b.cl.nodeIDs())
	}
	if !b.cl.up[i].Swap(false) {
		return nil
	}
	b.log.Info("node stopped", "node", id)
	up := b.cl.upNodes()
	for k := range b.cl.coord {
		for s := range b.cl.coord[k] {
			if b.cl.coord[k][s].Load() == id && len(up) > 0 {
				b.cl.coord[k][s].Store(up[s%len(up)].ID)
			}
		}
	}
	return b.eachPartitionLocked(func(p *partition) bool {
		cur := p.place.Load()
		if !slices.Contains(cur.Replicas, id) {
			return false
		}
		pl := cur.clone()
		pl.ISR = inOrder(cur.Replicas, func(r int32) bool { return r != id && cur.inISR(r) })
		if pl.Leader == id {
			pl.Leader = -1
			if len(pl.ISR) > 0 {
				pl.Leader = pl.ISR[0]
			}
		}
		return b.changePlacement(p, pl)
	})
}

// StartNode brings a stopped node back: it rejoins the ISR of its
// replicas (the data is shared, so it is caught up) and leads the
// partitions that had no leader. Leadership of the others returns to it
// through ElectLeaders or auto.leader.rebalance.enable.
func (b *Broker) StartNode(id int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	i := b.cl.index(id)
	if i < 0 {
		return fmt.Errorf("%w %d (nodes %v)", ErrUnknownNode, id, b.cl.nodeIDs())
	}
	if b.cl.up[i].Swap(true) {
		return nil
	}
	b.log.Info("node started", "node", id)
	return b.eachPartitionLocked(func(p *partition) bool {
		cur := p.place.Load()
		if !slices.Contains(cur.Replicas, id) {
			return false
		}
		pl := cur.clone()
		pl.ISR = inOrder(cur.Replicas, func(r int32) bool { return r == id || cur.inISR(r) })
		if pl.Leader < 0 {
			pl.Leader = id
		}
		return b.changePlacement(p, pl)
	})
}

// MoveLeader makes node lead the partition, with a new leader epoch. The
// node must be an in-sync replica that is up.
func (b *Broker) MoveLeader(topic string, partition, node int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	p, err := b.findPartition(topic, partition)
	if err != nil {
		return err
	}
	cur := p.place.Load()
	switch {
	case b.cl.index(node) < 0:
		return fmt.Errorf("%w %d (nodes %v)", ErrUnknownNode, node, b.cl.nodeIDs())
	case !b.cl.isUp(node):
		return fmt.Errorf("broker: node %d is stopped", node)
	case !cur.inISR(node):
		return fmt.Errorf("broker: node %d is not an in-sync replica of %s-%d (ISR %v)", node, topic, partition, cur.ISR)
	case cur.Leader == node:
		return nil
	}
	pl := cur.clone()
	pl.Leader = node
	b.changePlacement(p, pl)
	b.metadataChanges.Add(1)
	b.log.Info("partition leader moved", "topic", topic, "partition", partition, "leader", node, "epoch", pl.Epoch)
	return b.writeTopicMeta(p.topic, p.topic.partitions(), p.topic.cfg.Load().Set)
}

// SetISR sets a partition's in-sync replicas (a subset of its replicas
// that are up). A leader left out gives way to the first of isr; an empty
// isr leaves the partition offline. Producing with acks=all to a
// partition whose ISR is smaller than min.insync.replicas is refused with
// NOT_ENOUGH_REPLICAS.
func (b *Broker) SetISR(topic string, partition int32, isr []int32) error {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	p, err := b.findPartition(topic, partition)
	if err != nil {
		return err
	}
	cur := p.place.Load()
	for _, r := range isr {
		if !slices.Contains(cur.Replicas, r) {
			return fmt.Errorf("broker: node %d is not a replica of %s-%d (replicas %v)", r, topic, partition, cur.Replicas)
		}
		if !b.cl.isUp(r) {
			return fmt.Errorf("broker: node %d is stopped", r)
		}
	}
	pl := cur.clone()
	pl.ISR = inOrder(cur.Replicas, func(r int32) bool { return slices.Contains(isr, r) })
	if !pl.inISR(pl.Leader) {
		pl.Leader = -1
		if len(pl.ISR) > 0 {
			pl.Leader = pl.ISR[0]
		}
	}
	if !b.changePlacement(p, pl) {
		return nil
	}
	b.metadataChanges.Add(1)
	b.log.Info("partition ISR set", "topic", topic, "partition", partition, "isr", pl.ISR, "leader", pl.Leader)
	return b.writeTopicMeta(p.topic, p.topic.partitions(), p.topic.cfg.Load().Set)
}

// MoveCoordinator makes node coordinate key's slot: the group (kind
// "group") or transactional ID ("transaction") and every other key that
// hashes to the same coordinator partition.
func (b *Broker) MoveCoordinator(kind, key string, node int32) error {
	k, err := coordKind(kind)
	if err != nil {
		return err
	}
	switch {
	case b.cl.index(node) < 0:
		return fmt.Errorf("%w %d (nodes %v)", ErrUnknownNode, node, b.cl.nodeIDs())
	case !b.cl.isUp(node):
		return fmt.Errorf("broker: node %d is stopped", node)
	}
	s := coordSlot(key)
	if old := b.cl.coord[k][s].Swap(node); old != node {
		b.log.Info("coordinator moved", "kind", kind, "key", key, "slot", s, "from", old, "to", node)
	}
	return nil
}

// electPreferredLocked makes each partition's first replica its leader
// where it is an in-sync replica that is up (ElectLeaders PREFERRED, and
// auto.leader.rebalance.enable), and puts every coordinator slot back on
// its default node when that node is up. It returns the partitions whose
// leader changed. The caller holds adminMu.
func (b *Broker) electPreferredLocked(want func(p *partition) bool) ([]*partition, error) {
	var moved []*partition
	for k := range b.cl.coord {
		for s := range b.cl.coord[k] {
			if home := b.cl.nodes[s%len(b.cl.nodes)].ID; b.cl.isUp(home) {
				b.cl.coord[k][s].Store(home)
			}
		}
	}
	err := b.eachPartitionLocked(func(p *partition) bool {
		if !want(p) {
			return false
		}
		cur := p.place.Load()
		pref := cur.Replicas[0]
		if cur.Leader == pref || !cur.inISR(pref) || !b.cl.isUp(pref) {
			return false
		}
		pl := cur.clone()
		pl.Leader = pref
		moved = append(moved, p)
		return b.changePlacement(p, pl)
	})
	return moved, err
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
	if r := b.cl.rack(node); r != "" {
		return &r
	}
	return nil
}

// coordinatedKeys names the coordinator kind and keys a request is about
// (the groups or transactional IDs its coordinator must own); none for
// requests any node answers.
func coordinatedKeys(body kmsg.Request) (int, []string) {
	one := func(kind int, k string) (int, []string) { return kind, []string{k} }
	switch r := body.(type) {
	case *kmsg.OffsetCommitRequest:
		return one(coordGroup, r.Group)
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			return one(coordGroup, r.Group)
		}
		ks := make([]string, len(r.Groups))
		for i, g := range r.Groups {
			ks[i] = g.Group
		}
		return coordGroup, ks
	case *kmsg.JoinGroupRequest:
		return one(coordGroup, r.Group)
	case *kmsg.HeartbeatRequest:
		return one(coordGroup, r.Group)
	case *kmsg.LeaveGroupRequest:
		return one(coordGroup, r.Group)
	case *kmsg.SyncGroupRequest:
		return one(coordGroup, r.Group)
	case *kmsg.DescribeGroupsRequest:
		return coordGroup, r.Groups
	case *kmsg.DeleteGroupsRequest:
		return coordGroup, r.Groups
	case *kmsg.OffsetDeleteRequest:
		return one(coordGroup, r.Group)
	case *kmsg.TxnOffsetCommitRequest:
		return one(coordGroup, r.Group)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return one(coordGroup, r.Group)
	case *kmsg.ConsumerGroupDescribeRequest:
		return coordGroup, r.Groups
	case *kmsg.ShareGroupHeartbeatRequest:
		return one(coordGroup, r.GroupID)
	case *kmsg.ShareGroupDescribeRequest:
		return coordGroup, r.GroupIDs
	case *kmsg.DescribeShareGroupOffsetsRequest:
		ks := make([]string, len(r.Groups))
		for i, g := range r.Groups {
			ks[i] = g.GroupID
		}
		return coordGroup, ks
	case *kmsg.AlterShareGroupOffsetsRequest:
		return one(coordGroup, r.GroupID)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		return one(coordGroup, r.GroupID)
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID != nil {
			return one(coordTxn, *r.TransactionalID)
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if r.Version < 4 {
			return one(coordTxn, r.TransactionalID)
		}
		ks := make([]string, len(r.Transactions))
		for i, t := range r.Transactions {
			ks[i] = t.TransactionalID
		}
		return coordTxn, ks
	case *kmsg.AddOffsetsToTxnRequest:
		return one(coordTxn, r.TransactionalID)
	case *kmsg.EndTxnRequest:
		return one(coordTxn, r.TransactionalID)
	case *kmsg.DescribeTransactionsRequest:
		return coordTxn, r.TransactionalIDs
	}
	return 0, nil
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
	kind, keys := coordinatedKeys(req.Body)
	for _, k := range keys {
		if c := b.cl.coordinator(kind, k); c != node {
			b.logRoutine(req, "not the coordinator", "key", k, "node", node, "coordinator", c)
			return protocol.Reply{Response: errorResponse(req.Body, kerr.NotCoordinator.Code)}, true
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
		moved, err := b.electPreferredLocked(func(*partition) bool { return true })
		b.adminMu.Unlock()
		if err != nil {
			b.log.Error("auto leader rebalance", "err", err)
		}
		if len(moved) > 0 {
			b.log.Info("auto leader rebalance: preferred leaders restored", "partitions", len(moved))
		}
	}
}

// nodeIDsText names the node IDs for an error message: "1", or "one of
// [0 1 2]".
func (b *Broker) nodeIDsText() string {
	if len(b.cl.nodes) == 1 {
		return strconv.Itoa(int(b.cl.nodes[0].ID))
	}
	return fmt.Sprintf("one of %v", b.cl.nodeIDs())
}
