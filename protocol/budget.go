package protocol

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueuedMaxRequestBytes is the default Budget: request bytes held
// in memory across all connections of the Servers that share it (Kafka's
// queued.max.request.bytes, which Kafka leaves unbounded by default).
const DefaultQueuedMaxRequestBytes = 100 << 20

// smallFrame is the largest frame read whole without asking the Budget
// for room: it is charged, but never waits, so ApiVersions, SASL,
// metadata, heartbeats, commits and small produce requests are never
// queued behind large frames. A connection holds at most one being read,
// the size of its read buffer.
const smallFrame = 64 << 10

// growStart is the smallest first buffer of a large frame read in growth
// mode.
const growStart = 128 << 10

// maxCached is how many frame buffers the Budget keeps for reuse, and
// cacheIdle how long one larger than keepLarge stays unused before it is
// dropped (so one burst of huge requests does not pin their memory).
const (
	maxCached = 8
	keepLarge = 16 << 20
	cacheIdle = 10 * time.Second
)

// overdraftAfter is how long the first waiter waits before it may go past
// the limit, and stallEvictAfter how long a frame holding a whole buffer
// may receive nothing while others wait for memory before its connection
// is closed.
const (
	overdraftAfter  = 100 * time.Millisecond
	stallEvictAfter = 5 * time.Second
)

// Budget bounds the memory held by request frames across connections and
// listeners (Kafka's queued.max.request.bytes). What it charges is the
// memory actually held: the capacity of each frame's buffer, plus the
// buffers it keeps for reuse.
//
//   - Small frames (up to 64 KiB) are charged but never wait.
//   - A large frame takes nothing until its first 64 KiB have arrived.
//     When most of it is already in the kernel's receive queue (or its
//     connection sent its last large frame promptly), it takes a buffer
//     of its whole size at once and is read into it without copies.
//     Otherwise it grows as its bytes arrive (1 MiB, then doubling), so a
//     frame whose body stops arriving holds at most about twice what it
//     sent.
//   - A request for room that does not fit waits. Waiters are served
//     fairly: the one whose owner (its connection, or its principal once
//     authenticated: ConnInfo.SetBudgetOwner) holds the least goes first,
//     in arrival order among equals, so one client cannot crowd out the
//     others. A waiter is not overtaken by smaller ones that would fit.
//   - Frames held by connections whose bytes stopped arriving cannot
//     block everyone: when the first waiter has waited overdraftAfter and
//     would fit but for frames still being read, it is given its whole
//     frame beyond the limit, one frame at a time (this also ends the
//     deadlock of many half-read frames each waiting to grow). Frames
//     being handled are waited for: they finish on their own. A frame holding a whole buffer that receives nothing for
//     stallEvictAfter while others wait has its connection closed, and
//     every frame must arrive within Config.RequestReadTimeout.
//
// Memory held for frames is thus at most the limit plus one frame (the
// one allowed past it), plus 64 KiB of read buffer and one small frame per
// connection.
type Budget struct {
	limit int64

	small atomic.Int64 // small frames held
	nwait atomic.Int32 // len(waiters), read without the lock

	mu        sync.Mutex
	used      int64 // large frames' buffers and cached buffers
	complete  int64 // of used, frames read whole (being handled)
	cached    []cachedBuf
	waiters   []*waiter
	owners    map[any]int64         // large-frame bytes per owner
	reading   map[*hold]func() bool // frames being read into a whole buffer, with their evict
	overdraft *hold                 // the one frame allowed past the limit
	overdrawn atomic.Int64          // times the limit was overdrawn (stats, tests)
	evicted   atomic.Int64          // connections closed for stalling (stats, tests)
	trimTimer *time.Timer           // drops idle large cached buffers
	// dropped is the bytes of frame buffers let go since the last
	// collection it started, gcRunning whether one runs (collectDropped).
	dropped   atomic.Int64
	gcRunning atomic.Bool
	now       func() time.Time // tests
}

type cachedBuf struct {
	buf    []byte
	when   time.Time
	mapped bool // from mapFrame: unmapped when dropped
}

// hold is one large frame's charge.
type hold struct {
	b        *Budget
	owner    any
	charged  int64 // guarded by b.mu
	complete bool  // read whole; guarded by b.mu
	// lastRead is the unix-nano time bytes last arrived for the frame.
	lastRead atomic.Int64
	// mapped are the frame's buffers that came from mapFrame (only
	// Produce frames, whose bytes the handler does not keep, over
	// keepLarge or growing to it) or were grown by remapFrame: they are
	// unmapped when given back. Guarded by b.mu.
	mapped [][]byte
	// mapOK: the frame is a Produce request, whose buffer may be mapped.
	mapOK bool
}

type waiter struct {
	h       *hold
	n       int64 // room wanted
	whole   int64 // the frame's whole buffer, granted when overdrawing
	wantBuf bool  // n is a whole frame buffer: a cached one may be handed over
	since   time.Time
	ch      chan struct{}
	// Set under b.mu when served.
	done    bool
	granted int64
	buf     []byte
}

// NewBudget returns a budget of limit bytes (<= 0: DefaultQueuedMaxRequestBytes).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultQueuedMaxRequestBytes
	}
	return &Budget{limit: limit, owners: map[any]int64{}, reading: map[*hold]func() bool{}, now: time.Now}
}

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is the bytes currently charged: frames being read or handled, and
// cached buffers.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used + b.small.Load()
}

// Overdrawn is how many frames were let past the limit because memory was
// held by frames that were not finishing.
func (b *Budget) Overdrawn() int64 { return b.overdrawn.Load() }

// Evicted is how many connections were closed because their frame stopped
// arriving while holding a whole buffer others were waiting for.
func (b *Budget) Evicted() int64 { return b.evicted.Load() }

var errBudgetClosed = errors.New("protocol: stopped waiting for request memory")

func (b *Budget) chargeSmall(n int64) { b.small.Add(n) }

func (b *Budget) releaseSmall(n int64) {
	if n == 0 {
		return
	}
	b.small.Add(-n)
	if b.nwait.Load() > 0 {
		b.mu.Lock()
		b.serveLocked()
		b.mu.Unlock()
	}
}

func (b *Budget) newHold(owner any) *hold {
	h := &hold{b: b, owner: owner}
	h.lastRead.Store(time.Now().UnixNano())
	return h
}

// acquire charges n more bytes to h, waiting for room. wantBuf: n is a
// frame buffer, so the smallest cached buffer of capacity n or more may be
// handed over instead (then the charge is its capacity). whole is the
// frame's whole buffer, granted instead of n when the waiter overdraws.
// The bytes granted are charged to h even when an error is returned.
func (h *hold) acquire(ctx context.Context, stop <-chan struct{}, n, whole int64, wantBuf bool) ([]byte, int64, error) {
	b := h.b
	b.mu.Lock()
	if len(b.waiters) == 0 {
		if buf, g, ok := b.tryLocked(h, n, wantBuf, h.mapOK); ok {
			b.mu.Unlock()
			return buf, g, nil
		}
	}
	w := &waiter{h: h, n: n, whole: whole, wantBuf: wantBuf, since: b.now(), ch: make(chan struct{}, 1)}
	b.waiters = append(b.waiters, w)
	b.nwait.Add(1)
	tick := time.NewTicker(overdraftAfter / 2)
	defer tick.Stop()
	for {
		b.serveLocked()
		if w.done {
			b.mu.Unlock()
			return w.buf, w.granted, nil
		}
		evict := b.stalledLocked()
		b.mu.Unlock()
		for _, f := range evict {
			f()
		}
		var err error
		select {
		case <-w.ch:
		case <-tick.C:
		case <-ctx.Done():
			err = ctx.Err()
		case <-stop:
			err = errBudgetClosed
		}
		b.mu.Lock()
		if err != nil {
			if w.done {
				b.mu.Unlock()
				return w.buf, w.granted, err
			}
			b.removeWaiterLocked(w)
			b.serveLocked() // the next one may fit now
			b.mu.Unlock()
			return nil, 0, err
		}
	}
}

// tryLocked charges n to h if it fits (a cached buffer fits always: it is
// charged already).
func (b *Budget) tryLocked(h *hold, n int64, wantBuf, mapOK bool) ([]byte, int64, bool) {
	if wantBuf {
		// The smallest cached buffer that holds n: it is charged
		// already, so taking it costs no room.
		best := -1
		for i, c := range b.cached {
			if c := cap(c.buf); int64(c) >= n && (best < 0 || c < cap(b.cached[best].buf)) &&
				(!b.cached[i].mapped || mapOK) {
				best = i
			}
		}
		if best >= 0 {
			c := b.cached[best]
			b.cached = append(b.cached[:best], b.cached[best+1:]...)
			if c.mapped {
				h.mapped = append(h.mapped, c.buf)
			}
			n := int64(cap(c.buf))
			h.charged += n
			b.owners[h.owner] += n
			return c.buf[:0], n, true
		}
		if mapOK && n > keepLarge {
			if buf, ok := b.growCachedLocked(h, n); ok {
				return buf[:0], n, true
			}
		}
	}
	// Cached buffers are the first to go when a frame needs the room.
	small := b.small.Load()
	for b.used+small+n > b.limit && len(b.cached) > 0 {
		b.dropCachedLocked(len(b.cached) - 1)
	}
	// A frame larger than the whole budget goes alone.
	if b.used+small+n <= b.limit || b.used == h.charged {
		b.chargeLocked(h, n)
		return nil, n, true
	}
	return nil, 0, false
}

// remapFrame is mremapFrame; a test replaces it to take the paths where a
// mapping cannot grow (the frame is then copied into a new buffer).
var remapFrame = mremapFrame

// growCachedLocked hands h the largest cached mapped buffer grown to n
// bytes (remapFrame), if the growth fits the budget once the other cached
// buffers are dropped. Its pages are kept: a fresh mapping of a huge frame
// faults in and zeroes every page as the frame is read (about a tenth of
// the broker's produce CPU at 1000 partitions, where a producer's requests
// run 20-35 MiB and grow as it speeds up, so most missed every cached
// buffer by a few MiB).
func (b *Budget) growCachedLocked(h *hold, n int64) ([]byte, bool) {
	g := -1
	for i, c := range b.cached {
		if c.mapped && (g < 0 || cap(c.buf) > cap(b.cached[g].buf)) {
			g = i
		}
	}
	if g < 0 {
		return nil, false
	}
	extra := n - int64(cap(b.cached[g].buf))
	small := b.small.Load()
	for i := len(b.cached) - 1; i >= 0 && b.used+small+extra > b.limit; i-- {
		if i == g {
			continue
		}
		b.dropCachedLocked(i)
		if i < g {
			g-- // dropping shifted it down
		}
	}
	if b.used+small+extra > b.limit {
		return nil, false
	}
	buf, ok := remapFrame(b.cached[g].buf, int(n))
	if !ok {
		return nil, false // the old mapping stands, still cached
	}
	b.cached = append(b.cached[:g], b.cached[g+1:]...)
	b.used += extra
	h.mapped = append(h.mapped, buf)
	h.charged += n
	b.owners[h.owner] += n
	return buf, true
}

func (b *Budget) chargeLocked(h *hold, n int64) {
	b.used += n
	h.charged += n
	b.owners[h.owner] += n
	if h.complete {
		b.complete += n
	}
}

func (b *Budget) dropCachedLocked(i int) {
	b.used -= int64(cap(b.cached[i].buf))
	if b.cached[i].mapped {
		unmapFrame(b.cached[i].buf)
	} else {
		b.collectDropped(int64(cap(b.cached[i].buf)))
	}
	b.cached[i].buf = nil
	b.cached = append(b.cached[:i], b.cached[i+1:]...)
}

// serveLocked grants waiters in turn while they fit: the one whose owner
// holds least first, earliest among equals. If it does not fit and has
// waited overdraftAfter, and no other frame is past the limit, it is given
// its whole frame beyond the limit.
func (b *Budget) serveLocked() {
	for len(b.waiters) > 0 {
		i := 0
		least := b.owners[b.waiters[0].h.owner]
		for j, w := range b.waiters[1:] {
			if o := b.owners[w.h.owner]; o < least {
				i, least = j+1, o
			}
		}
		w := b.waiters[i]
		buf, g, ok := b.tryLocked(w.h, w.n, w.wantBuf, w.h.mapOK)
		if !ok {
			if b.overdraft != nil || b.now().Sub(w.since) < overdraftAfter ||
				b.complete > 0 && b.complete+w.whole > b.limit {
				return
			}
			b.overdraft = w.h
			b.overdrawn.Add(1)
			g = w.whole
			b.chargeLocked(w.h, g)
		}
		b.removeWaiterLocked(w)
		w.done, w.granted, w.buf = true, g, buf
		w.ch <- struct{}{}
	}
}

func (b *Budget) removeWaiterLocked(w *waiter) {
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			b.nwait.Add(-1)
			return
		}
	}
}

// stalledLocked returns the evict functions of frames holding a whole
// buffer that received nothing for stallEvictAfter, when someone waits.
func (b *Budget) stalledLocked() []func() {
	if len(b.waiters) == 0 {
		return nil
	}
	var out []func()
	cut := b.now().Add(-stallEvictAfter).UnixNano()
	for h, evict := range b.reading {
		if h.lastRead.Load() < cut {
			out = append(out, func() {
				if evict() {
					b.evicted.Add(1)
				}
			})
		}
	}
	return out
}

// readingWhole registers h as a frame being read into its whole buffer:
// if it stalls while others wait, evict is called; it reports whether it
// closed the connection (it does not when the stall is the reader's).
func (h *hold) readingWhole(evict func() bool) {
	h.lastRead.Store(time.Now().UnixNano()) // waiting for the buffer was not stalling
	h.b.mu.Lock()
	h.b.reading[h] = evict
	h.b.mu.Unlock()
}

// finish marks h's frame as read whole: it is no longer a candidate for
// eviction, and it will give its memory back once handled.
func (h *hold) finish() {
	b := h.b
	b.mu.Lock()
	delete(b.reading, h)
	h.complete = true
	b.complete += h.charged
	b.mu.Unlock()
}

// outgrow gives back the buffer h's frame outgrew. (Keeping it for reuse
// by frames growing past it was tried: under a flood of large requests the
// cache then held the room the growing frames needed, and peak RSS rose.)
func (h *hold) outgrow(old []byte) {
	b := h.b
	n := int64(cap(old))
	b.mu.Lock()
	b.uncharge(h, n)
	b.serveLocked()
	mapped := h.takeMappedLocked(old)
	b.mu.Unlock()
	if mapped != nil {
		unmapFrame(mapped)
	} else {
		b.collectDropped(n)
	}
}

// regrow grows buf, one of h's mapped buffers, to n bytes in place of a
// new buffer and a copy: the mapping keeps its pages (remapFrame). n was
// charged to h by acquire; buf's own charge is given back, as outgrow
// does. False if buf is not mapped or the mapping cannot grow.
func (h *hold) regrow(buf []byte, n int64) ([]byte, bool) {
	if !h.mapOK {
		return nil, false // never mapped: no need to take the lock to look
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	old := h.takeMappedLocked(buf)
	if old == nil {
		return nil, false
	}
	nb, ok := remapFrame(old, int(n))
	if !ok {
		h.mapped = append(h.mapped, old)
		return nil, false
	}
	h.mapped = append(h.mapped, nb)
	b.uncharge(h, int64(cap(old)))
	b.serveLocked()
	return nb, true
}

// takeMappedLocked removes buf from h.mapped and returns it, or nil if buf
// was not mapped.
func (h *hold) takeMappedLocked(buf []byte) []byte {
	for i, m := range h.mapped {
		if &m[:1][0] == &buf[:1][0] {
			h.mapped = append(h.mapped[:i], h.mapped[i+1:]...)
			return m
		}
	}
	return nil
}

// addMapped records that buf, from mapFrame, is one of h's buffers.
func (h *hold) addMapped(buf []byte) {
	h.b.mu.Lock()
	h.mapped = append(h.mapped, buf)
	h.b.mu.Unlock()
}

// collectDropped notes n bytes of frame buffers let go; once they add up
// to a quarter of the limit, it starts a garbage collection. Left to the
// runtime's pacing, buffers dropped under a flood of large requests pile
// up to about the live heap again before being reused (a peak RSS near
// twice the budget); this keeps the garbage to a fraction of it.
func (b *Budget) collectDropped(n int64) {
	if n < smallFrame || b.dropped.Add(n) < b.limit/4 || !b.gcRunning.CompareAndSwap(false, true) {
		return
	}
	b.dropped.Store(0)
	go func() {
		runtime.GC()
		b.gcRunning.Store(false)
	}()
}

func (b *Budget) uncharge(h *hold, n int64) {
	b.used -= n
	h.charged -= n
	if h.complete {
		b.complete -= n
	}
	if o := b.owners[h.owner] - n; o > 0 {
		b.owners[h.owner] = o
	} else {
		delete(b.owners, h.owner)
	}
}

// release gives back all of h's charge; keep, if non-nil, is its frame
// buffer, which may be kept for reuse (it stays charged while cached).
func (h *hold) release(keep []byte) {
	b := h.b
	b.mu.Lock()
	delete(b.reading, h)
	if b.overdraft == h {
		b.overdraft = nil
	}
	n := h.charged
	var keepMapped []byte
	if keep != nil {
		keepMapped = h.takeMappedLocked(keep)
	}
	mapped := h.mapped
	h.mapped = nil
	if keep != nil && int64(cap(keep)) <= n && len(b.cached) < maxCached &&
		b.used-n+int64(cap(keep)) <= b.limit {
		b.uncharge(h, n)
		b.used += int64(cap(keep))
		b.cached = append(b.cached, cachedBuf{buf: keep[:0], when: b.now(), mapped: keepMapped != nil})
		if cap(keep) > keepLarge && b.trimTimer == nil {
			b.trimTimer = time.AfterFunc(cacheIdle, b.trim)
		}
		n -= int64(cap(keep))
	} else {
		b.uncharge(h, n)
		if keepMapped != nil {
			mapped = append(mapped, keepMapped)
		}
	}
	b.serveLocked()
	b.mu.Unlock()
	for _, m := range mapped {
		unmapFrame(m)
		n -= int64(cap(m))
	}
	b.collectDropped(n)
}

// trim drops large cached buffers unused for cacheIdle.
func (b *Budget) trim() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trimTimer = nil
	cut := b.now().Add(-cacheIdle)
	large := false
	for i := len(b.cached) - 1; i >= 0; i-- {
		if cap(b.cached[i].buf) <= keepLarge {
			continue
		}
		if b.cached[i].when.Before(cut) {
			b.dropCachedLocked(i)
		} else {
			large = true
		}
	}
	if large {
		b.trimTimer = time.AfterFunc(cacheIdle, b.trim)
	}
}

// bufCap is the capacity given to a frame buffer of size bytes: a little
// more, so the next frames of a client, which vary in size, can reuse it.
func bufCap(size int) int {
	if size > keepLarge {
		return size
	}
	return roundUp(size+size/8, smallFrame)
}

// roundUp rounds n up to a multiple of m, a power of two.
func roundUp(n, m int) int { return (n + m - 1) &^ (m - 1) }
