// Package cluster is the state of the simulated cluster a broker can
// answer as (broker/cluster.go routes requests by it): the nodes and which
// are up, where each group and transaction coordinator slot is, and each
// partition's Placement — its replicas, in-sync replicas, leader, leader
// epoch and the first offset of every leader epoch — with the changes
// made to placements (changes.go, apply.go) and DescribeQuorum's answer.
// It sees the broker's partitions through Partitions and imports neither
// broker nor protocol (internal/lint checks it).
//
// One Broker can answer as several Kafka nodes: each node has its own
// listeners, and every partition has replicas, an ISR, a leader and a
// leader epoch, kept in a placement. The data is stored once; replicas
// are the cluster's view of it, so a stopped node loses nothing and a
// replica that rejoins is caught up at once. What the simulation
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
// Replicas are placed as Kafka's assignment places them (rack-aware when
// every node has a rack); a key's coordinator slot is Kafka's
// abs(String.hashCode) mod 50. The data behind a placement is stored once
// by the broker: replicas are the cluster's view of it.
//
// On disk: nothing of its own. A Placement is written as JSON in its
// topic's topic.json by the broker ({"replicas":[…],"isr":[…],"leader":N,
// "epoch":N,"epochs":[{"epoch":N,"start":OFFSET},…]}); node state and
// coordinator moves are not kept (a restart starts the whole cluster).
package cluster
