package broker

// The request log: the last N requests the broker answered (key, version,
// client, connection, latency, error), for a test to see what its client
// did without a packet capture. Off (one nil-pointer load per request)
// until EnableRequestLog; the root package turns it on with the control
// API.

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// RequestLogEntry is one answered request.
type RequestLogEntry struct {
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

type requestLogHook struct {
	ring atomic.Pointer[reqRing]
}

type reqRing struct {
	mu   sync.Mutex
	buf  []RequestLogEntry
	next uint64 // total entries written
}

// EnableRequestLog keeps the last n requests (n <= 0 turns it off).
func (b *Broker) EnableRequestLog(n int) {
	if n <= 0 {
		b.reqlog.ring.Store(nil)
		return
	}
	b.reqlog.ring.Store(&reqRing{buf: make([]RequestLogEntry, n)})
}

// RequestLog returns the logged requests, oldest first; nil when off.
func (b *Broker) RequestLog() []RequestLogEntry {
	r := b.reqlog.ring.Load()
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
	out := make([]RequestLogEntry, 0, r.next-start)
	for i := start; i < r.next; i++ {
		out = append(out, r.buf[i%n])
	}
	return out
}

func (r *reqRing) add(e RequestLogEntry) {
	r.mu.Lock()
	r.buf[r.next%uint64(len(r.buf))] = e
	r.next++
	r.mu.Unlock()
}

// serveLogged is Serve with the request log on.
func (b *Broker) serveLogged(ctx context.Context, req *protocol.Request, r *reqRing) protocol.Reply {
	e := RequestLogEntry{Time: time.Now(), Key: req.Key, Version: req.Version}
	if req.ClientID != nil {
		e.ClientID = *req.ClientID
	}
	if req.Conn != nil {
		e.ConnID, e.Listener = req.Conn.ID, req.Conn.Listener
		if req.Conn.Remote != nil {
			e.Remote = req.Conn.Remote.String()
		}
	}
	reply := b.serve(ctx, req)
	if reply.Wait == nil {
		e.Latency = time.Since(e.Time)
		e.Closed = reply.Err != nil
		e.NoAnswer = reply.Response == nil && reply.Err == nil
		e.ErrorCode = firstErrorCode(reply.Response)
		r.add(e)
		return reply
	}
	wait := reply.Wait
	reply.Wait = func() (kmsg.Response, error) {
		resp, err := wait()
		e.Latency = time.Since(e.Time)
		e.Closed = err != nil
		e.NoAnswer = resp == nil && err == nil
		e.ErrorCode = firstErrorCode(resp)
		r.add(e)
		return resp, err
	}
	return reply
}

// firstErrorCode is the top-level code, else the first non-zero one of a
// topic or partition.
func firstErrorCode(resp kmsg.Response) int16 {
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
