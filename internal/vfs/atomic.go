package vfs

import (
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces name with data so that a crash at any moment
// leaves either the old content or the new, never a mix: it writes
// name.tmp, fsyncs and closes it, renames it over name and fsyncs name's
// directory. A nil error means the new content is durable. On an error
// before the rename the tmp file is removed and name is untouched; an error
// from the directory fsync means name holds the new content but a crash
// may still bring back the old. perm is the mode name.tmp is created with,
// which the rename carries to name: pass 0o600 for a file only its owner
// may read.
func WriteFileAtomic(fsys FS, name string, data []byte, perm os.FileMode) error {
	if err := ReplaceFile(fsys, name, data, perm); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}

// ReplaceFile is WriteFileAtomic without the directory fsync, for a caller
// that replaces several files in one directory and fsyncs it once after the
// last. Until that SyncDir each replaced name may come back old after a
// crash (or be absent, if it is new), so the caller must not report any of
// them durable before it.
func ReplaceFile(fsys FS, name string, data []byte, perm os.FileMode) error {
	return replaceFile(fsys, name, data, perm, true)
}

// ReplaceFileUnsynced is ReplaceFile without the fsync, for files that
// are only a cache checked when read (an index with a checksum): after a
// crash the new name may hold a partial file, which the reader detects.
func ReplaceFileUnsynced(fsys FS, name string, data []byte, perm os.FileMode) error {
	return replaceFile(fsys, name, data, perm, false)
}

func replaceFile(fsys FS, name string, data []byte, perm os.FileMode, sync bool) error {
	tmp := name + ".tmp"
	err := writeFile(fsys, tmp, data, perm, sync)
	if err == nil {
		err = fsys.Rename(tmp, name)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
	}
	return err
}

// WriteFileSync creates or truncates name, writes data, fsyncs and closes
// it. It does not make name's directory entry durable: callers either
// rename the file afterwards (ReplaceFile) or mark it uncommitted by its
// name and fsync the directory themselves.
func WriteFileSync(fsys FS, name string, data []byte, perm os.FileMode) error {
	return writeFile(fsys, name, data, perm, true)
}

func writeFile(fsys FS, name string, data []byte, perm os.FileMode, sync bool) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads the whole of name from fsys, as os.ReadFile does.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
