// Package groupstore keeps consumer groups' committed offsets durable: per
// (group, topic, partition) an offset, a leader epoch, a metadata string, the
// commit timestamp and an optional explicit expiry. It knows nothing of group
// membership or Kafka requests; the broker's coordinator calls it.
//
// # Model
//
// The whole state lives in memory (a map per group) and reads never touch
// the disk. Every change — a commit, deleting some offsets, deleting a group,
// dropping a topic — is appended to one log file as a framed record and
// applied to memory. Replaying the log at Open rebuilds the state. A change
// is visible to reads as soon as it is appended, before it is durable (as a
// Kafka offset is visible once appended to __consumer_offsets); if its write
// fails, the store refuses further changes and the next Open decides.
//
// # Durability and group commit
//
// Options.Sync is the broker-wide durability mode. Under SyncAlways a change returns
// only after it is fsynced. Callers append their frame to a pending buffer
// under the store mutex; the first caller that finds no flush running
// becomes the flusher, writes the whole buffer with one write and one fsync
// (with the mutex released), and wakes the others. Commits that arrive
// during an fsync therefore ride on the next one: N concurrent commits cost
// about two fsyncs, not N. Under SyncInterval and SyncNever a change returns
// once written to the file (a process crash loses nothing); SyncInterval
// fsyncs every Interval from a background goroutine.
//
// A failed write (typically ENOSPC), of frames or of a compaction's new
// generation, is undone: the file is truncated back to what was written,
// the in-memory state is rebuilt from it and the frames still pending, the
// failed changes' callers get the error and later changes go on, so
// commits resume once there is space. After a failed fsync (or a failed
// undo) the error is sticky: every later change fails until the store is
// reopened (what reached the disk is unknown, and replay at open decides).
//
// # Compaction
//
// When the log exceeds CompactBytes and is at least four times the
// estimated live state, the flusher writes the live state as a new
// generation with vfs.WriteFileAtomic (offsets-<gen+1>.log.tmp, write,
// fsync, close, rename, fsync the directory) and switches to it, then
// removes the old generation.
// Open removes *.tmp files and every generation but the newest usable one.
//
// # File format (version 1)
//
// Files are named offsets-%020d.log by generation. Integers in headers are
// big-endian; CRCs are CRC-32C (Castagnoli).
//
//	file header (20 bytes):
//	  magic      [4]byte "MKGS"
//	  version    uint16  1
//	  flags      uint16  0
//	  generation uint64  equals the number in the file name
//	  crc        uint32  CRC-32C of the 16 bytes above
//
//	then frames, back to back:
//	  length     uint32  payload length, 1..8 MiB (0 is never valid, so
//	                     zero-filled space reads as the end)
//	  crc        uint32  CRC-32C of the payload
//	  hcrc       uint32  CRC-32C of the 8 bytes above
//	  payload    [length]byte
//
// The header CRC lets recovery trust a length before reading that many
// bytes, and makes scanning damaged bytes for the next frame cheap. A
// payload is a type byte and fields encoded as unsigned varints (uv),
// zig-zag varints (v) and strings (uv length, then bytes):
//
//	1 commit:         group string, count uv, then count times:
//	                  topic string, partition v, offset v, leader epoch v,
//	                  metadata string, commit ms v, expire ms v (-1 none)
//	2 delete offsets: group string, count uv, then (topic string, partition v)
//	3 delete group:   group string
//	4 delete topic:   topic string (removes it from every group)
//
// A compacted generation holds one commit frame per group. A commit larger
// than a frame is split into several frames (each applies atomically).
//
// # Recovery
//
// Open replays the newest generation whose header is intact. A frame whose
// header checksum holds but whose payload fails (CRC or decoding) is damaged
// and skipped by its length — or, if that length runs past the end of the
// file, it is a torn tail. A frame whose header fails starts a damaged
// region that ends at the next valid frame found by scanning byte by byte;
// if none follows, the region is a torn tail. Damaged changes are treated as
// never made, reported in RecoveryReport.Damaged, and the recovered state is
// rewritten as a fresh generation; a torn tail (an interrupted write) is
// reported as TornBytes and truncated. Damage never fails Open; only I/O errors that prevent writing a
// usable log do. Because every frame is checked, a crash at any byte leaves
// each change either wholly applied or not at all.
//
// # Expiry
//
// Expire implements offsets.retention.minutes: offsets of groups that are
// not active expire at their explicit expiry, or retention after the later
// of their commit time and the time their group became empty.
package groupstore
