package protocol

import (
	"context"
	"errors"
	"sync"
)

// DefaultQueuedMaxRequestBytes is the default Budget: request bytes held
// in memory across all connections of the Servers that share it (Kafka's
// queued.max.request.bytes, which Kafka leaves unbounded by default).
const DefaultQueuedMaxRequestBytes = 100 << 20

// firstChunk is how much of a frame a connection reads before the frame
// is admitted to the Budget. A frame no larger is read whole first; a
// larger one must show this many bytes before it may claim its declared
// size, so a length prefix with nothing behind it costs at most this much,
// like the connection's read buffer.
const firstChunk = 64 << 10

// maxCachedFrame is the largest frame buffer the Budget keeps for reuse.
const maxCachedFrame = 16 << 20

// Budget bounds the bytes of request frames held in memory, across
// connections and listeners: a frame is admitted (its declared size
// taken) once its first bytes have arrived, and given back once it has
// been handled (for a reply with Wait, once that reply is done). A frame
// that does not fit waits, in arrival order, so neither a stream of small
// frames can starve a large one nor can frames half read hold each other
// up: only admitted frames hold budget, and they finish on their own. A
// frame larger than the whole budget (but within Config.MaxRequestBytes)
// is admitted alone, once nothing else holds any.
//
// Memory held for frames is then at most the budget (or the one frame
// larger than it), plus firstChunk and the read buffer per connection.
//
// Large produce frames are recycled through the Budget (a fresh multi-MiB
// buffer per request, zeroed and faulted in, cost about half the broker's
// produce CPU); cached buffers stay charged to it and are dropped first
// when a frame needs room.
type Budget struct {
	limit int64

	mu      sync.Mutex
	used    int64    // admitted frames + cached buffers
	cached  [][]byte // recycled frame buffers, charged by cap
	waiters []chan struct{}
}

// NewBudget returns a budget of limit bytes (<= 0: DefaultQueuedMaxRequestBytes).
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultQueuedMaxRequestBytes
	}
	return &Budget{limit: limit}
}

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is the bytes currently charged (admitted frames and cached
// buffers).
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

var errBudgetClosed = errors.New("protocol: stopped waiting for request memory")

// admit takes size bytes for a frame, waiting its turn; it returns a
// cached buffer of capacity >= size when one fits (then the charge is its
// capacity), and the bytes charged. It fails if ctx ends or stop closes
// first.
func (b *Budget) admit(ctx context.Context, stop <-chan struct{}, size int64) ([]byte, int64, error) {
	b.mu.Lock()
	var me chan struct{}
	for {
		if me == nil || (len(b.waiters) > 0 && b.waiters[0] == me) {
			if buf, n, ok := b.tryLocked(size, me == nil && len(b.waiters) > 0); ok {
				if me != nil {
					b.waiters = b.waiters[1:]
					b.wakeHeadLocked()
				}
				b.mu.Unlock()
				return buf, n, nil
			}
		}
		if me == nil {
			me = make(chan struct{}, 1)
			b.waiters = append(b.waiters, me)
		}
		b.mu.Unlock()
		select {
		case <-me:
		case <-ctx.Done():
			b.leave(me)
			return nil, 0, ctx.Err()
		case <-stop:
			b.leave(me)
			return nil, 0, errBudgetClosed
		}
		b.mu.Lock()
	}
}

// tryLocked admits size bytes if they fit. queued: others are waiting
// ahead, so only a cached buffer (which takes nothing new) may be used.
func (b *Budget) tryLocked(size int64, queued bool) ([]byte, int64, bool) {
	if size >= firstChunk {
		for i, c := range b.cached {
			if int64(cap(c)) >= size && int64(cap(c)) <= 2*size {
				b.cached = append(b.cached[:i], b.cached[i+1:]...)
				return c[:size], int64(cap(c)), true
			}
		}
	}
	if queued {
		return nil, 0, false
	}
	// Cached buffers are the first to go when a frame needs the room.
	for b.used+size > b.limit && len(b.cached) > 0 {
		last := len(b.cached) - 1
		b.used -= int64(cap(b.cached[last]))
		b.cached[last] = nil
		b.cached = b.cached[:last]
	}
	if b.used+size <= b.limit || b.used == 0 {
		b.used += size
		return nil, size, true
	}
	return nil, 0, false
}

// leave removes a waiter that gave up.
func (b *Budget) leave(me chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, w := range b.waiters {
		if w == me {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			if i == 0 {
				b.wakeHeadLocked()
			}
			return
		}
	}
}

func (b *Budget) wakeHeadLocked() {
	if len(b.waiters) > 0 {
		select {
		case b.waiters[0] <- struct{}{}:
		default:
		}
	}
}

// release gives back n bytes; buf, if non-nil, is a frame buffer (charged
// by its capacity, n) that may be kept for reuse.
func (b *Budget) release(n int64, buf []byte) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if buf != nil && cap(buf) <= maxCachedFrame && len(b.waiters) == 0 && len(b.cached) < 8 {
		b.cached = append(b.cached, buf[:0])
		return // stays charged
	}
	b.used -= n
	b.wakeHeadLocked()
}
