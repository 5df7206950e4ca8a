package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/minikafka/minikafka"
)

// clusterSettings are the flags of the simulated cluster (-nodes).
type clusterSettings struct {
	nodes             int
	racks             string
	replicationFactor int
	rackAware         bool
	autoRebalance     time.Duration
}

func (c *clusterSettings) register(fs *flag.FlagSet) {
	fs.IntVar(&c.nodes, "nodes", 1, "simulate a cluster of `N` nodes in this process (for tests: each node has its own port, node i listens on the -listen port plus i; the data is stored once)")
	fs.StringVar(&c.racks, "racks", "", "each node's broker.rack, comma-separated in node order")
	fs.IntVar(&c.replicationFactor, "default-replication-factor", 1, "replication factor of topics created without one (Kafka default.replication.factor)")
	fs.BoolVar(&c.rackAware, "rack-aware-replica-selector", false, "send consumers that name their rack (client.rack) to an in-sync replica in it (Kafka replica.selector.class=RackAwareReplicaSelector)")
	fs.DurationVar(&c.autoRebalance, "auto-leader-rebalance", 0, "every `interval`, give leadership back to each partition's preferred replica (Kafka auto.leader.rebalance.enable; 0: off)")
}

func (c *clusterSettings) check() []string {
	var bad []string
	if c.nodes < 1 || c.nodes > 64 {
		bad = append(bad, fmt.Sprintf("-nodes %d: must be between 1 and 64", c.nodes))
	}
	if racks := splitList(c.racks); len(racks) > max(c.nodes, 1) {
		bad = append(bad, fmt.Sprintf("-racks %q: %d racks for %d nodes", c.racks, len(racks), c.nodes))
	}
	if c.replicationFactor < 1 || c.replicationFactor > max(c.nodes, 1) {
		bad = append(bad, fmt.Sprintf("-default-replication-factor %d: must be between 1 and -nodes (%d)", c.replicationFactor, c.nodes))
	}
	if c.autoRebalance < 0 {
		bad = append(bad, "-auto-leader-rebalance: must not be negative")
	}
	return bad
}

func (c *clusterSettings) options() []minikafka.Option {
	opts := []minikafka.Option{
		minikafka.WithNodes(c.nodes),
		minikafka.WithDefaultReplicationFactor(int16(c.replicationFactor)),
	}
	if racks := splitList(c.racks); len(racks) > 0 {
		opts = append(opts, minikafka.WithRacks(racks...))
	}
	if c.rackAware {
		opts = append(opts, minikafka.WithRackAwareReplicaSelector())
	}
	if c.autoRebalance > 0 {
		opts = append(opts, minikafka.WithAutoLeaderRebalance(c.autoRebalance))
	}
	return opts
}
