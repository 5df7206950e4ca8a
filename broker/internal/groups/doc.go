// Package groups is minikafka's group coordinator: the classic protocol
// (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with static membership,
// KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe)
// with their server-side assignors (uniform, range), committed offsets
// (OffsetCommit, OffsetFetch, OffsetDelete, expiry, transactional commits)
// and group administration (DescribeGroups, ListGroups, DeleteGroups).
//
// It takes decoded kmsg requests and returns kmsg responses; the broker's
// NN_*.go files are the thin adapters that hand them over, and each
// exported method documents the Kafka behaviour of its API. It knows the
// rest of the broker only through the Broker interface it declares (topic
// names, IDs and partition counts, topic deletion, pending transactional
// offsets), Config (storage, the clock, the logger, Kafka's group settings
// as Settings) and, per request, Access (what the authorizer lets the
// principal do and see). It imports neither broker nor protocol
// (internal/lint checks that). FindCoordinator's answer is shaped here too,
// for groups and transactional IDs alike; the broker places the keys.
// Transactions call CommitTransactionalOffsets when they commit, as Kafka's
// transaction coordinator calls the group coordinator; nothing else writes
// to its store.
//
// # Model
//
// One *group per group id, each with its own mutex. A group is classic
// (members) or consumer (cg, KIP-848), never both at once. Membership lives
// in memory only: clients rejoin after a restart. Committed offsets live in
// groupstore (DataDir/group_offsets; see groupstore's doc for its file
// format), durable under the broker's fsync policy.
//
// Requests that must wait for a rebalance (JoinGroup, SyncGroup) register a
// one-slot channel on their member and return a wait function, so the
// connection's reader goroutine never blocks; the broker runs the wait on
// the connection's writer. Timers (session expiry, rebalance timeout,
// initial delay, KIP-848 revocation deadlines) are time.AfterFunc callbacks
// that take the group's mutex.
//
// # Lock order
//
//	Coordinator.mu → group.mu → groupstore's internal mutex
//
// Never take Coordinator.mu while holding a group.mu. A group.mu is not held
// across a groupstore write that fsyncs, so that commits of many members
// share one fsync (OffsetCommit validates under the lock, then commits). The
// Broker interface's methods take no lock of the coordinator's and may be
// called under group.mu.
package groups
