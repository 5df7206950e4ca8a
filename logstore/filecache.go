package logstore

import (
	"os"
	"sync"

	"github.com/minikafka/minikafka/internal/vfs"
)

// FileCache bounds the number of segment files held open across many logs.
// Each segment has a handle; a handle opens its file on first use and keeps
// it open while referenced. Unreferenced open handles sit in an LRU list and
// are closed when the cache needs room. The limit is soft: if every open file
// is in use, opening one more exceeds it rather than failing a read.
type FileCache struct {
	mu   sync.Mutex
	max  int // <=0: unbounded
	open int
	// Idle open handles, an intrusive list (no allocation per release):
	// most recently used at head, eviction from tail.
	head, tail *fileHandle
	nidle      int
}

func (c *FileCache) pushFront(h *fileHandle) {
	h.idle, h.prev, h.next = true, nil, c.head
	if c.head != nil {
		c.head.prev = h
	} else {
		c.tail = h
	}
	c.head = h
	c.nidle++
}

func (c *FileCache) unlink(h *fileHandle) {
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		c.head = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		c.tail = h.prev
	}
	h.idle, h.prev, h.next = false, nil, nil
	c.nidle--
}

// NewFileCache returns a cache holding at most maxOpen idle-or-busy files
// (<=0: unbounded).
func NewFileCache(maxOpen int) *FileCache { return &FileCache{max: maxOpen} }

// FileCacheSize is a bound for a FileCache shared by every log of a
// process: half the process's open-file limit, leaving the other half to
// connections and everything else, and at least floor. A bound below the
// number of partitions being written costs every append an open and a
// close (each log's active segment evicting another's): with 1000
// partitions and 512 files that was a quarter of produce's CPU (issue 33).
func FileCacheSize(floor int) int {
	return max(floor, min(descriptorLimit()/2, 1<<20))
}

// Open returns how many files the cache holds open now.
func (c *FileCache) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

type fileHandle struct {
	c    *FileCache
	fs   vfs.FS
	path string // guarded by c.mu (renamed on deletion)
	f    vfs.File
	refs int
	// In the cache's idle list when open and unreferenced.
	idle       bool
	prev, next *fileHandle
	dead       bool // closed for good
}

func (c *FileCache) handle(fsys vfs.FS, path string) *fileHandle {
	return &fileHandle{c: c, fs: fsys, path: path}
}

// acquire returns the open file, opening it if needed, and pins it until
// release.
func (h *fileHandle) acquire() (vfs.File, error) {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.dead {
		return nil, ErrClosed
	}
	if h.f == nil {
		for c.max > 0 && c.open >= c.max && c.tail != nil {
			c.evictLocked(c.tail)
		}
		f, err := h.fs.OpenFile(h.path, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		h.f = f
		c.open++
	} else if h.idle {
		c.unlink(h)
	}
	h.refs++
	return h.f, nil
}

func (h *fileHandle) release() {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	h.refs--
	if h.refs > 0 || h.f == nil {
		return
	}
	if h.dead {
		h.f.Close()
		h.f = nil
		c.open--
		return
	}
	c.pushFront(h)
}

func (c *FileCache) evictLocked(h *fileHandle) {
	c.unlink(h)
	h.f.Close()
	h.f = nil
	c.open--
}

// setFile installs an already open file (a freshly created segment) as idle.
func (h *fileHandle) setFile(f vfs.File) {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	h.f = f
	c.open++
	c.pushFront(h)
	for c.max > 0 && c.open > c.max && c.nidle > 1 {
		c.evictLocked(c.tail)
	}
}

func (h *fileHandle) setPath(p string) {
	h.c.mu.Lock()
	h.path = p
	h.c.mu.Unlock()
}

func (h *fileHandle) getPath() string {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.path
}

// close closes the file for good once nobody uses it.
func (h *fileHandle) close() {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.dead {
		return
	}
	h.dead = true
	if h.f != nil && h.refs == 0 {
		if h.idle {
			c.unlink(h)
		}
		h.f.Close()
		h.f = nil
		c.open--
	}
}
