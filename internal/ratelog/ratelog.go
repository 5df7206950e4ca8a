package ratelog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is the interval New uses when given zero.
const DefaultInterval = 10 * time.Second

// MaxKeys bounds the number of keys held at once; further keys share one.
const MaxKeys = 1024

const overflowKey = "\x00ratelog-overflow"

// Limiter writes the first line of a key at once and a count of the lines it
// held back once per interval. It is safe for concurrent use.
type Limiter struct {
	log      *slog.Logger
	interval time.Duration

	mu     sync.Mutex
	keys   map[string]*entry
	closed bool
}

// entry is one key under suppression: a line was written less than an
// interval ago, and the timer will report what came after it.
type entry struct {
	level      slog.Level
	msg        string // the message of the first line, used in the summary
	suppressed int
	lastArgs   []any
	timer      *time.Timer
}

// New returns a Limiter that writes to log, holding back repeats of a line
// for interval (DefaultInterval when interval <= 0).
func New(log *slog.Logger, interval time.Duration) *Limiter {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Limiter{log: log, interval: interval, keys: make(map[string]*entry)}
}

// Interval is the interval the summaries count over.
func (l *Limiter) Interval() time.Duration { return l.interval }

// Warn is Log at warn level with a background context.
func (l *Limiter) Warn(msg string, args ...any) {
	l.LogKey(context.Background(), slog.LevelWarn, msg, msg, args...)
}

// Info is Log at info level with a background context.
func (l *Limiter) Info(msg string, args ...any) {
	l.LogKey(context.Background(), slog.LevelInfo, msg, msg, args...)
}

// Log writes msg unless a line with the same message was written within the
// interval, in which case it only counts it.
func (l *Limiter) Log(ctx context.Context, level slog.Level, msg string, args ...any) {
	l.LogKey(ctx, level, msg, msg, args...)
}

// LogKey is Log with an explicit key, for a call site whose message varies
// (a key must come from a small set: never put client input in it).
func (l *Limiter) LogKey(ctx context.Context, level slog.Level, key, msg string, args ...any) {
	if l == nil || !l.log.Enabled(ctx, level) {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.log.Log(ctx, level, msg, args...)
		return
	}
	e, ok := l.keys[key]
	if !ok && len(l.keys) >= MaxKeys {
		key = overflowKey
		e, ok = l.keys[key]
	}
	if ok {
		e.suppressed++
		e.lastArgs = args
		l.mu.Unlock()
		return
	}
	e = &entry{level: level, msg: msg}
	if key == overflowKey {
		e.msg = "log lines of other kinds"
	}
	l.keys[key] = e
	e.timer = time.AfterFunc(l.interval, func() { l.tick(key, e) })
	l.mu.Unlock()
	// Written outside the lock: a slow handler must not serialize callers
	// of other keys.
	l.log.Log(ctx, level, msg, args...)
}

// tick ends one interval of key: it reports what was held back and keeps
// the key suppressed for another interval, or forgets it if nothing was.
func (l *Limiter) tick(key string, e *entry) {
	l.mu.Lock()
	if l.keys[key] != e {
		l.mu.Unlock()
		return
	}
	n, args := e.suppressed, e.lastArgs
	if n == 0 || l.closed {
		delete(l.keys, key)
		l.mu.Unlock()
		return
	}
	e.suppressed, e.lastArgs = 0, nil
	e.timer.Reset(l.interval)
	l.mu.Unlock()
	l.summary(e, n, args)
}

func (l *Limiter) summary(e *entry, n int, args []any) {
	msg := fmt.Sprintf("%s (and %d more like it in the last %s)", e.msg, n, l.interval)
	l.log.Log(context.Background(), e.level, msg, append(args[:len(args):len(args)], "suppressed", n)...)
}

// Flush writes the summary of every key with lines held back now, without
// waiting for its interval to end, and forgets every key.
func (l *Limiter) Flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	type pending struct {
		e    *entry
		n    int
		args []any
	}
	var out []pending
	for k, e := range l.keys {
		e.timer.Stop()
		if e.suppressed > 0 {
			out = append(out, pending{e, e.suppressed, e.lastArgs})
		}
		delete(l.keys, k)
	}
	l.mu.Unlock()
	for _, p := range out {
		l.summary(p.e, p.n, p.args)
	}
}

// Close flushes pending summaries and stops every timer; lines logged after
// Close are written as they come.
func (l *Limiter) Close() {
	if l == nil {
		return
	}
	l.Flush()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
