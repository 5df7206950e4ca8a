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
// failed write or fsync is sticky: the log refuses writes (returns
// *WriteError) until reopened, since what reached the disk is unknown.
//
// # Files
//
// One directory per partition:
//
//	00000000000000000000.log        segment: concatenated v2 RecordBatches
//	00000000000000000000.index      sparse offset index of that segment
//	00000000000000000000.timeindex  time index of that segment
//	logstart                        log start offset set by DeleteRecords
//	*.tmp, *.deleted                debris, removed on open
//
// Segment names are the base offset (first offset) in %020d. Segments are
// contiguous: each starts at the offset after the previous one's last
// record. A segment is at most 2^31-1 bytes (positions are 32-bit).
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
// Index files are written whole (tmp, fsync, rename, directory fsync) when
// a segment is sealed and, for the active segment, on Close. While a
// segment is active its indexes live in memory. They can always be rebuilt
// from the .log file.
//
// The logstart file is 20 bytes: "MKLS", version 1, three zero bytes, int64
// offset, CRC32C of the first 16 bytes; replaced atomically.
//
// # Recovery
//
// Open removes *.tmp and *.deleted files and index files without a log. For
// each segment it loads the index files if their headers match the .log
// file's current size and their checksums hold; a clean Close leaves them so
// for every segment, so a clean open reads no log data. Otherwise the
// segment is rescanned: every batch's length, magic, CRC32C, record count
// and base offset (must equal the previous batch's last offset + 1) is
// checked. In the last (active) segment the first bad or incomplete batch
// ends the log: the file is truncated there, fsynced, and the cut
// (file, position, bytes dropped, reason) appears in the RecoveryReport.
// In a sealed segment it is a *CorruptionError naming the file and byte
// position, and Open fails: sealed segments were fsynced when sealed, so
// damage there is not a torn write and must not be silently dropped.
// Options.VerifyAll rescans every segment.
//
// Truncate removes the shortened segment's index files (and syncs the
// directory) before cutting the .log file, so a crash in between leaves a
// segment that is rescanned rather than a stale index that matches by size.
//
// # File descriptors
//
// A FileCache shared between logs bounds the open segment files: files are
// opened on use and the least recently used idle ones closed. Readers pin
// files for the life of a ReadResult.
package logstore
