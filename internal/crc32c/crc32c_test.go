package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// The combined checksum of any range equals the direct one: ranges inside
// one chunk, across boundaries, exactly on them, over the whole frame, and
// reaching past what has been summed so far.
func TestSumsMatchDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, Chunk - 1, Chunk, Chunk + 1, 3*Chunk + 17, 7 * Chunk} {
		frame := make([]byte, size)
		for i := range frame {
			frame[i] = byte(rng.Uint32())
		}
		var s Sums
		s.Reset(frame)
		for have := 0; ; {
			have = min(size, have+rng.IntN(2*Chunk)+1)
			s.Add(have)
			check := func(start, end int) {
				t.Helper()
				got, ok := s.Checksum(frame[start:end])
				if want := crc32.Checksum(frame[start:end], crc32.MakeTable(crc32.Castagnoli)); !ok || got != want {
					t.Fatalf("size %d have %d [%d:%d]: %08x %v, want %08x", size, have, start, end, got, ok, want)
				}
			}
			for range 200 {
				start := rng.IntN(have)
				check(start, start+1+rng.IntN(size-start))
			}
			for _, b := range []int{0, Chunk, 2 * Chunk} {
				if b < size {
					check(b, size)
					check(0, min(size, b+Chunk))
				}
			}
			if have == size {
				break
			}
		}
	}
}

// Slices that are not inside the frame are refused, not misread.
func TestSumsRefuseForeignSlices(t *testing.T) {
	frame := make([]byte, 4*Chunk)
	var s Sums
	s.Reset(frame[Chunk : 3*Chunk])
	s.Add(2 * Chunk)
	for name, p := range map[string][]byte{
		"before":  frame[:10],
		"after":   frame[3*Chunk : 3*Chunk+10],
		"overrun": frame[2*Chunk : 3*Chunk+1],
		"other":   make([]byte, 10),
		"empty":   frame[Chunk:Chunk],
	} {
		if _, ok := s.Checksum(p); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	var nilSums *Sums
	if _, ok := nilSums.Checksum(frame); ok {
		t.Error("nil Sums answered")
	}
}

// The table-driven shift is R(c, Chunk zero bytes).
func TestShiftChunk(t *testing.T) {
	shiftOnce.Do(initShift)
	zeros := make([]byte, Chunk)
	for _, c := range []uint32{0, 1, 0x80000000, 0xffffffff, 0x12345678, 0xdeadbeef} {
		if got, want := shiftChunk(c), raw(c, zeros); got != want {
			t.Fatalf("shift(%08x) = %08x, want %08x", c, got, want)
		}
	}
}

func FuzzSums(f *testing.F) {
	f.Add([]byte("a"), uint32(0), uint32(1), uint32(3))
	f.Add(make([]byte, 100), uint32(5), uint32(50), uint32(7))
	f.Fuzz(func(t *testing.T, seed []byte, start, n, scale uint32) {
		if len(seed) == 0 {
			return
		}
		// Stretch the seed over a few chunks so ranges cross boundaries.
		size := len(seed) * int(scale%512+1)
		frame := make([]byte, size)
		for i := range frame {
			frame[i] = seed[i%len(seed)] ^ byte(i/len(seed))
		}
		var s Sums
		s.Reset(frame)
		s.Add(size)
		a := int(start) % size
		b := a + int(n)%(size-a) + 1
		got, ok := s.Checksum(frame[a:b])
		if want := Checksum(frame[a:b]); !ok || got != want {
			t.Fatalf("[%d:%d] of %d: %08x %v, want %08x", a, b, size, got, ok, want)
		}
	})
}

// BenchmarkChecksumAfterRead compares checking 1 MiB batches of a 6 MiB
// frame directly, after the whole frame was written (as a socket read
// writes it), with combining sums taken while each chunk was fresh.
func BenchmarkChecksumAfterRead(b *testing.B) {
	const frameSize, batch = 6 << 20, 1 << 20
	frames := make([][]byte, 8) // cycle through 48 MiB so frames are cold
	for i := range frames {
		frames[i] = make([]byte, frameSize)
	}
	fill := func(f []byte, s *Sums) {
		for off := 0; off < len(f); off += 256 << 10 {
			end := min(len(f), off+256<<10)
			for i := off; i < end; i += 64 {
				f[i]++
			}
			if s != nil {
				s.Add(end)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(frameSize)
		for i := 0; b.Loop(); i++ {
			f := frames[i%len(frames)]
			fill(f, nil)
			for off := 0; off < frameSize; off += batch {
				Checksum(f[off+21 : off+batch])
			}
		}
	})
	b.Run("sums", func(b *testing.B) {
		b.SetBytes(frameSize)
		var s Sums
		for i := 0; b.Loop(); i++ {
			f := frames[i%len(frames)]
			s.Reset(f)
			fill(f, &s)
			for off := 0; off < frameSize; off += batch {
				s.Checksum(f[off+21 : off+batch])
			}
		}
	})
}
