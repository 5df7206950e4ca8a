package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Decode runs our frame decoder over body and returns what it decoded.
func lz4Decode(body []byte) ([]byte, error) {
	var f lz4Frame
	if err := f.reset(body); err != nil {
		return nil, err
	}
	var out []byte
	for {
		c, err := f.next()
		out = append(out, c...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func pierrecDecode(body []byte) ([]byte, error) {
	return io.ReadAll(io.LimitReader(lz4.NewReader(bytes.NewReader(body)), 64<<20))
}

func pierrecEncode(t testing.TB, raw []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestXXH32(t *testing.T) {
	if got := xxh32Sum(nil); got != 0x02CC5D05 {
		t.Fatalf("xxh32(empty) = %#x", got)
	}
	// Streaming in uneven pieces gives the one-shot sum.
	r := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for n := range len(data) {
		want := xxh32Sum(data[:n])
		var x xxh32
		x.reset()
		for p := data[:n]; len(p) > 0; {
			k := min(len(p), 1+r.IntN(37))
			x.update(p[:k])
			p = p[k:]
		}
		if x.sum() != want {
			t.Fatalf("n=%d: streamed %#x, one-shot %#x", n, x.sum(), want)
		}
	}
}

// Every frame pierrec's writer makes (kgo's and our encoder) decodes to the
// same bytes, with its checksums checked.
func TestLZ4FrameMatchesPierrec(t *testing.T) {
	raw := rawRecords(t, 20)
	r := rand.New(rand.NewPCG(7, 8))
	noise := make([]byte, 300_001)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for _, data := range [][]byte{nil, []byte("x"), raw, noise, append(append([]byte(nil), noise[:70_000]...), raw...)} {
		for _, bs := range []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb, lz4.Block1Mb, lz4.Block4Mb} {
			for _, sum := range []bool{false, true} {
				for _, bsum := range []bool{false, true} {
					opts := []lz4.Option{lz4.BlockSizeOption(bs), lz4.ChecksumOption(sum), lz4.BlockChecksumOption(bsum)}
					if sum {
						opts = append(opts, lz4.SizeOption(uint64(len(data))))
					}
					body := pierrecEncode(t, data, opts...)
					got, err := lz4Decode(body)
					if err != nil || !bytes.Equal(got, data) {
						t.Fatalf("%d bytes, block %v, sum %v, block sum %v: %v (%d bytes out)", len(data), bs, sum, bsum, err, len(got))
					}
				}
			}
		}
	}
}

// lz4Frame assembles a frame from blocks (high bit set: stored).
func lz4FrameOf(flg, bd byte, size int64, blocks [][]byte, stored []bool, content []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	b = append(b, flg, bd)
	if flg&0x08 != 0 {
		b = binary.LittleEndian.AppendUint64(b, uint64(size))
	}
	b = append(b, byte(xxh32Sum(b[4:])>>8))
	for i, blk := range blocks {
		v := uint32(len(blk))
		if stored[i] {
			v |= 1 << 31
		}
		b = binary.LittleEndian.AppendUint32(b, v)
		b = append(b, blk...)
		if flg&0x10 != 0 {
			b = binary.LittleEndian.AppendUint32(b, xxh32Sum(blk))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, 0)
	if flg&0x04 != 0 {
		b = binary.LittleEndian.AppendUint32(b, xxh32Sum(content))
	}
	return b
}

// A linked frame (LZ4F's default mode) is read block by block, as Kafka's
// Java decoder reads it: blocks that stand alone decode; a block that
// copies from the one before is corrupt, since Java consumers could not
// read it.
func TestLZ4FrameLinkedBlocks(t *testing.T) {
	// Block 1: literals only. Block 2: a match 8 back (into block 1),
	// 8 long, then 5 literals.
	b1 := append([]byte{0x80}, "abcdefgh"...)
	b2 := append([]byte{0x04, 8, 0, 0x50}, "12345"...)
	want := []byte("abcdefghabcdefgh12345")
	for _, flg := range []byte{0x40, 0x60} {
		body := lz4FrameOf(flg|0x04|0x10, 0x40, 0, [][]byte{b1, b2}, []bool{false, false}, want)
		if _, err := lz4Decode(body); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("FLG %#x, block reaching back: %v", flg, err)
		}
		b3 := append([]byte{0x50}, "12345"...)
		want := []byte("abcdefgh12345")
		body = lz4FrameOf(flg|0x04, 0x40, 0, [][]byte{b1, b3}, []bool{false, false}, want)
		if got, err := lz4Decode(body); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("FLG %#x, blocks on their own: %q, %v", flg, got, err)
		}
	}
}

func TestLZ4FrameRefusesBadFrames(t *testing.T) {
	content := []byte("hello, hello, hello, records")
	good := lz4FrameOf(0x60|0x10|0x08|0x04, 0x40, int64(len(content)), [][]byte{content}, []bool{true}, content)
	if got, err := lz4Decode(good); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("good frame: %q, %v", got, err)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	hdr := 4 + 2 + 8 + 1 // magic, FLG, BD, content size, HC
	cases := map[string][]byte{
		"bad magic":            mod(func(b []byte) []byte { b[0]++; return b }),
		"bad header checksum":  mod(func(b []byte) []byte { b[hdr-1]++; return b }),
		"bad block checksum":   mod(func(b []byte) []byte { b[hdr+4+len(content)]++; return b }),
		"bad content checksum": mod(func(b []byte) []byte { b[len(b)-1]++; return b }),
		"bad content":          mod(func(b []byte) []byte { b[hdr+4]++; return b }),
		"truncated":            good[:len(good)-3],
		"no end mark":          good[:hdr+4+len(content)+4],
		"trailing bytes":       append(append([]byte(nil), good...), 0),
		"two frames":           append(append([]byte(nil), good...), good...),
		"size too small":       lz4FrameOf(0x60|0x08, 0x40, 3, [][]byte{content}, []bool{true}, content),
		"size too large":       lz4FrameOf(0x60|0x08, 0x40, 100, [][]byte{content}, []bool{true}, content),
		"dictionary":           lz4FrameOf(0x61, 0x40, 0, nil, nil, nil),
		"block size code 3":    lz4FrameOf(0x60, 0x30, 0, nil, nil, nil),
		"reserved BD bit":      lz4FrameOf(0x60, 0x41, 0, nil, nil, nil),
		"version 0":            lz4FrameOf(0x20, 0x40, 0, nil, nil, nil),
		"header only":          good[:hdr],
		// A block larger than the frame's 64 KiB maximum, with the bytes
		// behind it.
		"block over maximum": lz4FrameOf(0x60, 0x40, 0, [][]byte{make([]byte, 64<<10+1)}, []bool{true}, nil),
	}
	// The lying size prefix: a block claiming 2 GiB with 10 bytes
	// behind it, in a frame of 4 MiB blocks.
	lie := lz4FrameOf(0x60, 0x70, 0, nil, nil, nil)
	lie = binary.LittleEndian.AppendUint32(lie[:len(lie)-4], 0x7fffffff)
	cases["lying block size"] = append(lie, make([]byte, 10)...)
	for name, body := range cases {
		if _, err := lz4Decode(body); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// A batch of lz4 blocks of zeros inflating to 60 MiB scans within the
// slot's block buffer; past the limit it is ErrTooLarge; a lying block
// size allocates nothing.
func TestScanLZ4BombIsBounded(t *testing.T) {
	const n = 60 << 20
	body := []byte{0, 0, 0, 1} // attributes, ts delta 0, offset delta 0, key null (-1)
	body = binary.AppendVarint(body, n)
	rec := binary.AppendVarint(nil, int64(len(body))+n+1)
	rec = append(rec, body...)
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write(rec)
	zeros := make([]byte, 1<<20)
	for range n >> 20 {
		w.Write(zeros)
	}
	w.Write([]byte{0}) // no headers
	w.Close()
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes", buf.Len())
	}
	b := rebatch(t, CodecLZ4, 1, buf.Bytes())
	p := NewScanPool(1)
	var ms0, ms1 runtime.MemStats
	// First, on the fresh slot, a block claiming 2 GiB in a frame of
	// 4 MiB blocks, with 10 bytes behind it.
	lie := lz4FrameOf(0x60, 0x70, 0, nil, nil, nil)
	lie = binary.LittleEndian.AppendUint32(lie[:len(lie)-4], 0x7fffffff)
	lie = append(lie, make([]byte, 10)...)
	lb := rebatch(t, CodecLZ4, 1, lie)
	runtime.ReadMemStats(&ms0)
	if _, err := scanAll(t, p, lb); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("lying size: %v", err)
	}
	runtime.ReadMemStats(&ms1)
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 64<<10 {
		t.Errorf("a lying block size allocated %d bytes", d)
	}
	runtime.ReadMemStats(&ms0)
	if _, err := scanAll(t, p, b); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms1)
	// The slot's block buffer (the frame's 4 MiB maximum) and little else.
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 5<<20 {
		t.Errorf("scanning a 60 MiB lz4 bomb allocated %d bytes", d)
	}
	h, _ := Validate(b)
	sc := p.Scan(h, b[BatchHeaderLen:], 1<<20)
	if err := sc.AllRecords(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("past limit: %v", err)
	}
	sc.Close()
}

// FuzzLZ4Frame: whatever our decoder accepts, pierrec's reader (kgo's
// consumer) reads to the same bytes; nothing panics.
func FuzzLZ4Frame(f *testing.F) {
	b, _ := AppendBatch(nil, BatchSpec{ProducerID: -1}, sampleRecords(3))
	raw := b[BatchHeaderLen:]
	f.Add(pierrecEncode(f, raw, lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true)))
	f.Add(pierrecEncode(f, raw, lz4.BlockSizeOption(lz4.Block4Mb), lz4.SizeOption(uint64(len(raw)))))
	f.Add(pierrecEncode(f, raw[:len(raw)/2], lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)))
	f.Add(lz4FrameOf(0x40|0x04|0x10, 0x40, 0, [][]byte{append([]byte{0x80}, "abcdefgh"...), append([]byte{0x04, 8, 0, 0x50}, "12345"...)}, []bool{false, false}, []byte("abcdefghabcdefgh12345")))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := lz4Decode(body)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		want, err := pierrecDecode(body)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("we decode %d bytes; pierrec %d, %v", len(got), len(want), err)
		}
	})
}
