// Package logstore is a partition's durable log: segment files holding Kafka
// v2 RecordBatches exactly as producers sent them (only the base offset,
// and for LogAppendTime topics the max timestamp, rewritten), a sparse
// offset index and a time index per segment, crash recovery, retention,
// truncation and an fsync policy. It knows nothing of Kafka requests.
//
// # Model
//
// A Log has one writer at a time (Append, Roll, Truncate, DeleteRecords,
// EnforceRetention, Close serialize on a mutex) and any number of readers.
// Readers never take the writer's mutex: they load an immutable snapshot of
// the segment list and the published high watermark (an atomic pointer to
// {offset, segment, byte position}), and read file bytes below it. A
// segment removed by retention, DeleteRecords or Truncate is renamed to
// *.deleted at once and unlinked when its last reader releases it.
//
// Lock order inside a Log: mu (the writer's) → a segment's mu; mu → the
// file cache's mu; mu → the checkpoint mutex (the fence, see Recovery), which a
// checkpoint takes without mu and holds only for two renames. syncMu and
// notifyMu are taken under mu or alone, and nothing is taken under them.
//
// Append validates every batch (length, magic 2, CRC32C, record count ==
// last offset delta + 1) before taking the lock, so a malformed request
// writes nothing; then it assigns offsets in place and issues one write.
//
// Durability (SyncPolicy): under SyncAlways an append becomes visible (high
// watermark, Read) only once fsynced. WaitDurable uses leader/follower group
// commit: the first waiter fsyncs everything written so far and publishes
// it, waiters that arrive meanwhile wait for that round and re-check, so N
// concurrent appenders cost about one fsync per round, not N; before its
// fsync the leader yields once so appenders just released by the previous
// round can add their data. If nobody waits (acks=1 producers), Append
// starts a background goroutine that runs rounds until the high watermark
// reaches the log end, so such data still becomes visible. SyncInterval
// arms a timer on the first unsynced append; SyncNever leaves it to the OS.
// Under every policy a segment is fsynced when it is sealed (rolled) and on
// Close, and directory fsyncs follow every create, rename and delete. A
// failed fsync is sticky: the log refuses writes (returns *WriteError)
// until reopened, since what reached the disk is unknown. A failed write
// (typically ENOSPC) is undone instead: the segment is truncated back to
// where it ended, a failed roll leaves the active segment in place, and a
// DeleteRecords whose start-offset file cannot be written deletes the
// segments below the new start first (freeing the space) and writes it
// again; the error is a transient *WriteError and the log takes writes
// again once there is space. After a transient failure the log waits
// before it tries the disk again (10 ms doubling to 500 ms; appends in
// between get the same error without a write); deleting segments
// (retention, DeleteRecords) or SpaceFreed ends the wait. Only if the
// undo fails is the error sticky.
//
// # Files
//
// One directory per partition:
//
//	00000000000000000000.log        segment: concatenated v2 RecordBatches
//	00000000000000000000.index      sparse offset index of that segment
//	00000000000000000000.timeindex  time index of that segment
//	logstart                        log start offset set by DeleteRecords
//	cleanpoint                      compaction progress (see Compaction)
//	*.cleaned                       an uncommitted compaction's output, removed on open
//	*.log.swap                      a committed compaction's segment, swapped in on open
//	*.tmp, *.deleted                debris, removed on open
//
// Segment names are the base offset (first offset) in %020d. Segments are
// contiguous: each starts at the offset after the previous one's last
// record, or later if compaction removed that segment's last records. A segment is at most 2^31-1 bytes (positions are 32-bit).
//
// A .log file is nothing but batches, back to back, each in Kafka's v2
// layout (see internal/records): int64 base offset, int32 length of the
// rest, int32 leader epoch, int8 magic = 2, uint32 CRC32C of everything
// from the attributes to the end, int16 attributes, int32 last offset delta,
// int64 first and max timestamp, int64 producer id, int16 producer epoch,
// int32 base sequence, int32 record count, then the records.
//
// Both index files start with a 32-byte header, then fixed-size entries,
// all big-endian:
//
//	off len header field
//	  0   4 magic: "MKOI" (.index) or "MKTI" (.timeindex)
//	  4   1 version (1)
//	  5   3 zero
//	  8   8 size of the .log file this index describes
//	 16   8 next offset: the offset after the segment's last record
//	 24   4 number of entries
//	 28   4 CRC32C of header bytes 0..27 followed by all entries
//
//	.index entry (8 bytes):      uint32 base offset of a batch minus the segment base,
//	                             uint32 byte position of that batch
//	.timeindex entry (16 bytes): int64 timestamp, uint32 relative base offset,
//	                             uint32 position: the batch at that position has
//	                             max timestamp = timestamp, and no earlier batch
//	                             has a larger one
//
// An offset index entry is added for the first batch written after at least
// index.interval.bytes (4096 by default) since the previous entry. A time
// index entry is added when a batch raises the segment's maximum timestamp
// and index.interval.bytes have passed since the previous entry; the final
// entry, written when the index file is written, is the segment's maximum.
// Entries are strictly increasing in offset, position and timestamp.
//
// Index files are written whole (tmp, fsync, rename: vfs.ReplaceFile for
// both, then one directory fsync) when a segment is sealed and, for the
// active segment, on Close (without fsyncs: they are checked at open), unless
// it is smaller than Options.SmallActiveBytes, which is cheaper to rescan,
// and at each recovery checkpoint (see Recovery). So the active segment's
// index files may describe only its first bytes: the header's size says
// how many. While a segment is active its indexes live in memory. They can
// always be rebuilt from the .log file.
//
// The logstart file is 20 bytes: "MKLS", version 1, three zero bytes, int64
// offset, CRC32C of the first 16 bytes; replaced atomically.
//
// # Recovery
//
// Open removes *.tmp and *.deleted files and index files without a log. For
// each segment it loads the index files if their headers match the .log
// file's current size and their checksums hold; a clean Close leaves them so
// for every segment but a small active one, so a clean open reads no other
// log data. A recovery checkpoint bounds what an open after a crash reads:
// each time the active segment has grown Options.RecoveryCheckpointBytes
// (128 MiB) since its index files were written, the append that crossed it
// asks the log's checkpoint goroutine (started on demand, one at a time per
// log, at most two running their I/O at once in the process) for one, and
// returns: no fsync or file write of a checkpoint is ever
// on the append path or under the writer's mutex, under any durability
// policy (Kafka's recovery point, which its log flusher also advances in
// the background). A checkpoint:
//
//  1. takes, under the writer's mutex for a moment, the active segment's
//     size S, its next offset, the in-memory index entries for [0, S) and
//     the fence epoch;
//  2. without any lock, fsyncs the segment (skipped under SyncAlways when
//     group commit already made [0, S) durable), so [0, S) is durable:
//     those bytes were written before S was published under the mutex;
//     then writes both index files for [0, S) as *.ckpt.tmp and fsyncs them;
//  3. under a checkpoint mutex, renames them over the index files unless
//     the fence epoch moved, then fsyncs the directory.
//
// Everything else that writes or removes the active segment's index files,
// or changes its bytes other than by appending (roll, Truncate and its
// reset, Close, Destroy), first moves the fence epoch under that mutex, so
// a checkpoint whose snapshot predates it abandons its files; the fence
// waits at most for a checkpoint's two renames, never for its fsyncs. The
// argument: index files of the active segment that describe a prefix [0, S)
// were renamed into place only after [0, S) was fsynced, and no operation
// since has changed those bytes (appends only add after S; anything else
// fenced first, and Truncate removes the index files before it cuts). So
// they describe durable bytes that are still in the file, and Open may
// trust them. A crash between the two renames leaves headers that disagree,
// which Open rejects (full rescan); a crash before the directory fsync may
// bring back the previous index files, which were just as valid. Close
// waits for a running checkpoint to finish. A crash while a checkpoint runs
// rescans from the previous one, so the rescan is bounded by about
// RecoveryCheckpointBytes plus what was appended during one checkpoint.
// Index files of the active segment that describe fewer bytes than the
// file holds are such a checkpoint: Open trusts them and rescans only the
// rest. Otherwise the segment is
// rescanned: every batch's length, magic, CRC32C, record count
// and base offset (must equal the previous batch's last offset + 1) is
// checked. In the last (active) segment the first bad or incomplete batch
// ends the log: the file is truncated there, fsynced, and the cut
// (file, position, bytes dropped, reason) appears in the RecoveryReport; a
// rescanned active segment is fsynced before its end becomes the high
// watermark, unless Options.CleanShutdown says the last Close completed.
// In a sealed segment it is a *CorruptionError naming the file and byte
// position, and Open fails: sealed segments were fsynced when sealed, so
// damage there is not a torn write and must not be silently dropped.
// Options.VerifyAll rescans every segment.
//
// Truncate removes the shortened segment's index files (and syncs the
// directory) before cutting the .log file, so a crash in between leaves a
// segment that is rescanned rather than a stale index that matches by size.
//
// # Compaction
//
// Compact (compact*.go) is Kafka's log cleaner for one log. The log's
// sealed segments below the first uncleanable offset (the active
// segment's base, the high watermark, CompactOptions.MaxOffset (the broker
// passes the last stable offset), the first segment holding a record newer
// than min.compaction.lag.ms) are cleanable. The first dirty offset (in the
// cleanpoint file) splits them into a clean head, already deduplicated,
// and a dirty tail. A pass:
//
//  1. maps each key of the dirty tail's records (not markers, not aborted
//     or undecided transactions) to its highest offset, in an offset map
//     of fixed memory (24 bytes an entry: a 128-bit key hash and the
//     offset); if it fills, mapping stops at a batch boundary and only
//     that prefix counts as cleaned;
//  2. rewrites every cleanable segment from the log start to the one
//     holding the last mapped offset, batch by batch, keeping a record
//     unless the map holds a higher offset for its key, or it is a
//     tombstone (null value) below the mapped end whose batch's delete
//     horizon has passed. A batch keeping all its records is copied as it
//     is; otherwise it is rebuilt with the same base offset, last offset
//     delta, producer fields and codec (gzip, snappy (raw or xerial
//     framing, as found), lz4, zstd; decompression bounded at 256 MiB), its
//     records keeping their offset deltas, so offsets never change and
//     batches may hold fewer records than their offset span (readers then
//     see gaps, as with Kafka). A batch with tombstones that is cleaned for
//     the first time gets a delete horizon (KIP-534: attribute bit 6 set,
//     FirstTimestamp = now + delete.retention.ms, record timestamp deltas
//     re-based on it, so record timestamps are unchanged). A batch left
//     with no records is dropped, unless it is its producer's last batch in
//     the cleanable segments (and newer than CompactOptions.ProducerExpiry):
//     then its header survives as an empty batch (NumRecords 0), so the
//     producer's sequence state does, as in Kafka. Records without a key
//     are kept. A transactional data batch's outcome is the type of its
//     producer's next marker in the cleanable segments (found by a pass
//     over the batch headers before the map is built): records of aborted
//     transactions are removed, committed ones are cleaned like others
//     (and enter the map), and a batch whose marker lies beyond the
//     cleanable segments is copied untouched and not mapped. The last
//     batch of a producer counted here is its last data batch (markers
//     do not count), as in Kafka;
//  3. removes transaction markers as Kafka's cleaner does. A marker
//     stays while any batch of its transaction is in the log (an emptied
//     batch kept as its producer's last counts), since a reader needs it
//     to learn the data's outcome. The first pass that leaves no batch of
//     the transaction gives the marker a delete horizon (attribute bit 6,
//     FirstTimestamp = now + delete.retention.ms, its record's timestamp
//     delta re-based), and the first pass at or after the horizon whose
//     input holds no batch of the transaction removes it. (Kafka sets the
//     horizon one pass later, at the first pass whose input holds none;
//     either way a marker outlives its transaction's last batch by at
//     least delete.retention.ms, so a consumer that read the data can
//     still read the marker.) Markers with a horizon count in the
//     cleanpoint's earliest horizon, so the pass that removes them runs
//     when it is due. CompactOptions.RemovingMarkers hears of removed
//     markers before the swap, so the broker can drop an aborted
//     transaction from its index before its marker disappears: an index
//     entry whose marker is gone would make a read_committed client skip
//     the producer's later transactions. Kafka also keeps an emptied
//     marker as a producer's last batch when the producer has no data
//     batch at its current epoch (for fencing); here producer epochs of
//     transactional producers live in the broker's transaction log and
//     producer state is rebuilt from data batches only, so markers are
//     never kept for that;
//  4. merges consecutive cleaned segments while the output so far plus
//     the next input fits segment.bytes, so the segment count stays
//     bounded; each output replaces its group of input segments.
//
// Offsets and time indexes of cleaned segments are built while writing.
// Readers, appends and retention run meanwhile (only the swap takes the
// writer lock); if retention, DeleteRecords or Truncate changed the
// segments, or the log closed, the pass is abandoned (ErrCompactAborted)
// and its files removed.
//
// Crash safety: each output is written as <base>.log.cleaned,
// <base>.index.cleaned and <base>.timeindex.cleaned, all fsynced, then the
// directory. Groups are then swapped in offset order, each atomically:
// rename <base>.log.cleaned to <base>.log.swap and fsync the directory
// (the commit point); rename the group's old files to *.deleted and fsync;
// rename the index files and the log to their final names and fsync. Open
// first removes every *.cleaned file (an uncommitted pass) and completes
// every *.log.swap: the old .log files whose base lies between the swap's
// base and its last offset are removed, the index files of the base too
// (the segment is rescanned), and the swap renamed into place. A crash
// thus leaves each group old or new, and the log a cleaned prefix followed
// by an uncleaned rest, which holds every record that is not superseded (a
// tombstone is dropped only with, or after, the older records of its
// key, and a marker only after every batch of its transaction). Old
// segments pinned by readers stay readable until released.
//
// Recovery allows what cleaning leaves: batch offsets within a segment
// need only increase, a sealed segment may end before the next one's base
// (it covers up to it), and batches are checked with
// records.ValidateStored (NumRecords from 0 to LastOffsetDelta+1).
//
// The cleanpoint file is 28 bytes, replaced atomically after a pass:
// "MKCP", version 1, three zero bytes, int64 first dirty offset, int64
// earliest delete horizon of a kept tombstone or marker (Unix ms, MaxInt64
// if none; the cleaner cleans again when it passes), CRC32C of the first
// 24 bytes.
// A missing or damaged file means nothing was cleaned yet.
//
// CleanState reports the clean and dirty bytes (Kafka's cleanable ratio is
// dirty / (clean + dirty)), the first dirty batch's timestamp (for
// max.compaction.lag.ms) and the delete horizon, for the broker's cleaner
// to choose which log to clean.
//
// # File descriptors
//
// A FileCache shared between logs bounds the open segment files: files are
// opened on use and the least recently used idle ones closed. Readers pin
// files for the life of a ReadResult.
package logstore
