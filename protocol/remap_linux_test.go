package protocol

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"
)

// mappedFrame charges and maps a produce frame buffer of n bytes for a new
// hold, as readFrame does when no cached buffer fits, and fills it with fill.
func mappedFrame(t *testing.T, b *Budget, n int64, fill byte) (*hold, []byte) {
	t.Helper()
	h := b.newHold(new(int))
	h.mapOK = true
	buf, g, err := h.acquire(context.Background(), nil, n, n, true)
	if err != nil || buf != nil || g != n {
		t.Fatalf("acquire %d: buf %d bytes, granted %d, %v; want a fresh charge", n, cap(buf), g, err)
	}
	m, ok := mapFrame(int(n))
	if !ok {
		t.Fatal("mapFrame failed")
	}
	h.addMapped(m)
	m = m[:n]
	for i := range m {
		m[i] = fill
	}
	h.finish()
	return h, m
}

// TestBudgetGrowsCachedMappedBuffer: a produce frame larger than every
// cached buffer is handed the largest cached mapped one grown to its size,
// with its pages (the bytes the last frame left are still there) and
// exactly its size charged; frames that may not be mapped are not.
func TestBudgetGrowsCachedMappedBuffer(t *testing.T) {
	b := NewBudget(100 << 20)
	h, m := mappedFrame(t, b, 20<<20, 0xab)
	h.release(m)
	if got := b.InUse(); got != 20<<20 {
		t.Fatalf("after release: %d charged, want the 20 MiB cached buffer", got)
	}

	other := b.newHold(new(int)) // not a Produce frame: never a mapped buffer
	if buf, _, _ := other.acquire(context.Background(), nil, 30<<20, 30<<20, true); buf != nil {
		t.Fatal("a frame that may not be mapped got the cached mapped buffer")
	}
	other.release(nil)

	h2 := b.newHold(new(int))
	h2.mapOK = true
	buf, g, err := h2.acquire(context.Background(), nil, 30<<20, 30<<20, true)
	if err != nil || g != 30<<20 || cap(buf) != 30<<20 {
		t.Fatalf("acquire 30 MiB: cap %d, granted %d, %v; want the cached buffer grown to 30 MiB", cap(buf), g, err)
	}
	if got := b.InUse(); got != 30<<20 {
		t.Fatalf("grown: %d charged, want 30 MiB", got)
	}
	buf = buf[:30<<20]
	if buf[0] != 0xab || buf[20<<20-1] != 0xab || buf[20<<20] != 0 {
		t.Fatalf("grown buffer: bytes %x %x %x; want the old pages then zeroes", buf[0], buf[20<<20-1], buf[20<<20])
	}
	h2.finish()
	h2.release(buf)
	if got := b.InUse(); got != 30<<20 {
		t.Fatalf("after release: %d charged, want the 30 MiB cached buffer", got)
	}
	b.mu.Lock()
	n := len(b.cached)
	b.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d cached buffers, want 1", n)
	}
}

// TestBudgetGrowDropsOtherCached: growing the cached mapped buffer past
// the limit first drops the other cached buffers, wherever they stand in
// the cache; when even that does not make room (a frame larger than the
// whole budget), the frame is charged afresh as before, alone.
func TestBudgetGrowDropsOtherCached(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cacheBig  bool  // cache the 20 MiB buffer before the 10 MiB one
		want      int64 // the frame's size
		grown     bool  // the 20 MiB buffer is handed over grown
		charged   int64 // charged while the frame holds its buffer
		remaining int   // cached buffers left meanwhile
	}{
		{"other cached after it", true, 35 << 20, true, 35 << 20, 0},
		{"other cached before it", false, 35 << 20, true, 35 << 20, 0},
		{"larger than the budget", true, 50 << 20, false, 50 << 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(40 << 20)
			sizes, fills := []int64{20 << 20, 10 << 20}, []byte{1, 2}
			if !tc.cacheBig {
				sizes, fills = []int64{10 << 20, 20 << 20}, []byte{2, 1}
			}
			h1, m1 := mappedFrame(t, b, sizes[0], fills[0])
			h2, m2 := mappedFrame(t, b, sizes[1], fills[1])
			h1.release(m1)
			h2.release(m2)
			h := b.newHold(new(int))
			h.mapOK = true
			buf, g, err := h.acquire(context.Background(), nil, tc.want, tc.want, true)
			if err != nil || g != tc.want {
				t.Fatalf("acquire %d: granted %d, %v", tc.want, g, err)
			}
			if tc.grown && (cap(buf) != int(tc.want) || buf[:1][0] != 1) {
				t.Fatalf("cap %d; want the 20 MiB buffer grown to %d", cap(buf), tc.want)
			}
			if !tc.grown && buf != nil {
				t.Fatalf("handed a %d-byte buffer; want a fresh charge", cap(buf))
			}
			b.mu.Lock()
			n := len(b.cached)
			b.mu.Unlock()
			if got := b.InUse(); got != tc.charged || n != tc.remaining {
				t.Fatalf("%d charged and %d cached; want %d and %d", got, n, tc.charged, tc.remaining)
			}
			h.release(nil)
			if got := b.InUse(); got != 0 {
				t.Fatalf("after release: %d charged, want 0", got)
			}
		})
	}
}

// TestGrowingProduceFrameIntact: a large produce frame whose body arrives
// slowly on a new connection is read in growth mode, its mapped buffer
// grown in place step by step; the handler sees every byte as sent.
func TestGrowingProduceFrameIntact(t *testing.T) {
	sendGrowingProduce(t)
}

// TestGrowingProduceFrameRemapFails: when a mapping cannot grow (mremap
// refused), each step copies the frame into a new buffer instead, and the
// handler still sees every byte as sent.
func TestGrowingProduceFrameRemapFails(t *testing.T) {
	var refused atomic.Int32
	remapFrame = func([]byte, int) ([]byte, bool) { refused.Add(1); return nil, false }
	t.Cleanup(func() { remapFrame = mremapFrame })
	sendGrowingProduce(t)
	if refused.Load() == 0 {
		t.Fatal("the frame never tried to grow its mapping: the fallback was not exercised")
	}
}

func sendGrowingProduce(t *testing.T) {
	t.Helper()
	const size = 24 << 20
	records := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range records {
		records[i] = byte(rng.Uint32())
	}
	got := make(chan bool, 1)
	s := startServer(t, Config{}, HandlerFunc(func(_ context.Context, req *Request) Reply {
		pr := req.Body.(*kmsg.ProduceRequest)
		got <- bytes.Equal(pr.Topics[0].Partitions[0].Records, records)
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = req.Version
		return Reply{Response: resp}
	}))
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 9, 1
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	f := frame(1, nil, req)
	c := dial(t, s)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	// A little at first, so the frame starts small and grows.
	send(t, c, f[:100<<10])
	time.Sleep(50 * time.Millisecond)
	for rest := f[100<<10:]; len(rest) > 0; {
		k := min(len(rest), 1<<20)
		send(t, c, rest[:k])
		rest = rest[k:]
	}
	mustReadFrame(t, c)
	if !<-got {
		t.Fatal("the handler saw different record bytes than were sent")
	}
}

// BenchmarkFramePages is what a large frame's buffer costs by where its
// pages come from, per GiB of buffer filled in 64 KiB reads' worth of
// copies: a new mapping faulted in page by page (a new connection's first
// large frame, read in growth mode), the same prefaulted with
// MADV_POPULATE_WRITE, and a cached buffer reused (every later frame of a
// prompt connection).
//
//	go test ./protocol -run XXX -bench FramePages -benchtime 20x
func BenchmarkFramePages(b *testing.B) {
	const n = 32 << 20
	chunk := make([]byte, 64<<10)
	fill := func(m []byte) {
		for off := 0; off < n; off += len(chunk) {
			copy(m[off:], chunk)
		}
	}
	for _, mode := range []string{"fresh", "populated", "reused"} {
		b.Run(mode, func(b *testing.B) {
			var kept []byte
			if mode == "reused" {
				var ok bool
				if kept, ok = mapFrame(n); !ok {
					b.Fatal("mapFrame failed")
				}
				defer unmapFrame(kept)
				fill(kept)
			}
			b.SetBytes(n)
			cpu0 := processCPU()
			for b.Loop() {
				m := kept
				if m == nil {
					var ok bool
					if m, ok = mapFrame(n); !ok {
						b.Fatal("mapFrame failed")
					}
				}
				if mode == "populated" {
					if err := unix.Madvise(m, unix.MADV_POPULATE_WRITE); err != nil {
						b.Skip("MADV_POPULATE_WRITE:", err)
					}
				}
				fill(m)
				if kept == nil {
					unmapFrame(m)
				}
			}
			b.ReportMetric((processCPU()-cpu0).Seconds()/(float64(b.N)*n/(1<<30)), "CPU-s/GiB")
		})
	}
}
