// Package cluster is the state of the simulated cluster a broker can
// answer as (broker/cluster.go routes requests by it): the nodes and which
// are up, where each group and transaction coordinator slot is, and each
// partition's Placement — its replicas, in-sync replicas, leader, leader
// epoch and the first offset of every leader epoch.
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
