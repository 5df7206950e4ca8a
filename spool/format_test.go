package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
)

var update = flag.Bool("update", false, "rewrite testdata golden files and fuzz seeds")

// goldenRecords is the content of the golden segments: sequences 100..106.
func goldenRecords() (raw []byte, recs []Record) {
	seq := int64(100)
	for i, sp := range []int{1, 3, 1, 2} {
		data := fmt.Appendf(nil, "golden record %d: the quick brown fox jumps over the lazy dog", i)
		if i == 2 {
			data = nil // empty records are legal
		}
		raw = appendFrame(raw, sp, data)
		recs = append(recs, Record{Seq: seq, Span: sp, Data: data})
		seq += int64(sp)
	}
	return raw, recs
}

var goldenFiles = []struct {
	name    string
	codec   Codec
	encrypt bool
}{
	{"segment-v1-none.golden", CodecNone, false},
	{"segment-v1-zstd.golden", CodecZstd, false},
	{"segment-v1-zstd-aesgcm.golden", CodecZstd, true},
}

// TestGolden pins the on-disk format: the committed segments must decode to
// the known records, and the uncompressed, unencrypted one (the only
// deterministic encoding: zstd output may change with the library, GCM
// nonces are random) must be reproduced byte for byte.
func TestGolden(t *testing.T) {
	raw, want := goldenRecords()
	for _, g := range goldenFiles {
		var c Cipher
		if g.encrypt {
			c = testCipher(t)
		}
		path := filepath.Join("testdata", g.name)
		if *update {
			enc, err := newSegEncoder(g.codec, c)
			if err != nil {
				t.Fatal(err)
			}
			b, err := enc.encode(nil, 100, 106, len(want), raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			writeFuzzSeed(t, g.name, b)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := newSegDecoder(c, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		h, got, err := dec.decode(b)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if h.First != 100 || h.Last != 106 || h.Count != 4 || h.RawLen != uint32(len(raw)) || h.encrypted() != g.encrypt {
			t.Fatalf("%s: header %v", g.name, h)
		}
		checkRecords(t, got, want)
		if g.codec == CodecNone && !g.encrypt {
			enc, _ := newSegEncoder(CodecNone, nil)
			again, _ := enc.encode(nil, 100, 106, len(want), raw)
			if !bytes.Equal(again, b) {
				t.Fatalf("%s: encoding changed:\n got %x\nwant %x", g.name, again, b)
			}
			// The layout documented in doc.go, field by field.
			if string(b[0:4]) != "MKSP" || b[4] != 1 || b[5] != 0 || binary.BigEndian.Uint64(b[8:]) != 100 ||
				binary.BigEndian.Uint64(b[16:]) != 106 || binary.BigEndian.Uint32(b[24:]) != 4 ||
				binary.BigEndian.Uint32(b[28:]) != uint32(len(raw)) || binary.BigEndian.Uint32(b[32:]) != uint32(len(raw)) ||
				!bytes.Equal(b[headerLen:], raw) || b[headerLen] != 1 {
				t.Fatalf("%s: layout differs from doc.go: %x", g.name, b[:headerLen])
			}
		}
		if g.codec == CodecZstd && h.codec() != codecZstd {
			t.Fatalf("%s: not compressed", g.name)
		}
	}
}

// writeFuzzSeed stores b as a corpus file for FuzzDecodeSegment.
func writeFuzzSeed(t *testing.T, name string, b []byte) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeSegment")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodeSegment feeds arbitrary bytes to the segment decoder. It must
// never panic, every error must be classified (one of the package's
// sentinels), and whatever decodes must be self-consistent and re-encode to
// the same records.
func FuzzDecodeSegment(f *testing.F) {
	raw, recs := goldenRecords()
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		for _, c := range []Cipher{nil, testCipher(f)} {
			enc, _ := newSegEncoder(codec, c)
			b, _ := enc.encode(nil, 100, 106, len(recs), raw)
			f.Add(slices.Clone(b))
		}
	}
	f.Add([]byte("MKSP"))
	f.Add(make([]byte, headerLen))
	cipher := testCipher(f)
	dec, err := newSegDecoder(cipher, 1<<16)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, got, err := dec.decode(b)
		if err != nil {
			for _, known := range []error{ErrCorrupt, ErrUnsupported, ErrWrongKey, ErrTooBig, ErrNoCipher} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("unclassified error: %v", err)
		}
		if uint32(len(got)) != h.Count || len(got) == 0 || got[0].Seq != h.First || got[len(got)-1].Last() != h.Last {
			t.Fatalf("decoded %d records inconsistent with header %v", len(got), h)
		}
		var raw []byte
		for _, r := range got {
			raw = appendFrame(raw, r.Span, r.Data)
		}
		enc, _ := newSegEncoder(CodecNone, nil)
		again, err := enc.encode(nil, h.First, h.Last, len(got), raw)
		if err != nil {
			t.Fatal(err)
		}
		_, back, err := dec.decode(again)
		if err != nil {
			t.Fatalf("re-encoded segment does not decode: %v", err)
		}
		checkRecords(t, back, got)
	})
}

// TestDecompressionBounded: a segment whose zstd payload inflates far past
// what its header declares (a decompression bomb) is refused without
// allocating anywhere near the bomb's size, and a header declaring more than
// the configured maximum is refused before decompressing at all.
func TestDecompressionBounded(t *testing.T) {
	const bomb = 32 << 20
	z, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	payload := z.EncodeAll(make([]byte, bomb), nil)
	mk := func(rawLen uint32) []byte {
		h := segHeader{Version: formatVersion, Flags: codecZstd, First: 0, Last: 0, Count: 1, RawLen: rawLen, StoredLen: uint32(len(payload))}
		b := make([]byte, headerLen, headerLen+len(payload))
		b = append(b, payload...)
		h.PayloadCRC = crc32c(b[headerLen:])
		putHeader(b, h)
		return b
	}
	const limit = 1 << 20
	dec, err := newSegDecoder(nil, limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []uint32{100, limit} {
		b := mk(claim)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err := dec.decode(b)
		runtime.ReadMemStats(&after)
		mustErrIs(t, err, ErrCorrupt)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*limit {
			t.Fatalf("claim %d: decoding a %d-byte bomb allocated %d bytes", claim, bomb, alloc)
		}
	}
	_, _, err = dec.decode(mk(limit + 1))
	mustErrIs(t, err, ErrTooBig)
}
