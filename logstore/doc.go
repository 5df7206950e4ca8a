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
// file cache's mu; mu → the checkpoint mutex and the seal fence mutex (see
// Recovery), which a checkpoint or a seal takes without mu and holds only
// for two renames. syncMu, sealMu and notifyMu are taken under mu or alone,
// and nothing is taken under them.
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
//
// A roll (segment.bytes or segment.ms reached, Roll, DeleteRecords
// emptying the active segment) only creates the new segment file and
// adopts it as active, under the writer's mutex; no fsync and no index
// write happen there, under any policy. The old segment is sealed in the
// background by the log's seal goroutine (started on demand, seals in roll
// order, at most two logs running their seal I/O at once in the process):
// fsync the segment (skipped if group commit or Sync already fsynced all of
// it since the roll), write its index files, fsync the directory, which also
// makes the new segment's directory entry durable (see Recovery for why
// this order proves a seal). Until then the rolled segment's data is
// durable only as far as something else fsynced it, so the guarantees
// are: under SyncAlways, a group-commit round fsyncs every rolled segment
// its seal has not fsynced yet, and the directory if a segment was created
// since the last directory fsync, before it publishes the high watermark,
// so acknowledged (visible) data is durable in every segment and no roll
// publishes anything by itself; Sync (and the SyncInterval timer) does the
// same before fsyncing the active segment; under SyncNever a crash can now
// lose the unsealed tail of a rolled segment as well as the active
// segment's (recovery then ends the log there). Close finishes the queued
// seals and fsyncs whatever they could not. A seal whose index files cannot
// be written (a full disk) leaves the segment queued, retried at the next
// roll or Close; the log takes writes meanwhile.
//
// The new segment's directory entry is not fsynced by the roll either: it
// becomes durable with the old segment's seal's directory fsync, or sooner
// with a group-commit round or Sync that finds a segment created since the
// last directory fsync (they count creations). That is safe because a
// directory fsync makes every entry created before it durable, so after a
// crash the lost entries are always the newest segments, whose data no
// round had declared durable (SyncAlways publishes only after that fsync);
// the log then ends at the last segment that survived, and recovery treats
// it as the tail. Open fsyncs the directory after recovering from a crash.
// Other directory fsyncs follow every create, rename and delete. A
// failed fsync is sticky: the log refuses writes (returns *WriteError)
// until reopened, since what reached the disk is unknown. A failed write
// (typically ENOSPC) is undone instead: the segment is truncated back to
// where it ended, a roll whose new file cannot be created leaves the active segment in place, and a
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
//	  6   2 zero
//	  8   8 size of the .log file this index describes
//	  5   1 flags: bit 0 set for a snapshot (files written for the active
//	          segment: a recovery checkpoint, Close); other bits zero
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
// Index files are written whole (tmp, fsync, rename, then one directory
// fsync) by a segment's seal, in the background after its roll, after the
// segment's fsync, without the snapshot flag; with the snapshot flag, for
// the active segment, on Close (without fsyncs: they are checked at open),
// unless it is smaller than Options.SmallActiveBytes, which is cheaper to
// rescan, and at each recovery checkpoint (see Recovery). Files written
// before the flag existed have byte 5 zero; a sealed segment's files were
// then always its seal's. The golden files of the active segment changed
// when the flag was added. So the active segment's
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
// file's current size and their checksums hold (which of them it trusts is
// said below); a clean Close finishes every seal and leaves them so for
// every segment but a small active one, so a clean open reads no other log
// data. A recovery checkpoint bounds what an open after a crash reads:
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
// A seal (sealOne in seal.go) works the same way on a rolled segment:
//
//  1. under the writer's mutex for a moment: check that the segment is
//     still a sealed segment of the log, pin it, take its size, next
//     offset, index entries and the seal fence epoch;
//  2. without any lock: fsync the segment (unless already fsynced whole
//     since the roll), write both index files for all of it as
//     *.seal.tmp and fsync them;
//  3. under the seal fence mutex: rename them into place unless the
//     seal fence epoch moved; then fsync the directory.
//
// Retention, DeleteRecords, Truncate (and its reset) and Destroy move the
// seal fence epoch first (waiting at most for a seal's two renames); a
// fenced seal starts again from 1, where it finds whether its segment is
// still one to seal (not removed, not made active again by Truncate).
// Close waits for the queued seals to finish, Destroy for the running one
// to give up; compaction cleans only segments whose seal finished and that
// lie wholly below the high watermark, and retention deletes only segments
// wholly below it, so neither touches data a seal or a group-commit round
// is still making durable.
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
//
// What proves a seal finished: index files without the snapshot flag
// whose headers match the .log file's size (and whose checksums hold).
// A seal renames them into place only after the segment's fsync, and
// nothing changes a sealed segment's bytes afterwards without removing
// them first (Truncate; retention and compaction remove the segment), so
// such files describe a segment that is durable whole. Snapshot files
// (checkpoint, Close) prove only that the bytes they describe were fsynced:
// a rolled segment whose checkpoint happens to match the size it was cut
// back to by a crash must not pass for sealed, or the next segment would
// look like it starts past a hole.
//
// Seals run in roll order, one at a time per log, each finished (its
// directory fsync included) before the next starts; a seal that fails stays
// first in line; recovery seals in order too, each segment fsynced before
// its index files are written. So a segment before one whose seal is
// proven was fsynced whole, even if its own index files are missing or
// damaged now (bit rot, an operator): a crash can only leave unproven a
// suffix of the segments.
//
// So Open goes through the segments in order. Each segment before the last
// whose seal is proven is trusted: its index files are loaded, its data is
// not read. A segment without proof that lies before a proven one is
// rescanned as a sealed segment (damage is corruption, see below) and its
// index files rebuilt. The segments after the last proven one (a crash
// after their roll, before their seal renamed their index files and
// fsynced the directory) are the recoverable tail, up to the last segment
// (RecoveryReport.Unsealed names those before the last): in each, index files describing all of it or a prefix (a seal's, a
// checkpoint's, Close's: all written after the bytes they describe were
// fsynced) are trusted for what they describe, and the rest is rescanned:
// every batch's length, magic, CRC32C, record count and base offset
// (must not be below the previous batch's last offset + 1) is checked. The
// first bad or incomplete batch ends the log, and so does a tail segment
// that ends before the next one's base (it lost its last batches whole):
// the later segments' files are removed first (each reported in
// RecoveryReport.Truncated with Pos 0 and its size), the directory
// fsynced, then the segment's index files are removed, the directory
// fsynced, and the file truncated at the bad batch and fsynced (reported
// with file, position, bytes dropped, reason). Removing later segments
// first means a crash during recovery leaves a log whose last segment still
// holds the bad batch, so the next open cuts at the same place. The tail
// segments kept before the last are then sealed by recovery itself
// (fsync, index files) and the directory fsynced; a rescanned last segment
// is fsynced before its end becomes the high watermark, unless
// Options.CleanShutdown says the last Close completed.
//
// Nothing acknowledged under SyncAlways is cut: a group-commit round
// fsyncs every rolled segment not yet fsynced, the active segment and, if
// needed, the directory before it publishes the high watermark, so every
// batch below it lies in a file whose entry and bytes are durable. A crash
// leaves those bytes intact; the first bad or incomplete batch, or a
// segment's premature end, can only lie above the published high watermark,
// and the segments removed after it hold only data above it too.
//
// In a segment whose seal is proven, damage is a *CorruptionError naming
// the file and byte position, and Open fails: it was fsynced whole before
// its index files were written, so damage there is not a torn write and
// must not be silently dropped. Segments compaction's recovery just
// installed (*.log.swap, fsynced before it was committed) count as proven.
// Options.VerifyAll rescans every segment: damage in a proven one is still
// a *CorruptionError, in the tail a cut.
//
// Truncate removes the shortened segment's index files (and syncs the
// directory) before cutting the .log file, so a crash in between leaves a
// segment that is rescanned rather than a stale index that matches by size.
//
// # Compaction
//
// Compact (compact*.go) is Kafka's log cleaner for one log. The log's
// sealed segments below the first uncleanable offset (the active
// segment's base, the high watermark (a segment reaching past it is not
// cleanable), CompactOptions.MaxOffset (the broker passes the last stable
// offset), the first segment whose seal has not finished (a pass waits for
// the running seals first), the first segment holding a record newer than
// min.compaction.lag.ms) are cleanable. The first dirty offset (in the
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
// need only increase, a segment whose seal is proven may end before the
// next one's base (it covers up to it; compaction only cleans such
// segments, so in the tail this ends the log instead), and batches are checked with
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
