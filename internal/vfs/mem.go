package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MemFS is an in-memory filesystem with POSIX-like semantics (unlinked or
// renamed files stay usable through open handles) and a crash model:
//
//   - a file's durable content is what it held at its last Sync;
//   - a file's directory entry (creation, rename, removal) is durable only
//     after SyncDir of its directory;
//   - directories themselves are durable as soon as they are created or
//     removed (MkdirAll/RemoveAll), a simplification that errs on the side
//     of keeping data; storage code still calls SyncDir where POSIX needs it.
//
// CrashClone returns the filesystem a machine would see after losing power.
// Keeping the durable state costs nothing for appends: only overwrites and
// truncations of synced bytes copy the synced content (copy on write).
type MemFS struct {
	mu   sync.Mutex
	dirs map[string]*memDir
	// powerCut makes every later Sync and SyncDir fail (see PowerCut).
	// Guarded by mu, which Sync also holds, so no sync can succeed on this
	// filesystem after the crash image was taken.
	powerCut bool
}

// ErrPowerCut is returned by Sync and SyncDir after PowerCut.
var ErrPowerCut = errors.New("vfs: power cut")

type memDir struct {
	entries map[string]*memNode // current names
	durable map[string]*memNode // names as of the last SyncDir
	subdirs map[string]bool
	modTime time.Time
}

// memNode holds a file's bytes in fixed-size chunks, so growing a file
// never copies what it already holds (a contiguous slice would copy the
// whole file at each doubling, under the lock readers need).
type memNode struct {
	mu      sync.RWMutex
	chunks  [][]byte // each memChunk bytes; bytes at or past size are zero
	size    int
	synced  int    // bytes [0, synced) are durable unless diverge
	durCopy []byte // durable content once synced bytes were overwritten
	diverge bool   // durCopy is valid
	modTime time.Time
}

const memChunk = 256 << 10

// readAt copies bytes at off into p, returning how many (short at EOF).
func (n *memNode) readAt(p []byte, off int) int {
	total := 0
	for len(p) > 0 && off < n.size {
		c := n.chunks[off/memChunk][off%memChunk:]
		m := copy(p, c[:min(len(c), n.size-off)])
		p, off, total = p[m:], off+m, total+m
	}
	return total
}

// bytes returns a copy of [0, end).
func (n *memNode) bytes(end int) []byte {
	b := make([]byte, end)
	n.readAt(b, 0)
	return b
}

// grow makes sure chunks cover [0, end).
func (n *memNode) grow(end int) {
	for len(n.chunks)*memChunk < end {
		n.chunks = append(n.chunks, make([]byte, memChunk))
	}
}

// NewMem returns an empty in-memory filesystem.
func NewMem() *MemFS {
	m := &MemFS{dirs: map[string]*memDir{}}
	m.mkdirLocked(".")
	m.mkdirLocked("/")
	return m
}

func newMemDir() *memDir {
	return &memDir{entries: map[string]*memNode{}, durable: map[string]*memNode{}, subdirs: map[string]bool{}, modTime: time.Now()}
}

func clean(name string) string { return path.Clean(name) }

func (m *MemFS) mkdirLocked(dir string) {
	dir = clean(dir)
	if _, ok := m.dirs[dir]; ok {
		return
	}
	m.dirs[dir] = newMemDir()
	parent := path.Dir(dir)
	if parent != dir {
		m.mkdirLocked(parent)
		m.dirs[parent].subdirs[path.Base(dir)] = true
	}
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// OpenFile opens or creates a file. Supported flags: O_RDONLY, O_WRONLY,
// O_RDWR, O_CREATE, O_EXCL, O_TRUNC, O_APPEND.
func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dirs[path.Dir(name)]
	if !ok {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	base := path.Base(name)
	if d.subdirs[base] {
		return nil, pathErr("open", name, errors.New("is a directory"))
	}
	n := d.entries[base]
	if n == nil {
		if flag&os.O_CREATE == 0 {
			return nil, pathErr("open", name, fs.ErrNotExist)
		}
		n = &memNode{modTime: time.Now()}
		d.entries[base] = n
	} else if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, pathErr("open", name, fs.ErrExist)
	}
	if flag&os.O_TRUNC != 0 && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		n.mu.Lock()
		n.truncateLocked(0)
		n.mu.Unlock()
	}
	return &memFile{fs: m, node: n, name: name, flag: flag}, nil
}

func (m *MemFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dirs[path.Dir(name)]
	if !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	base := path.Base(name)
	if _, ok := d.entries[base]; ok {
		delete(d.entries, base)
		return nil
	}
	if d.subdirs[base] {
		sub := m.dirs[name]
		if len(sub.entries) > 0 || len(sub.subdirs) > 0 {
			return pathErr("remove", name, errors.New("directory not empty"))
		}
		delete(d.subdirs, base)
		delete(m.dirs, name)
		return nil
	}
	return pathErr("remove", name, fs.ErrNotExist)
}

func (m *MemFS) RemoveAll(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dirs[path.Dir(name)]
	if !ok {
		return nil
	}
	base := path.Base(name)
	delete(d.entries, base)
	if d.subdirs[base] {
		delete(d.subdirs, base)
		prefix := name + "/"
		for k := range m.dirs {
			if k == name || strings.HasPrefix(k, prefix) {
				delete(m.dirs, k)
			}
		}
	}
	return nil
}

func (m *MemFS) Rename(oldpath, newpath string) error {
	oldpath, newpath = clean(oldpath), clean(newpath)
	m.mu.Lock()
	defer m.mu.Unlock()
	od, ok := m.dirs[path.Dir(oldpath)]
	if !ok {
		return pathErr("rename", oldpath, fs.ErrNotExist)
	}
	nd, ok := m.dirs[path.Dir(newpath)]
	if !ok {
		return pathErr("rename", newpath, fs.ErrNotExist)
	}
	ob, nb := path.Base(oldpath), path.Base(newpath)
	if n, ok := od.entries[ob]; ok {
		if nd.subdirs[nb] {
			return pathErr("rename", newpath, errors.New("is a directory"))
		}
		delete(od.entries, ob)
		nd.entries[nb] = n
		return nil
	}
	if !od.subdirs[ob] {
		return pathErr("rename", oldpath, fs.ErrNotExist)
	}
	// Directory rename: move the subtree (durable at once, see MemFS).
	if _, exists := m.dirs[newpath]; exists {
		return pathErr("rename", newpath, fs.ErrExist)
	}
	delete(od.subdirs, ob)
	nd.subdirs[nb] = true
	prefix := oldpath + "/"
	moved := map[string]*memDir{}
	for k, v := range m.dirs {
		if k == oldpath || strings.HasPrefix(k, prefix) {
			moved[newpath+k[len(oldpath):]] = v
			delete(m.dirs, k)
		}
	}
	for k, v := range moved {
		m.dirs[k] = v
	}
	return nil
}

func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	// A file in the way is an error, as with the OS.
	for p := dir; ; p = path.Dir(p) {
		if d, ok := m.dirs[path.Dir(p)]; ok {
			if _, isFile := d.entries[path.Base(p)]; isFile {
				return pathErr("mkdir", p, errors.New("not a directory"))
			}
		}
		if path.Dir(p) == p {
			break
		}
	}
	m.mkdirLocked(dir)
	return nil
}

func (m *MemFS) ReadDir(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dirs[dir]
	if !ok {
		return nil, pathErr("readdir", dir, fs.ErrNotExist)
	}
	names := make([]string, 0, len(d.entries)+len(d.subdirs))
	for n := range d.entries {
		names = append(names, n)
	}
	for n := range d.subdirs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.dirs[name]; ok {
		return memInfo{name: path.Base(name), dir: true, mod: d.modTime}, nil
	}
	d, ok := m.dirs[path.Dir(name)]
	if !ok {
		return nil, pathErr("stat", name, fs.ErrNotExist)
	}
	n := d.entries[path.Base(name)]
	if n == nil {
		return nil, pathErr("stat", name, fs.ErrNotExist)
	}
	return n.info(path.Base(name)), nil
}

func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.powerCut {
		return pathErr("sync", dir, ErrPowerCut)
	}
	d, ok := m.dirs[dir]
	if !ok {
		return pathErr("sync", dir, fs.ErrNotExist)
	}
	d.durable = make(map[string]*memNode, len(d.entries))
	for k, v := range d.entries {
		d.durable[k] = v
	}
	return nil
}

// CrashClone returns a new MemFS holding only what survives a power loss:
// directory entries as of each directory's last SyncDir, and for each file
// the content it had at its last Sync. The receiver is not changed.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashCloneLocked()
}

// PowerCut is CrashClone for a filesystem that is still in use: it takes
// the crash image and, atomically with it, makes every later Sync and
// SyncDir on the receiver fail with ErrPowerCut. A program still running on
// the receiver can then never report as durable something the image lacks,
// which a plain CrashClone followed by a shutdown would allow.
func (m *MemFS) PowerCut() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.powerCut = true
	return m.crashCloneLocked()
}

func (m *MemFS) crashCloneLocked() *MemFS {
	c := &MemFS{dirs: make(map[string]*memDir, len(m.dirs))}
	nodes := map[*memNode]*memNode{}
	for name, d := range m.dirs {
		nd := newMemDir()
		for k := range d.subdirs {
			nd.subdirs[k] = true
		}
		for k, n := range d.durable {
			cn := nodes[n]
			if cn == nil {
				cn = n.durableClone()
				nodes[n] = cn
			}
			nd.entries[k] = cn
			nd.durable[k] = cn
		}
		c.dirs[name] = nd
	}
	return c
}

func (n *memNode) durableClone() *memNode {
	n.mu.RLock()
	defer n.mu.RUnlock()
	var d []byte
	if n.diverge {
		d = n.durCopy
	} else {
		d = n.bytes(n.synced)
	}
	c := &memNode{modTime: n.modTime}
	c.writeAt(d, 0)
	c.synced = c.size
	return c
}

// preserve snapshots the durable content before bytes below n.synced change.
func (n *memNode) preserve(from int) {
	if n.diverge || from >= n.synced {
		return
	}
	n.durCopy = n.bytes(n.synced)
	n.diverge = true
}

func (n *memNode) truncateLocked(size int) {
	if size < n.size {
		n.preserve(size)
		keep := (size + memChunk - 1) / memChunk
		if size%memChunk != 0 {
			clear(n.chunks[keep-1][size%memChunk:])
		}
		clear(n.chunks[keep:])
		n.chunks = n.chunks[:keep]
	} else {
		n.grow(size)
	}
	n.size = size
	n.modTime = time.Now()
}

func (n *memNode) writeAt(p []byte, off int64) {
	o := int(off)
	n.preserve(o)
	n.grow(o + len(p))
	for len(p) > 0 {
		m := copy(n.chunks[o/memChunk][o%memChunk:], p)
		p, o = p[m:], o+m
	}
	n.size = max(n.size, o)
	n.modTime = time.Now()
}

func (n *memNode) info(name string) memInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return memInfo{name: name, size: int64(n.size), mod: n.modTime}
}

type memFile struct {
	fs     *MemFS
	node   *memNode
	name   string
	flag   int
	mu     sync.Mutex // guards pos
	pos    int64
	closed atomic.Bool
}

var errClosed = errors.New("file already closed")

func (f *memFile) readable() bool { return f.flag&os.O_WRONLY == 0 }
func (f *memFile) writable() bool { return f.flag&(os.O_WRONLY|os.O_RDWR) != 0 }

func (f *memFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, pathErr("read", f.name, errClosed)
	}
	if !f.readable() {
		return 0, pathErr("read", f.name, errors.New("bad file descriptor"))
	}
	if off < 0 {
		return 0, pathErr("read", f.name, errors.New("negative offset"))
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(f.node.size) {
		return 0, io.EOF
	}
	n := f.node.readAt(p, int(off))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flag&os.O_APPEND != 0 {
		f.node.mu.RLock()
		f.pos = int64(f.node.size)
		f.node.mu.RUnlock()
	}
	n, err := f.WriteAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, pathErr("write", f.name, errClosed)
	}
	if !f.writable() {
		return 0, pathErr("write", f.name, errors.New("bad file descriptor"))
	}
	if off < 0 {
		return 0, pathErr("write", f.name, errors.New("negative offset"))
	}
	f.node.mu.Lock()
	f.node.writeAt(p, off)
	f.node.mu.Unlock()
	return len(p), nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return pathErr("close", f.name, errClosed)
	}
	return nil
}

func (f *memFile) Sync() error {
	if f.closed.Load() {
		return pathErr("sync", f.name, errClosed)
	}
	// Under the filesystem lock, so PowerCut sees each sync either wholly
	// before its image or failing after it.
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.powerCut {
		return pathErr("sync", f.name, ErrPowerCut)
	}
	n := f.node
	n.mu.Lock()
	n.synced = n.size
	n.durCopy = nil
	n.diverge = false
	n.mu.Unlock()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if f.closed.Load() {
		return pathErr("truncate", f.name, errClosed)
	}
	if !f.writable() || size < 0 {
		return pathErr("truncate", f.name, errors.New("invalid argument"))
	}
	f.node.mu.Lock()
	f.node.truncateLocked(int(size))
	f.node.mu.Unlock()
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	if f.closed.Load() {
		return nil, pathErr("stat", f.name, errClosed)
	}
	return f.node.info(path.Base(f.name)), nil
}

func (f *memFile) Name() string { return f.name }

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
