// Package txn is minikafka's transaction coordinator: transactional IDs,
// their producer IDs and epochs, the partitions and group offsets of each
// open transaction, commit and abort markers, transaction timeouts and ID
// expiry, and per partition the last stable offset (LSO) and the
// aborted-transactions index that read_committed fetches need. Its state
// lives in the transaction log (Log), one per coordinator.
//
// It takes decoded kmsg requests and fills kmsg responses; the broker's
// NN_*.go files (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn,
// EndTxn, WriteTxnMarkers, TxnOffsetCommit, DescribeTransactions,
// ListTransactions) are thin adapters that decode, authorize and log. It
// knows the rest of the broker only through the interfaces in Config:
// Partition (offsets, batch headers, appending a marker as the partition's
// leader would, against its producer state; durability), Partitions
// (lookup), ProducerIDs, Groups (TxnOffsetCommit's checks and a committed
// transaction's offsets) and Uplink, plus a clock and a logger. Every
// Coordinator is independent (no package state), so that several can run
// in one process, each over its own log and partitions. It imports
// neither broker nor protocol (internal/lint checks that).
//
// # Model
//
// One txnState per transactional ID, each with its own mutex, which
// serializes every request of the ID and its transactional produces
// (BeginProduce returns holding it). States, as Kafka names them:
//
//	Empty → Ongoing            AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit v5, a v12+ produce
//	Ongoing → PrepareCommit|PrepareAbort → CompleteCommit|CompleteAbort   EndTxn, the timeout, InitProducerId
//	Complete* → Ongoing        the next transaction
//	Empty|Complete* → Dead     idle past IDExpiry: removed
//
// Transaction version 2 (KIP-890 part 2) is negotiated per request, as
// Kafka does: with transaction.version finalized at 2 (the default; the
// level is a record of the transaction log), Produce v12+ and
// TxnOffsetCommit v5 add to the transaction implicitly and EndTxn v5 bumps
// the epoch (its markers carry the bumped one); older versions keep the
// explicit adds and the epoch, whatever the level.
//
// EndTxn is synchronous: the Prepare state is fsynced to the transaction
// log, a control batch is appended to every partition of the transaction,
// pending TxnOffsetCommit offsets are handed to the group coordinator (on
// commit), the markers are made durable, and only then is the client
// answered and the state Complete*. Requests for the same ID that arrive
// meanwhile wait on its lock, so CONCURRENT_TRANSACTIONS is only answered
// when a state is found half-done (after a storage error). Every marker of
// one transaction carries its Prepare time, strictly increasing per
// producer, which tells a transaction's markers apart (the uplink relies
// on it).
//
// Restart: the transaction log gives each ID's last state. Prepare* states
// are completed (markers that already reached a partition are found by
// scanning its batch headers from the offset recorded when the partition
// joined the transaction, so none is written twice); Ongoing transactions
// stay open, their partitions' first offsets found by the same scan, and
// are aborted by the timeout loop unless their producer ends them. The
// aborted index is persisted in the transaction log with each completed
// abort (and each WriteTxnMarkers abort) and rebuilt from it, less the
// entries whose markers the log cleaner removed.
//
// # The transaction log
//
// DataDir/transactions/txn-<generation>.log, the generation zero-padded
// to 20 digits. A 20-byte file header: magic "MKTX", version u16 (1),
// flags u16, generation u64, CRC32C of the first 16 bytes u32. Then frames
// [payload length u32][CRC32C of payload u32][payload], big-endian. A
// payload is one JSON record: either the whole state of one transactional
// ID ("txn": the newest record for an ID wins), entries of the aborted
// index ("aborted": they accumulate), the removal of an expired ID
// ("removed"), or the finalized transaction.version with its features
// epoch ("tv", "features_epoch": the newest wins). Replay stops at the first frame that is short or fails its
// CRC: that is a torn tail, truncated away and reported. A write torn by a
// full disk is cut off and the next append retries; any other write or
// fsync error is sticky. When the file has grown past max(1 MiB, 4x its
// live content) it is compacted: the live state is written as
// generation+1 to a .tmp file, fsynced, renamed, the directory fsynced,
// and the old generation removed; opening takes the highest complete
// generation and sweeps the rest.
//
// # Lock order
//
//	txnState.mu → partition lock (in Partition.AppendMarker) → partTxn.mu
//	txnState.mu → the group coordinator's locks (CommitTransactionalOffsets)
//	txnState.mu → the uplink's (Uplink.NoteCommit)
//	Log.mu → partTxn.mu (keepAborted, while the log compacts)
//
// Coordinator.mu is a leaf: the group coordinator may call OffsetPending
// under its own locks. Log.mu is held across an fsync and takes nothing
// else, except that compaction asks keepAborted, which takes partTxn.mu
// (never held while writing to the log). The broker calls Producing and
// Produced under the partition's lock, and ForgetAborted from inside a
// log compaction: neither takes a txnState.mu.
package txn
