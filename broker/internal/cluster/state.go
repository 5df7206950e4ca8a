package cluster

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync/atomic"
)

// Node is one node of the simulated cluster.
type Node struct {
	ID int32
	// Rack is the node's broker.rack ("" for none).
	Rack string
}

// Placement is a partition's place in the cluster. It is immutable:
// changes store a new one.
type Placement struct {
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
	// Leader is -1 while no in-sync replica is up (the partition is
	// offline).
	Leader int32 `json:"leader"`
	Epoch  int32 `json:"epoch"`
	// Epochs is each leader epoch's first offset, oldest first.
	Epochs []EpochStart `json:"epochs"`
}

// EpochStart is a leader epoch and its first offset.
type EpochStart struct {
	Epoch int32 `json:"epoch"`
	Start int64 `json:"start"`
}

// Clone copies pl, for a change to store anew.
func (pl *Placement) Clone() *Placement {
	c := *pl
	c.Replicas = slices.Clone(pl.Replicas)
	c.ISR = slices.Clone(pl.ISR)
	c.Epochs = slices.Clone(pl.Epochs)
	return &c
}

// EpochEnd answers OffsetForLeaderEpoch for epoch as Kafka's leader epoch
// cache does: the current epoch ends at logEnd; an older one at the
// first offset of the next epoch, reported with the largest known epoch
// not above it (or itself when it is older than all); an epoch newer than
// the current one, or -1, is UNDEFINED (-1, -1).
func (pl *Placement) EpochEnd(epoch int32, logEnd int64) (int32, int64) {
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

// EpochAt is the leader epoch of the batch holding offset.
func (pl *Placement) EpochAt(offset int64) int32 {
	for i := len(pl.Epochs) - 1; i >= 0; i-- {
		if pl.Epochs[i].Start <= offset {
			return pl.Epochs[i].Epoch
		}
	}
	return pl.Epoch
}

// InISR reports whether node is an in-sync replica.
func (pl *Placement) InISR(node int32) bool { return slices.Contains(pl.ISR, node) }

// Where is a placement as the embedding program sees it (its slices
// copies).
type Where struct {
	Replicas, ISR []int32
	Leader        int32
	LeaderEpoch   int32
}

// Where is pl's replicas, ISR, leader and epoch.
func (pl *Placement) Where() Where {
	return Where{Replicas: slices.Clone(pl.Replicas), ISR: slices.Clone(pl.ISR), Leader: pl.Leader, LeaderEpoch: pl.Epoch}
}

// NodeState is a node, whether it is up and whether it is the controller.
type NodeState struct {
	ID         int32
	Rack       string
	Up         bool
	Controller bool
}

// NodeStates lists the nodes in the configured order.
func (cs *State) NodeStates() []NodeState {
	ctl := cs.Controller()
	out := make([]NodeState, len(cs.nodes))
	for i, n := range cs.nodes {
		out[i] = NodeState{ID: n.ID, Rack: n.Rack, Up: cs.IsUp(n.ID), Controller: n.ID == ctl}
	}
	return out
}

// KindOf is the coordinator kind a control API names: "group" (or
// "share") or "transaction" (or "txn").
func KindOf(kind string) (int, error) {
	switch kind {
	case "group", "share":
		return GroupCoordinator, nil
	case "transaction", "txn":
		return TxnCoordinator, nil
	}
	return 0, fmt.Errorf("broker: coordinator kind %q: want group or transaction", kind)
}

// Coordinator kinds: group and transaction coordinators are placed apart.
const (
	GroupCoordinator = iota
	TxnCoordinator
	coordKinds
)

// Slots is how many coordinator partitions each kind has (Kafka's
// offsets.topic.num.partitions and transaction.state.log.num.partitions
// default to 50): a key's coordinator is its slot's node, and moving a
// coordinator moves every key of its slot, as moving a partition of
// __consumer_offsets does.
const Slots = 50

// State is the cluster: its nodes, which are up, and where each
// coordinator slot is. Its methods are safe for concurrent use; changes
// of several of them at once are the caller's to serialize.
type State struct {
	nodes []Node // in the configured order; the first is the controller
	multi bool
	up    []atomic.Bool
	coord [coordKinds][Slots]atomic.Int32
}

// New is a cluster of nodes (at least one), all up, each coordinator slot
// on its home node (slot i on node i mod n).
func New(nodes []Node) (*State, error) {
	cs := &State{nodes: slices.Clone(nodes)}
	if len(cs.nodes) == 0 {
		return nil, errors.New("cluster: no nodes")
	}
	seen := map[int32]bool{}
	for _, n := range cs.nodes {
		if n.ID < 0 || seen[n.ID] {
			return nil, fmt.Errorf("cluster: node ids %v: each must be unique and >= 0", cs.NodeIDs())
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

func (cs *State) NodeIDs() []int32 {
	ids := make([]int32, len(cs.nodes))
	for i, n := range cs.nodes {
		ids[i] = n.ID
	}
	return ids
}

func (cs *State) Index(id int32) int {
	for i, n := range cs.nodes {
		if n.ID == id {
			return i
		}
	}
	return -1
}

func (cs *State) IsUp(id int32) bool {
	i := cs.Index(id)
	return i >= 0 && cs.up[i].Load()
}

func (cs *State) Rack(id int32) string {
	if i := cs.Index(id); i >= 0 {
		return cs.nodes[i].Rack
	}
	return ""
}

// upNodes lists the running nodes in order.
func (cs *State) UpNodes() []Node {
	var out []Node
	for i, n := range cs.nodes {
		if cs.up[i].Load() {
			out = append(out, n)
		}
	}
	return out
}

// controller is the first running node (-1 with none).
func (cs *State) Controller() int32 {
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
func (cs *State) AssignReplicas(name string, from, nparts int32, rf int) [][]int32 {
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
func (cs *State) rackAlternated() ([]Node, int) {
	byRack := map[string][]Node{}
	for _, n := range cs.nodes {
		if n.Rack == "" {
			return cs.nodes, 0
		}
		byRack[n.Rack] = append(byRack[n.Rack], n)
	}
	names := make([]string, 0, len(byRack))
	for r, ns := range byRack {
		names = append(names, r)
		slices.SortFunc(ns, func(a, b Node) int { return int(a.ID) - int(b.ID) })
	}
	slices.Sort(names)
	var out []Node
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
func (cs *State) NewPlacement(replicas []int32) *Placement {
	pl := &Placement{Replicas: replicas, Leader: -1, Epochs: []EpochStart{{0, 0}}}
	for _, r := range replicas {
		if cs.IsUp(r) {
			pl.ISR = append(pl.ISR, r)
		}
	}
	if len(pl.ISR) > 0 {
		pl.Leader = pl.ISR[0]
	}
	return pl
}

// JavaStringHash is Java's String.hashCode, which Kafka's coordinator
// placement uses.
func JavaStringHash(s string) int32 {
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

// Slot is key's coordinator slot: abs(hashCode) mod Slots, as Kafka
// places a group in __consumer_offsets.
func Slot(key string) int {
	h := JavaStringHash(key)
	if h == -1<<31 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return int(h) % Slots
}

// Coordinator is the node coordinating key.
func (cs *State) Coordinator(kind int, key string) int32 {
	return cs.coord[kind][Slot(key)].Load()
}

// InOrder keeps the members of set in the order of replicas.
func InOrder(replicas []int32, set func(int32) bool) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if set(r) {
			out = append(out, r)
		}
	}
	return out
}

// Nodes are the cluster's nodes in the configured order.
func (cs *State) Nodes() []Node { return cs.nodes }

// Multi reports whether there is more than one node (requests are then
// routed).
func (cs *State) Multi() bool { return cs.multi }

// SetUp marks a node up or down; it reports the state before, and false
// for a node not in the cluster.
func (cs *State) SetUp(id int32, up bool) (was, ok bool) {
	i := cs.Index(id)
	if i < 0 {
		return false, false
	}
	return cs.up[i].Swap(up), true
}

// MoveSlotsOff moves every coordinator slot held by node id to a node
// that is up (spread over them), as a dead broker's partitions of
// __consumer_offsets move.
func (cs *State) MoveSlotsOff(id int32) {
	up := cs.UpNodes()
	if len(up) == 0 {
		return
	}
	for k := range cs.coord {
		for s := range cs.coord[k] {
			if cs.coord[k][s].Load() == id {
				cs.coord[k][s].Store(up[s%len(up)].ID)
			}
		}
	}
}

// HomeSlots puts every coordinator slot back on its home node where that
// node is up (a preferred leader election of the coordinator partitions).
func (cs *State) HomeSlots() {
	for k := range cs.coord {
		for s := range cs.coord[k] {
			if home := cs.nodes[s%len(cs.nodes)].ID; cs.IsUp(home) {
				cs.coord[k][s].Store(home)
			}
		}
	}
}

// MoveSlot makes node coordinate key's slot; it returns the slot and its
// node before.
func (cs *State) MoveSlot(kind int, key string, node int32) (slot int, old int32) {
	slot = Slot(key)
	return slot, cs.coord[kind][slot].Swap(node)
}

// IDsText names the node IDs for an error message: "1", or "one of
// [0 1 2]".
func (cs *State) IDsText() string {
	if len(cs.nodes) == 1 {
		return strconv.Itoa(int(cs.nodes[0].ID))
	}
	return fmt.Sprintf("one of %v", cs.NodeIDs())
}
