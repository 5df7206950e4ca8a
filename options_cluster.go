package minikafka

import (
	"fmt"
	"time"
)

// The simulated cluster: several nodes in this one process (cluster.go).

type clusterOptions struct {
	nodes             int
	racks             []string
	replicationFactor int16
	rackAwareSelector bool
	autoRebalance     time.Duration // 0: auto.leader.rebalance.enable off
}

// WithNodes makes the broker a simulated cluster of n nodes (default 1):
// one process and one data directory, every node with its own node ID
// (WithNodeID, WithNodeID+1, …) and its own listeners on its own ports.
// Topics take a replication factor up to n, partitions have leaders,
// replicas and ISRs spread over the nodes, and requests sent to the wrong
// node are refused as Kafka refuses them, so clients meet leader moves,
// stopped nodes and coordinator moves (StopNode, MoveLeader,
// MoveCoordinator, SetISR). The data is stored once: a stopped node loses
// nothing. It is a simulation for tests, not a distributed broker; the
// uplink (WithUpstream) is the way to a real cluster.
//
// A listener with a fixed port gives node i that port plus i; port 0
// gives each node a free port.
func WithNodes(n int) Option {
	return optionFunc(func(c *config) { c.cluster.nodes = n })
}

// WithRacks sets each node's broker.rack, in node order.
func WithRacks(racks ...string) Option {
	return optionFunc(func(c *config) { c.cluster.racks = append([]string(nil), racks...) })
}

// WithDefaultReplicationFactor is Kafka's default.replication.factor
// (default 1): the replication factor of topics created without one.
func WithDefaultReplicationFactor(rf int16) Option {
	return optionFunc(func(c *config) { c.cluster.replicationFactor = rf })
}

// WithRackAwareReplicaSelector is Kafka's replica.selector.class set to
// RackAwareReplicaSelector (KIP-392): a consumer that names its rack
// (client.rack) is sent to an in-sync replica in that rack to fetch.
func WithRackAwareReplicaSelector() Option {
	return optionFunc(func(c *config) { c.cluster.rackAwareSelector = true })
}

// WithAutoLeaderRebalance is Kafka's auto.leader.rebalance.enable with
// leader.imbalance.check.interval.seconds: every interval, leadership
// goes back to each partition's preferred replica. Off by default here
// (Kafka's default is on, every 300 s), so a test's moves stay put.
func WithAutoLeaderRebalance(interval time.Duration) Option {
	return optionFunc(func(c *config) { c.cluster.autoRebalance = interval })
}

func (o clusterOptions) validate() []error {
	var errs []error
	switch {
	case o.nodes < 0 || o.nodes > 64:
		errs = append(errs, fmt.Errorf("nodes %d: must be between 1 and 64", o.nodes))
	case len(o.racks) > max(o.nodes, 1):
		errs = append(errs, fmt.Errorf("racks %v: more racks than the %d nodes", o.racks, max(o.nodes, 1)))
	}
	if o.replicationFactor < 0 || int(o.replicationFactor) > max(o.nodes, 1) {
		errs = append(errs, fmt.Errorf("default replication factor %d: must be between 1 and the number of nodes (%d)", o.replicationFactor, max(o.nodes, 1)))
	}
	if o.autoRebalance < 0 {
		errs = append(errs, fmt.Errorf("auto leader rebalance interval %v: must be > 0", o.autoRebalance))
	}
	return errs
}

// count is the number of nodes (at least 1).
func (o clusterOptions) count() int { return max(o.nodes, 1) }

func (o clusterOptions) rack(i int) string {
	if i < len(o.racks) {
		return o.racks[i]
	}
	return ""
}
