// Package vfs is the small filesystem interface every storage package writes
// through. Production uses the OS; tests use an in-memory filesystem that can
// simulate a crash (drop whatever was not fsynced) and an error-injecting
// wrapper (fail the Nth write or sync, tear a write after K bytes).
//
// The interface is deliberately narrow: storage code needs positional reads,
// appends, truncation, fsync of files and directories, atomic rename and a
// directory listing. Anything richer would be hard to model faithfully in the
// crash-simulating implementation.
//
// # Atomic replace
//
// Every file that is rewritten whole (topic metadata, index files, group
// offsets, spool segments) goes through one function, WriteFileAtomic:
// write name.tmp, fsync, close, rename over name, fsync the directory. A
// crash at any point leaves the old content or the new one; a leftover
// .tmp file is debris that the owner of the directory removes on open.
//
// The directory rule: a rename is durable only once its directory has been
// fsynced, and nothing may be reported durable before that. WriteFileAtomic
// fsyncs the directory itself before it returns. ReplaceFile is the same
// write without that last step, for a caller that replaces several files in
// one directory and pays for one directory fsync after the last (the spool's
// flush groups, a log segment's two index files); that caller owns the
// SyncDir and must not claim durability before it returns.
package vfs
