package protocol

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OnClose callbacks run once, after the client goes away; a second
// registration under the same key replaces the first; one registered on
// a closed connection runs at once.
func TestConnOnClose(t *testing.T) {
	var first, second, other atomic.Int32
	var info atomic.Pointer[ConnInfo]
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		info.Store(req.Conn)
		req.Conn.OnClose("k", func() { first.Add(1) })
		req.Conn.OnClose("k", func() { second.Add(1) })
		req.Conn.OnClose("other", func() { other.Add(1) })
		return Reply{}, false
	}}
	s := startServer(t, Config{}, h)
	c := dial(t, s)
	send(t, c, frame(1, nil, kmsg.NewPtrApiVersionsRequest()))
	mustReadFrame(t, c)
	if second.Load() != 0 || other.Load() != 0 {
		t.Fatal("callbacks ran while the connection is open")
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for (second.Load() == 0 || other.Load() == 0) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if first.Load() != 0 || second.Load() != 1 || other.Load() != 1 {
		t.Fatalf("after close: replaced %d, replacing %d, other %d; want 0, 1, 1", first.Load(), second.Load(), other.Load())
	}
	var late atomic.Int32
	info.Load().OnClose("late", func() { late.Add(1) })
	if late.Load() != 1 {
		t.Fatal("a callback registered after the close did not run")
	}
	(&ConnInfo{}).OnClose("x", func() { t.Fatal("ran for a ConnInfo not made by a Server") })
}
