// Package uplink is minikafka's store-and-forward of chosen topics to an
// upstream Kafka cluster: the spools of forwarded partitions, the
// forwarders that ship them, the upstream transactions that carry
// committed local transactions, and the group offset sync with its
// MirrorMaker 2 checkpoints. Like MirrorMaker 2 it is a client of the
// upstream cluster (franz-go's kgo client, kadm and raw kmsg requests);
// unlike it, it also holds the forwarded partitions' records locally.
//
// # Interfaces
//
// The uplink sees the broker only through what it declares (host.go), and
// imports neither broker nor protocol (internal/lint checks that):
//
//   - Env, fixed at New: the filesystem and data directory, the logger,
//     the durability policy, the cluster ID (which names the uplink's
//     transactional producer upstream), the decompressed batch bound, and
//     Groups, the local group coordinator's committed offsets.
//   - Partition, one forwarded partition: its names and its topic's
//     partition count, the end of its log (where its spool's offsets
//     start), the transaction coordinator's state of it (last stable
//     offset, aborted and open transactions of a producer), and its
//     idempotent-producer state, which the broker owns and encodes and the
//     uplink saves beside the spool (Producers, UseSpool).
//
// The broker sees the uplink through Uplink: New, Start, Close, Open (a
// forwarded partition's Forwarder, opened on first use), TopicDeleted,
// NoteCommit (from the transaction coordinator), Stats and GroupOffsets
// (forward-status, DescribeConfigs, the console and /metrics), Rule. A
// Forwarder is the partition's store: the broker's partitionStore adapter
// (broker/uplink_adapter.go) appends produced batches to it, fetches and
// lists offsets from it, and waits on it for durability, with Kafka offsets
// and exclusive ends at that boundary (the spool's sequences are
// inclusive; Forwarder converts).
//
// # Model
//
// A partition of a topic matching a ForwardRule (glob, or /regexp/;
// optional prefix for the upstream name) keeps its records in a spool
// (DataDir/spool/<topic-id-hex>/<partition>, package spool) instead of its
// log. A produced batch, validated by the broker, is appended as one spool
// record spanning its NumRecords sequence numbers, so sequence numbers are
// the partition's offsets; the high watermark is the durable end under
// fsync=always, else the spool end; the log start offset is the spool's
// head, which moves as the upstream acknowledges. Records a topic held in
// its log before it became forwarded are not shipped (its offsets continue
// from the log end).
//
// A forwarder goroutine per partition (ship.go) ships the spool from the
// first unacknowledged record, once Start is called (what it may ship
// depends on the transaction coordinator, which starts after the spools
// are open). It first makes sure the upstream topic exists with at least
// the local partition count, again whenever the partition's leader must
// be looked up. Stored batches go as they are in raw ProduceRequests
// (v3-v12, acks=all) to the partition's leader through the uplink's kgo
// client, which owns connections, TLS and SASL: the forwarder is its own
// idempotent producer and only writes its producer ID, epoch and sequence
// into a private copy of the header and recomputes the CRC. Runs of small
// batches are decoded and merged (up to 512 KiB); LogAppendTime batches
// are re-encoded; a merged batch the upstream finds too large is split,
// one it finds corrupt is re-encoded, and one that does not decode here is
// dropped loudly. One request is in flight per partition, so a resend
// carries the same sequence and the upstream drops a duplicate. Only what
// is below the last stable offset is shipped. Acknowledgements reach the
// spool's DeleteAcked at most every 100 ms (commitLoop). Close gives
// requests in flight 5 s before canceling them.
//
// Committed transactional data goes upstream inside transactions of the
// uplink's transactional producer (txn.go), one per round, each carrying
// whole local transactions over every forwarded partition they touched,
// with positions committed in the same transaction so a crash neither
// loses nor repeats a round. Aborted data and markers never leave. The
// group offset sync (groups.go) translates local groups' committed
// offsets through the offset syncs each acknowledged batch gives, commits
// them upstream and, with a checkpoints alias, writes MM2 checkpoints
// (checkpoints.go).
//
// Delivery is exactly once across a local crash: each forwarder journals
// its producer identity and the batch in flight before sending it
// (producer.go), and resends that batch under the same identity after a
// restart. Only when the upstream forgot the producer is a new producer ID
// taken (ForwardStat.ProducerResets), and the batch then in flight may
// arrive twice.
//
// # Goroutines and lock order
//
// Per forwarder: run (ship.go) owns the producer identity, the leader and
// the journal; commitLoop beside it commits acknowledgements. One
// txnShipper.run ships transaction rounds; parked forwarders wait for it.
// One groupSyncLoop runs the group offset sync and owns the checkpoints
// state. Take left before right, never the reverse:
//
//	Uplink.mu → the broker's partition.mu (Partition.UseSpool, under Open)
//	          → spool internals
//	Forwarder.commitMu → the broker's partition.mu (Partition.Producers)
//	txnShipper.mu, Uplink.groupSyncMu and offsetSyncs.mu are leaves
//
// The broker's transaction coordinator calls NoteCommit under its own
// transaction lock, so txnShipper.mu is taken under it and Partition's
// transaction methods are never called under txnShipper.mu.
//
// # State on disk
//
// Beside each partition's spool directory <dir>
// (DataDir/spool/<topic-id-hex>/<partition>):
//
//	<dir>/                    the spool's segments (package spool)
//	<dir>.upstream-producer   the producer journal: two 128-byte slots,
//	                          written in place (producer.go has the layout)
//	<dir>.offset-syncs        JSON array of offset syncs, rewritten by each
//	                          group sync pass (groups.go)
//	<dir>.producers           the partition's producer state as the broker
//	                          encodes it, written before acknowledged
//	                          records are deleted (producers_state.go)
//
// State files are replaced atomically and fsynced unless durability is
// never; a damaged one is reported and ignored, at the cost it names
// (a possible duplicate, untranslatable old offsets, producer state
// rebuilt from the spool's tail only). Deleting a topic removes its spools
// and these files. Upstream, the uplink's transactional ID and its
// positions group are both minikafka-uplink-<cluster ID>.
package uplink
