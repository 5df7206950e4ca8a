package vfs

import (
	"io"
	"io/fs"
	"os"
)

// File is an open file. Offsets passed to ReadAt/WriteAt are absolute; Write
// appends at the current position (the end, for files opened with O_APPEND).
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Closer
	// Sync makes the file's data durable (fsync/fdatasync).
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
	Name() string
}

// FS is a filesystem. Paths are ordinary OS paths; implementations that are
// not the OS treat them as opaque keys split on '/'.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldpath, newpath string) error
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir lists the names in dir, sorted.
	ReadDir(dir string) ([]string, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes creations, renames and removals in dir durable.
	SyncDir(dir string) error
}

// OSFile is implemented by files backed by a real descriptor, so that callers
// can use sendfile(2) and similar zero-copy paths when available.
type OSFile interface {
	File
	OS() *os.File
}

// Default is the operating system's filesystem.
var Default FS = OS{}
