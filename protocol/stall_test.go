package protocol

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closedWithin fails unless the server closes c within d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open after %v", d)
		}
		return // EOF or reset: closed
	}
}

// TestSlowlorisCutAtReadTimeout: a client that sends a frame one byte at a
// time is closed once the request read timeout has passed, while another
// client is served meanwhile; the frame's memory is given back.
func TestSlowlorisCutAtReadTimeout(t *testing.T) {
	s := startServer(t, Config{RequestReadTimeout: 500 * time.Millisecond}, &fakeHandler{})
	slow := dial(t, s)
	frame := produceFrame(1, 300<<10)
	send(t, slow, frame[:smallFrame+4]) // past the small-frame line
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := smallFrame + 4; i < len(frame); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := slow.Write(frame[i : i+1]); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	apiVersionsRoundTrip(t, s)
	start := time.Now()
	closedWithin(t, slow, 10*time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("closed after %v", d)
	}
	waitFor(t, func() bool { return s.budget.InUse() == 0 })
}

// TestSmallFramesNeverWait: with the whole budget held by a frame in the
// handler and another waiting for room, small requests from other
// connections (ApiVersions, small produce) are still read and served.
func TestSmallFramesNeverWait(t *testing.T) {
	budget := NewBudget(1 << 20)
	release := make(chan struct{})
	var smallProduce atomic.Int32
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		if req.Key != 0 {
			return Reply{}, false
		}
		if req.Size <= smallFrame {
			smallProduce.Add(1)
			return Reply{}, false
		}
		<-release
		return Reply{}, false
	}}
	s := startServer(t, Config{Budget: budget}, h)
	big := dial(t, s)
	send(t, big, produceFrame(1, 3<<20))
	waitFor(t, func() bool { return budget.InUse() >= 3<<20 })
	waiting := dial(t, s)
	send(t, waiting, produceFrame(2, 512<<10))
	waitFor(t, func() bool { return budget.nwait.Load() == 1 })
	for i := range 20 {
		apiVersionsRoundTrip(t, s)
		small := dial(t, s)
		send(t, small, produceFrame(int32(10+i), 16<<10))
		mustReadFrame(t, small)
	}
	if n := smallProduce.Load(); n != 20 {
		t.Fatalf("%d of 20 small produce requests served", n)
	}
	close(release)
	mustReadFrame(t, big)
	mustReadFrame(t, waiting)
}

// TestBudgetFairBetweenOwners: the owner holding less is served first.
func TestBudgetFairBetweenOwners(t *testing.T) {
	b := NewBudget(100)
	ctx := context.Background()
	hog := b.newHold("hog")
	if _, _, err := hog.acquire(ctx, nil, 50, 50, false); err != nil {
		t.Fatal(err)
	}
	hog.finish()
	hog2 := b.newHold("hog")
	if _, _, err := hog2.acquire(ctx, nil, 20, 20, false); err != nil {
		t.Fatal(err)
	}
	hog2.finish()
	other := b.newHold("other")
	if _, _, err := other.acquire(ctx, nil, 10, 10, false); err != nil {
		t.Fatal(err)
	}
	other.finish()
	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	ask := func(owner string) {
		defer wg.Done()
		h := b.newHold(owner)
		if _, _, err := h.acquire(ctx, nil, 40, 40, false); err != nil {
			t.Error(err)
		}
		mu.Lock()
		order = append(order, owner)
		mu.Unlock()
		h.finish()
	}
	wg.Add(1)
	go ask("hog") // asks first
	waitFor(t, func() bool { return b.nwait.Load() == 1 })
	wg.Add(1)
	go ask("newcomer")
	waitFor(t, func() bool { return b.nwait.Load() == 2 })
	other.release(nil) // 30 free: not enough for 40
	hog2.release(nil)  // 50 free: the newcomer (holding nothing) before the hog (holding 50)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 1 })
	hog.release(nil)
	wg.Wait()
	if order[0] != "newcomer" {
		t.Fatalf("served in order %v: the owner holding 50 went first", order)
	}
}

// TestHalfReadFramesDoNotDeadlock: with a small budget, many connections
// whose frames arrive in pieces (so they grow as they arrive) all fill
// the budget with half-read frames; the first waiter is let past the
// limit after a while, so every frame completes. Memory charged stays
// within the limit plus one frame.
func TestHalfReadFramesDoNotDeadlock(t *testing.T) {
	budget := NewBudget(2 << 20)
	var served atomic.Int32
	h := &fakeHandler{hook: func(_ context.Context, req *Request) (Reply, bool) {
		if req.Key == 0 {
			served.Add(1)
		}
		return Reply{}, false
	}}
	s := startServer(t, Config{Budget: budget}, h)
	const n, size = 8, 1200 << 10
	conns := make([]net.Conn, n)
	frames := make([][]byte, n)
	for i := range conns {
		conns[i] = dial(t, s)
		frames[i] = produceFrame(int32(i), size)
		send(t, conns[i], frames[i][:400<<10])
	}
	var peak atomic.Int64
	stopPeak := make(chan struct{})
	peakDone := make(chan struct{})
	go func() {
		defer close(peakDone)
		for {
			if u := budget.InUse(); u > peak.Load() {
				peak.Store(u)
			}
			select {
			case <-stopPeak:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rest := frames[i][400<<10:]
			for len(rest) > 0 {
				k := min(len(rest), 100<<10)
				if _, err := c.Write(rest[:k]); err != nil {
					return
				}
				rest = rest[k:]
			}
		}()
	}
	for _, c := range conns {
		mustReadFrame(t, c)
	}
	wg.Wait()
	close(stopPeak)
	<-peakDone
	if served.Load() != n {
		t.Fatalf("%d of %d frames served", served.Load(), n)
	}
	if p := peak.Load(); p > budget.Limit()+int64(bufCap(size))+smallFrame*n {
		t.Fatalf("peak %d bytes charged, limit %d", p, budget.Limit())
	}
	t.Logf("peak %d KiB charged of a %d KiB budget; overdrawn %d times", peak.Load()>>10, budget.Limit()>>10, budget.Overdrawn())
}

// TestStalledWholeFrameEvicted: frames that hold a whole buffer (most of
// them had arrived) and then stall, one of them let past the limit, are
// closed once a third connection has waited stallEvictAfter for the
// memory, and the third is served.
func TestStalledWholeFrameEvicted(t *testing.T) {
	budget := NewBudget(4 << 20)
	s := startServer(t, Config{Budget: budget}, &fakeHandler{})
	a, b := dial(t, s), dial(t, s)
	// 3000 of 3072 KiB: a frame read in growth mode doubles its buffer
	// until most of it is in, and the last doubling can end anywhere up
	// to 2944 KiB, so only past that is a whole buffer certain.
	send(t, a, produceFrame(1, 3<<20)[:3000<<10])
	waitFor(t, func() bool { return budget.InUse() >= 3<<20 })
	// a's stall must begin well before b's: eviction takes the frames
	// stalled past the limit, and if b went first, c would overdraw in its
	// place and a (no one waiting any more) would rightly stay until the
	// read timeout. Under load a's last bytes can be read after b's.
	time.Sleep(time.Second)
	send(t, b, produceFrame(2, 3<<20)[:3000<<10])
	waitFor(t, func() bool { return budget.Overdrawn() == 1 })
	c := dial(t, s)
	send(t, c, produceFrame(3, 3<<20))
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("waiting connection not served: %v", err)
	}
	closedWithin(t, a, 5*time.Second)
	closedWithin(t, b, 5*time.Second)
	if n := budget.Evicted(); n != 2 {
		t.Fatalf("%d evictions, want 2", n)
	}
}
