package protocol

import (
	"context"
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceFrame is a Produce v9 frame of about n bytes.
func produceFrame(corr int32, n int) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 9, 1
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = make([]byte, n)
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return frame(corr, nil, req)
}

// TestLyingLengthPrefix: eight connections each claim a 100 MiB frame (the
// cap, so it is not refused) and send 10 bytes of it; the server allocates
// what arrived, not what was claimed, takes nothing from the Budget, and
// a ninth connection is still served.
func TestLyingLengthPrefix(t *testing.T) {
	s := startServer(t, Config{}, &fakeHandler{})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 8 {
		c := dial(t, s)
		b := binary.BigEndian.AppendUint32(nil, uint32(DefaultMaxRequestBytes))
		send(t, c, append(b, make([]byte, 10)...))
	}
	time.Sleep(200 * time.Millisecond) // let the readers block on the rest
	apiVersionsRoundTrip(t, s)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Fatalf("8 lying prefixes cost %d bytes of allocation", d)
	}
	if u := s.budget.InUse(); u != 0 {
		t.Fatalf("lying prefixes hold %d bytes of budget", u)
	}
}

// TestBudgetBoundsFramesInFlight: with a 1 MiB budget and a handler that
// holds each request until released, frames of 600 KiB from two
// connections are admitted one at a time (the second waits, it is not
// read into memory past its first chunk); a 3 MiB frame, larger than the
// whole budget, is admitted alone once nothing else holds any.
func TestBudgetBoundsFramesInFlight(t *testing.T) {
	budget := NewBudget(1 << 20)
	release := make(chan struct{})
	var inHandler, peak atomic.Int64
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		if req.Key != 0 {
			return Reply{}, false
		}
		n := inHandler.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if u := budget.InUse(); u > budget.Limit() && n > 1 {
			t.Errorf("budget %d in use with %d requests", u, n)
		}
		<-release
		inHandler.Add(-1)
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		return Reply{Response: resp}, true
	}}
	s := startServer(t, Config{Budget: budget}, h)
	a, b := dial(t, s), dial(t, s)
	send(t, a, produceFrame(1, 600<<10))
	send(t, b, produceFrame(2, 600<<10))
	waitFor(t, func() bool { return inHandler.Load() == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := inHandler.Load(); n != 1 {
		t.Fatalf("%d requests admitted with room for one", n)
	}
	release <- struct{}{}
	mustReadFrame(t, a)
	waitFor(t, func() bool { return inHandler.Load() == 1 })
	release <- struct{}{}
	mustReadFrame(t, b)

	big := dial(t, s)
	send(t, big, produceFrame(3, 3<<20))
	waitFor(t, func() bool { return inHandler.Load() == 1 })
	if u := budget.InUse(); u < 3<<20 {
		t.Fatalf("a 3 MiB frame admitted with %d bytes charged", u)
	}
	release <- struct{}{}
	mustReadFrame(t, big)
	if peak.Load() != 1 {
		t.Fatalf("%d requests in the handler at once", peak.Load())
	}
	waitFor(t, func() bool { return budget.InUse() <= budget.Limit() })
}

// TestBudgetFIFO: a waiting large frame is not overtaken by small ones
// that would fit, and a waiter that gives up leaves the queue.
func TestBudgetFIFO(t *testing.T) {
	b := NewBudget(100)
	ctx := context.Background()
	first := b.newHold("a")
	if _, n, err := first.acquire(ctx, nil, 60, 60, false); err != nil || n != 60 {
		t.Fatal(n, err)
	}
	first.finish() // being handled: waiters wait for it, no overdraft
	bigDone := make(chan struct{})
	go func() {
		if _, _, err := b.newHold("b").acquire(ctx, nil, 80, 80, false); err != nil {
			t.Error(err)
		}
		close(bigDone)
	}()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.waiters) == 1 })
	smallDone := make(chan struct{})
	go func() {
		if _, _, err := b.newHold("c").acquire(ctx, nil, 10, 10, false); err != nil {
			t.Error(err)
		}
		close(smallDone)
	}()
	select {
	case <-smallDone:
		t.Fatal("a small frame overtook a waiting large one")
	case <-time.After(3 * overdraftAfter):
	}
	first.release(nil)
	<-bigDone
	<-smallDone
	if u := b.InUse(); u != 90 {
		t.Fatalf("in use %d, want 90", u)
	}
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error)
	go func() { _, _, err := b.newHold("d").acquire(cctx, nil, 50, 50, false); gaveUp <- err }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.waiters) == 1 })
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("admitted after cancel")
	}
	if _, _, err := b.newHold("e").acquire(ctx, nil, 10, 10, false); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetReleasedWhenClientsDisconnect: a client that is admitted and
// then hangs up mid-frame gives its budget back, and one that hangs up
// while waiting for budget does not keep it: nobody reads its socket while
// it waits, so it is admitted in its turn, finds the connection gone and
// releases at once; a later request of the same size is still served.
func TestBudgetReleasedWhenClientsDisconnect(t *testing.T) {
	budget := NewBudget(1 << 20)
	release := make(chan struct{})
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		if req.Key != 0 {
			return Reply{}, false
		}
		<-release
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		return Reply{Response: resp}, true
	}}
	s := startServer(t, Config{Budget: budget}, h)

	// Admitted, then gone: 200 KiB of a 900 KiB frame, then close.
	half := dial(t, s)
	send(t, half, produceFrame(1, 900<<10)[:200<<10])
	waitFor(t, func() bool { return budget.InUse() > 0 })
	// Charged as it arrives: about twice what was sent, not 900 KiB.
	if u := budget.InUse(); u > 2*(200<<10)+smallFrame {
		t.Fatalf("200 KiB of a 900 KiB frame hold %d bytes", u)
	}
	half.Close()
	waitFor(t, func() bool { return budget.InUse() == 0 })

	// A holds the budget in the handler; B waits for it, then hangs up.
	a := dial(t, s)
	send(t, a, produceFrame(2, 900<<10))
	waitFor(t, func() bool { return budget.InUse() >= 900<<10 })
	b := dial(t, s)
	send(t, b, produceFrame(3, 900<<10)[:100<<10])
	waitFor(t, func() bool { budget.mu.Lock(); defer budget.mu.Unlock(); return len(budget.waiters) == 1 })
	b.Close()
	release <- struct{}{}
	mustReadFrame(t, a)

	// The room is back for a newcomer.
	c := dial(t, s)
	send(t, c, produceFrame(4, 900<<10))
	release <- struct{}{}
	mustReadFrame(t, c)
	waitFor(t, func() bool { return budget.InUse() <= budget.Limit() })
}
