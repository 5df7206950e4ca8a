// Package share is the share-group coordinator (KIP-932, "queues for
// Kafka"): membership and assignment of share groups, share sessions, and
// the per-record state of every share-partition, kept durable in the data
// dir. It sees the broker only through the Broker interface and imports
// neither broker nor protocol (internal/lint checks it).
//
// # Model
//
// A share group's members heartbeat (ShareGroupHeartbeat) with the topics
// they subscribe to; the coordinator computes the target assignment with
// the simple assignor (with fewer members than partitions each partition
// goes to one member round robin; with more, member i of the sorted
// members reads partition i mod P, so members share partitions). There is
// no revocation step: a member takes the new assignment, and the group
// epoch, on its next heartbeat. Members that stop heartbeating are
// removed after share.session.timeout.ms (group config; default 45 s).
//
// A share-partition (group, topic ID, partition) has a start offset SPSO
// (every offset below it is done) and an end offset SPEO (no offset from
// it on was ever delivered to the group). Each offset in [SPSO, SPEO) is
// in flight: Available, Acquired (by one member, until a deadline
// share.record.lock.duration.ms away, default 30 s), Acknowledged or
// Archived, with a delivery count. ShareFetch acquires Available records,
// then new ones up to the high watermark while SPEO-SPSO stays under
// 2000 (group.share.partition.max.record.locks); each acquisition raises
// the delivery count. Acknowledgements (in ShareFetch or
// ShareAcknowledge) accept (Acknowledged), release (Available again, or
// Archived once the count reached share.delivery.count.limit, default 5),
// reject or mark a gap (Archived), or renew the lock. An expired lock, a
// closed share session or a departed member releases as a release does.
// SPSO then moves past the done records at the window's start. A new
// share-partition starts at the high watermark, or at the log start with
// share.auto.offset.reset=earliest; a log start past SPSO moves SPSO.
//
// Share sessions (ShareSessionEpoch) are per member and node (each node of
// a simulated cluster keeps its own, as each Kafka broker): epoch 0 opens one
// with the request's partitions, the next request carries 1, 2, ... and
// may add partitions or forget them, -1 closes it and releases what the
// member holds in it.
//
// One mutex guards the coordinator; a ShareFetch reads the log outside
// it, between Acquire and Response. The lock order is broker.adminMu (for
// config changes) before Coordinator.mu; the coordinator calls into the
// broker's topic table (lock-free reads) while holding its mutex.
//
// # On disk: DataDir/share_state/share-state.log
//
// An 8-byte header ("MKSH", version u16 = 1, flags u16 = 0), then frames
// [payload length u32][CRC32C (Castagnoli) of payload u32][payload], all
// big-endian. A payload is a kind byte, the group ID (uvarint length and
// bytes), then by kind:
//
//	1 share-partition state: topic ID [16], partition i32, SPSO i64,
//	  uvarint run count, runs of (uvarint n, state u8, delivery count u16)
//	  covering [SPSO, SPEO) in order; the newest frame for a partition wins
//	2 share-partition removed: topic ID [16], partition i32
//	3 group configs, the whole set: uvarint count, (name, value) strings
//	4 group removed (its configs stay, as Kafka keeps them)
//
// Acquired records are stored as Available with their raised delivery
// count: a lock does not survive a restart, the count does, so after a
// restart no acknowledged record is delivered again and every record not
// acknowledged is delivered again. Every state change is written before
// the request is answered, and fsynced first under durability "always";
// under "interval=D" unsynced changes are fsynced every D (checked every
// 200 ms); under "never" the OS writes them back (and Close fsyncs). Replay stops at the
// first frame that is short, fails its CRC or does not decode: that is a
// torn tail, truncated and logged. When the file is over 1 MiB and four
// times the live state, it is rewritten with only the live frames (tmp
// file, fsync, rename, fsync dir) so a crash leaves the old or the new.
package share
