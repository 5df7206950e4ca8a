package vfs

import (
	"io/fs"
	"os"
	"sort"
)

// OS is the real filesystem.
type OS struct{}

type osFile struct{ *os.File }

func (f osFile) OS() *os.File { return f.File }

func (OS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Remove(name string) error             { return os.Remove(name) }
func (OS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (OS) MkdirAll(dir string, perm os.FileMode) error {
	return os.MkdirAll(dir, perm)
}
func (OS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (OS) ReadDir(dir string) ([]string, error) {
	d, err := openFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (OS) SyncDir(dir string) error {
	d, err := openFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
