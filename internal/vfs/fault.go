package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Op names a filesystem operation seen by an Injector.
type Op int

const (
	OpWrite    Op = iota // File.Write / File.WriteAt
	OpSync               // File.Sync
	OpSyncDir            // FS.SyncDir
	OpTruncate           // File.Truncate
	OpOpen               // FS.OpenFile
	OpRename             // FS.Rename
	OpRemove             // FS.Remove / FS.RemoveAll
	OpRead               // File.Read / File.ReadAt
)

func (o Op) String() string {
	switch o {
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	case OpSyncDir:
		return "syncdir"
	case OpTruncate:
		return "truncate"
	case OpOpen:
		return "open"
	case OpRename:
		return "rename"
	case OpRemove:
		return "remove"
	case OpRead:
		return "read"
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// ErrInjected is the error injected faults return (wrapped in *fs.PathError).
var ErrInjected = errors.New("vfs: injected fault")

// Injector decides the fate of each operation. For writes n is the length
// of the write; Inject returns how many bytes really reach the inner file
// (n for all, fewer to tear the write) and the error to return. For other
// operations allow is ignored and a non-nil error fails the operation before
// it reaches the inner FS.
type Injector interface {
	Inject(op Op, path string, n int) (allow int, err error)
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op, path string, n int) (int, error)

func (f InjectorFunc) Inject(op Op, path string, n int) (int, error) { return f(op, path, n) }

// FailNth fails the Nth (1-based) operation of kind Op. For writes, the
// first Tear bytes of that write still reach the file (a torn write). With
// Sticky, every later write, sync and truncate fails too, as a dead disk
// would. It is safe for concurrent use.
type FailNth struct {
	Op     Op
	N      int
	Tear   int
	Sticky bool

	mu    sync.Mutex
	count int
	fired bool
}

// Fired reports whether the fault has happened.
func (f *FailNth) Fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

func (f *FailNth) Inject(op Op, path string, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fired && f.Sticky && (op == OpWrite || op == OpSync || op == OpSyncDir || op == OpTruncate || op == OpRename || op == OpRemove) {
		return 0, ErrInjected
	}
	if op != f.Op || f.fired {
		return n, nil
	}
	f.count++
	if f.count < f.N {
		return n, nil
	}
	f.fired = true
	if op == OpWrite {
		return min(f.Tear, n), ErrInjected
	}
	return 0, ErrInjected
}

// FaultFS wraps an FS and consults an Injector before each operation.
type FaultFS struct {
	inner FS
	inj   Injector
}

// NewFaultFS wraps inner. The Injector keeps its own state (counters).
func NewFaultFS(inner FS, inj Injector) *FaultFS { return &FaultFS{inner: inner, inj: inj} }

// Inner returns the wrapped filesystem.
func (f *FaultFS) Inner() FS { return f.inner }

func (f *FaultFS) check(op Op, name string) error {
	if _, err := f.inj.Inject(op, name, 0); err != nil {
		return &fs.PathError{Op: op.String(), Path: name, Err: err}
	}
	return nil
}

func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: inner, inj: f.inj}, nil
}

func (f *FaultFS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *FaultFS) RemoveAll(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.RemoveAll(name)
}

func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename, oldpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

func (f *FaultFS) MkdirAll(dir string, perm os.FileMode) error { return f.inner.MkdirAll(dir, perm) }
func (f *FaultFS) ReadDir(dir string) ([]string, error)        { return f.inner.ReadDir(dir) }
func (f *FaultFS) Stat(name string) (fs.FileInfo, error)       { return f.inner.Stat(name) }

func (f *FaultFS) SyncDir(dir string) error {
	if err := f.check(OpSyncDir, dir); err != nil {
		return err
	}
	return f.inner.SyncDir(dir)
}

type faultFile struct {
	File
	inj Injector
}

func (f *faultFile) fail(op Op, err error) error {
	return &fs.PathError{Op: op.String(), Path: f.File.Name(), Err: err}
}

func (f *faultFile) Write(p []byte) (int, error) {
	allow, err := f.inj.Inject(OpWrite, f.File.Name(), len(p))
	if err != nil {
		n := 0
		if allow > 0 {
			n, _ = f.File.Write(p[:min(allow, len(p))])
		}
		return n, f.fail(OpWrite, err)
	}
	return f.File.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	allow, err := f.inj.Inject(OpWrite, f.File.Name(), len(p))
	if err != nil {
		n := 0
		if allow > 0 {
			n, _ = f.File.WriteAt(p[:min(allow, len(p))], off)
		}
		return n, f.fail(OpWrite, err)
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if _, err := f.inj.Inject(OpRead, f.File.Name(), len(p)); err != nil {
		return 0, f.fail(OpRead, err)
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) Read(p []byte) (int, error) {
	if _, err := f.inj.Inject(OpRead, f.File.Name(), len(p)); err != nil {
		return 0, f.fail(OpRead, err)
	}
	return f.File.Read(p)
}

func (f *faultFile) Sync() error {
	if _, err := f.inj.Inject(OpSync, f.File.Name(), 0); err != nil {
		return f.fail(OpSync, err)
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if _, err := f.inj.Inject(OpTruncate, f.File.Name(), 0); err != nil {
		return f.fail(OpTruncate, err)
	}
	return f.File.Truncate(size)
}
