// Package reqlog is the broker's request log: the last N requests it
// answered (key, version, client, connection, latency, error), for a test
// to see what its client did without a packet capture. The broker fills
// an Entry per request (its serveLogged, on when the log is enabled) and
// adds it when the answer is ready; the package keeps the ring and finds
// the answer's error code. It imports neither broker nor protocol
// (internal/lint checks that).
//
// Log's ring is behind one atomic pointer (off: one nil-pointer load per
// request); a ring's mutex is a leaf.
package reqlog

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Entry is one answered request.
type Entry struct {
	Time      time.Time     // when it arrived
	Key       int16         //
	Version   int16         //
	ClientID  string        //
	ConnID    uint64        //
	Listener  string        //
	Remote    string        //
	Latency   time.Duration // arrival to answer ready
	ErrorCode int16         // the first non-zero code in the answer
	Closed    bool          // the connection was closed instead of (or after) an answer
	NoAnswer  bool          // acks=0, a swallowed answer
}

// Log is a request log, off until Enable.
type Log struct {
	ring atomic.Pointer[Ring]
}

// Ring is an enabled log's last entries.
type Ring struct {
	mu   sync.Mutex
	buf  []Entry
	next uint64 // total entries written
}

// Enable keeps the last n requests (n <= 0 turns the log off), dropping
// what was kept.
func (l *Log) Enable(n int) {
	if n <= 0 {
		l.ring.Store(nil)
		return
	}
	l.ring.Store(&Ring{buf: make([]Entry, n)})
}

// Ring is the log's ring, nil when off.
func (l *Log) Ring() *Ring { return l.ring.Load() }

// Entries returns the logged requests, oldest first; nil when off.
func (l *Log) Entries() []Entry {
	r := l.ring.Load()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := uint64(len(r.buf))
	start := uint64(0)
	if r.next > n {
		start = r.next - n
	}
	out := make([]Entry, 0, r.next-start)
	for i := start; i < r.next; i++ {
		out = append(out, r.buf[i%n])
	}
	return out
}

// Done completes e with the answer (resp, or the error that closed the
// connection) and adds it to the ring.
func (r *Ring) Done(e Entry, resp kmsg.Response, err error) {
	e.Latency = time.Since(e.Time)
	e.Closed = err != nil
	e.NoAnswer = resp == nil && err == nil
	e.ErrorCode = FirstErrorCode(resp)
	r.mu.Lock()
	r.buf[r.next%uint64(len(r.buf))] = e
	r.next++
	r.mu.Unlock()
}

// FirstErrorCode is the top-level code, else the first non-zero one of a
// topic or partition.
func FirstErrorCode(resp kmsg.Response) int16 {
	if resp == nil {
		return 0
	}
	v := reflect.ValueOf(resp)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	return errorCodeIn(v.Elem(), 0)
}

func errorCodeIn(v reflect.Value, depth int) int16 {
	if f := v.FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 && f.Int() != 0 {
		return int16(f.Int())
	}
	if depth >= 2 {
		return 0
	}
	for _, name := range [...]string{"Topics", "Partitions", "Groups", "Coordinators"} {
		s := v.FieldByName(name)
		if !s.IsValid() || s.Kind() != reflect.Slice || s.Type().Elem().Kind() != reflect.Struct {
			continue
		}
		for i := 0; i < s.Len(); i++ {
			if c := errorCodeIn(s.Index(i), depth+1); c != 0 {
				return c
			}
		}
	}
	return 0
}
