// Package spool is a bounded, durable, multi-producer multi-consumer queue of
// byte records, stored as compressed (and optionally encrypted) segment
// files and deleted once the consumer acknowledges them. The broker uses one
// spool per forwarded partition to hold records until the upstream cluster
// has them. It knows nothing of Kafka: a record is opaque bytes.
//
// # Model
//
// Every record gets a sequence number at Append, inside the spool's mutex,
// so sequence order is append order across all writers. A record may claim a
// span of N consecutive sequence numbers (AppendSpan): the broker stores a
// Kafka batch of N records as one spool record, and sequence numbers then
// serve as Kafka offsets. The sequence numbers of durable or acknowledged
// records are never handed out again, across restarts too, even once the
// spool is empty (see the ack marker below). Those of records lost in a crash
// before they were durable may be: like offsets of unflushed messages after
// an unclean Kafka restart, they were never acknowledged as durable.
//
// Appended records go into an in-memory batch. The batch is sealed into one
// segment file when it reaches Options.BatchRecords records or
// Options.BatchBytes bytes, when Options.FlushInterval has passed since its
// first record, on Flush, or when WaitDurable asks for a record in it. The
// flusher is a pipeline (flush.go): up to Options.Encoders goroutines
// compress and encrypt sealed batches while another writes, fsyncs and
// commits earlier ones strictly in sequence order; the mutex is never held
// across encoding or file I/O. A
// batch being written stays readable from memory until its segment is
// registered, so readers never see a gap. When sealed batches waiting for the
// disk reach Options.MaxBufferedBytes, Append waits for the flusher instead
// of buffering without bound (memory stays bounded, buffers are reused).
//
// Read/ReadFrom return records from a sequence number on: sealed segments
// first, then the in-memory tail. Reading never consumes: any number of
// readers may read any range; only DeleteAcked(seq) moves the head. It
// acknowledges everything up to seq and removes every segment whose last
// sequence is ≤ seq. Changed() gives tailing readers a channel closed by the
// next append, so they need not poll.
//
// The spool is bounded: MaxBytes covers bytes on disk plus bytes reserved by
// records not yet flushed (a record reserves its framed size, a batch also
// its segment header and cipher overhead; compression only ever shrinks a
// segment, so the reservation is an upper bound). Append fails with a
// *FullError (errors.Is ErrFull) instead of exceeding it; the one exception
// is AppendPastLimit, for the small records without which a full spool could
// never drain (a transaction marker), which may pass it by their own size.
// Pressure() is used bytes / MaxBytes in [0, 1]; the spool ships metrics,
// not policy.
//
// # Memory
//
// A busy spool holds at most: the open batch (BatchBytes plus one record),
// sealed batches waiting for the disk (MaxBufferedBytes plus one batch), two
// flushed batch buffers kept for reuse, the file buffers of the batches
// being encoded (a little over BatchBytes each, up to 4), and one decoded
// segment cached for sequential readers. At the defaults that is a few tens
// of MiB; callers running many spools (one per partition) should lower
// BatchBytes and MaxBufferedBytes. An idle spool drops its reusable and file
// buffers.
//
// # Durability
//
// Append returns once the record is in memory: it is readable, not durable.
// Readers see such records too (Stats().DurableSeq tells where durability
// ends; a caller that must not expose non-durable data, such as a broker
// serving local consumers under --fsync=always, caps its reads there).
// A record is durable once WaitDurable(ctx, seq) returns nil: its segment was
// written to a .tmp file, fsynced, renamed and the directory fsynced. Callers
// that acknowledge on durability (the broker under --fsync=always) call
// WaitDurable; concurrent waiters share segment writes (group commit: while
// one segment is being written the next batch fills up). Flush seals and
// waits for everything appended so far. A failed write or fsync is sticky:
// the spool refuses appends and flushes until reopened (after a failed
// fsync the page cache cannot be trusted), and waiters get the error.
//
// # Delivery after a crash: at least once
//
// A crash loses only records that were never reported durable. Records are
// redelivered after a restart when their acknowledgement did not reach disk:
// the ack marker is written by DeleteAcked, so a consumer that shipped
// records but crashed before calling DeleteAcked (or before its marker write
// finished) reads them again from Head(). Within a partially acknowledged
// segment the marker makes Read skip the acknowledged records. Consumers must
// therefore tolerate duplicates after a crash; without a crash, a record
// acknowledged is never returned again.
//
// # Files
//
// The directory holds:
//
//	<first>-<last>.seg          a segment; 20-digit zero-padded sequence numbers,
//	                            so name order is sequence order
//	<first>-<last>.seg.tmp      a segment being written; debris after a crash
//	<first>-<last>.seg.corrupt  a segment set aside because it failed verification
//	acked-<seq>                 empty marker: every sequence ≤ seq is acknowledged
//
// Recovery (Open) lists the directory: it deletes *.tmp, keeps the highest
// marker (older ones are deleted), deletes segments at or below it (their
// removal had not reached disk), parses segment names and verifies each
// header (magic, version, CRC, range equal to the name, file size equal to
// the header's). A segment that fails is renamed to *.corrupt, reported in
// the RecoveryReport and logged, never fatal and never silently dropped;
// *.corrupt files from earlier runs are listed too (they do not count
// against MaxBytes; an operator removes them). Payloads are verified
// when read; a corrupt payload is set aside the same way and Read returns a
// *SegmentError (ErrCorrupt) once, naming the lost range. With encryption,
// Open decrypts the first encrypted segment so a wrong key fails Open with
// ErrWrongKey instead of condemning every segment. NextSeq after recovery is
// past every segment name seen and past the marker, so an emptied spool keeps
// counting where it left off.
//
// # Segment format (version 1)
//
// All integers big-endian.
//
//	off len field
//	  0   4 magic "MKSP"
//	  4   1 version = 1
//	  5   1 flags: bits 0-1 codec (0 none, 1 zstd), bit 4 encrypted; others 0
//	  6   2 reserved, 0
//	  8   8 first sequence
//	 16   8 last sequence
//	 24   4 record count
//	 28   4 raw payload length (before compression)
//	 32   4 stored payload length (bytes after the header)
//	 36   4 CRC-32C (Castagnoli) of the stored payload
//	 40   4 CRC-32C of header bytes 0..39
//	 44   … stored payload
//
// The raw payload is the records back to back, each framed as
// uvarint(span) uvarint(length) data; the spans sum to last-first+1 and there
// are exactly count frames. The stored payload is the raw payload, zstd
// compressed when that makes it smaller (codec 1; a single zstd frame) and
// the batch is not at least 90 % records that Options.Precompressed
// reports as already compressed (the broker marks Kafka batches their
// producer compressed: compressing them again costs CPU and saves little;
// such segments are stored with codec 0), then, when encrypted, sealed by the Cipher with header bytes 0..35 as
// associated data. The shipped AES-256-GCM cipher stores
// [12-byte random nonce][ciphertext][16-byte tag], a fresh nonce per segment.
// The payload CRC covers the stored (possibly encrypted) bytes, which tells
// bit rot (CRC mismatch: corrupt) from a wrong key (CRC matches, GCM fails:
// ErrWrongKey).
//
// Decoding is bounded: a raw length above Options.MaxDecodedBytes is refused
// before allocating, and zstd output is capped at the raw length the header
// declares.
//
// testdata/segment-v1.golden is a reference segment; change the format only
// with a new version number, reading old versions.
package spool
