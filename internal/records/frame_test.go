package records

import (
	"bytes"
	"errors"
	"testing"
)

// framedBodies returns, per codec, a real compressed body of records.
func framedBodies(t testing.TB) map[Codec][][]byte {
	t.Helper()
	raw := []byte{}
	for i := range sampleRecords(20) {
		raw = appendRecord(raw, &sampleRecords(20)[i], int32(i))
	}
	out := map[Codec][][]byte{}
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		body, err := Compress(c, raw)
		if err != nil {
			t.Fatal(err)
		}
		out[c] = append(out[c], body)
	}
	out[CodecSnappy] = append(out[CodecSnappy], XerialSnappy(raw, 64), XerialSnappy(raw, 32<<10))
	return out
}

func TestCheckFrameAcceptsRealStreams(t *testing.T) {
	for c, bodies := range framedBodies(t) {
		for _, b := range bodies {
			if err := CheckFrame(c, b); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		}
	}
	if err := CheckFrame(CodecNone, []byte("anything")); err != nil {
		t.Errorf("none: %v", err)
	}
}

func TestCheckFrameRejectsGarbage(t *testing.T) {
	garbage := bytes.Repeat([]byte{0xa5, 0x13, 0x77, 0x02}, 64)
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, b := range [][]byte{nil, {1}, garbage} {
			if err := CheckFrame(c, b); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %d garbage bytes: %v, want ErrCorrupt", c, len(b), err)
			}
		}
	}
	// One header byte wrong in an otherwise real stream.
	for c, bodies := range framedBodies(t) {
		b := append([]byte(nil), bodies[0]...)
		switch c {
		case CodecGzip:
			b[2] = 7 // compression method
		case CodecZstd:
			b[0] ^= 0xff // magic
		case CodecLZ4:
			b[4] = 0x00 // frame version 0
		case CodecSnappy:
			b = append([]byte{0x05, 0x01}, b...) // length 5, then a copy tag
		}
		if err := CheckFrame(c, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s with a bad header: %v", c, err)
		}
	}
	if err := CheckFrame(Codec(6), garbage); !errors.Is(err, ErrUnsupportedCompression) {
		t.Errorf("codec 6: %v", err)
	}
}

// FuzzCheckFrame: CheckFrame never panics, and it never rejects a body
// that Decompress turns into data: the passthrough check may only refuse
// what full validation would refuse too.
func FuzzCheckFrame(f *testing.F) {
	for c, bodies := range framedBodies(f) {
		for _, b := range bodies {
			f.Add(byte(c), b)
		}
	}
	f.Add(byte(CodecGzip), []byte{0x1f, 0x8b, 8, 0})
	f.Add(byte(CodecZstd), []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00})
	f.Add(byte(CodecLZ4), []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82})
	f.Add(byte(CodecSnappy), []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0})
	f.Fuzz(func(t *testing.T, codec byte, body []byte) {
		c := Codec(codec % 5)
		err := CheckFrame(c, body)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
		out, derr := Decompress(c, body, 1<<20)
		if derr == nil && len(out) > 0 && err != nil {
			t.Fatalf("%s: Decompress gave %d bytes but CheckFrame says %v", c, len(out), err)
		}
	})
}
