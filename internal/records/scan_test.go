package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

func scanAll(t testing.TB, p *ScanPool, b []byte) ([]RecordInfo, error) {
	t.Helper()
	h, err := Validate(b)
	if err != nil {
		return nil, err
	}
	sc := p.Scan(h, b[BatchHeaderLen:h.Size()], 64<<20)
	defer sc.Close()
	var out []RecordInfo
	for sc.Next() {
		out = append(out, *sc.Record())
	}
	return out, sc.Err()
}

func TestScanMatchesRecords(t *testing.T) {
	p := NewScanPool(2)
	for _, c := range allCodecs {
		recs := sampleRecords(200)
		recs[5].Value = bytes.Repeat([]byte("xyz"), 50000) // spans many scan buffers
		b := mustBatch(t, BatchSpec{Codec: c, FirstTimestamp: 1000, ProducerID: -1}, recs)
		got, err := scanAll(t, p, b)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if len(got) != len(recs) {
			t.Fatalf("%s: %d records", c, len(got))
		}
		for i, r := range got {
			w := recs[i]
			kl := int32(len(w.Key))
			if w.Key == nil {
				kl = -1
			}
			if r.OffsetDelta != int32(i) || r.TimestampDelta != w.TimestampDelta || r.KeyLen != kl ||
				r.ValueLen != int32(len(w.Value)) || r.Headers != int32(len(w.Headers)) {
				t.Fatalf("%s: record %d: %+v", c, i, r)
			}
		}
	}
}

// rebatch puts body (already compressed with c) into a batch of n records.
func rebatch(t testing.TB, c Codec, n int, body []byte) []byte {
	t.Helper()
	b := mustBatch(t, BatchSpec{Codec: CodecNone, ProducerID: -1}, sampleRecords(n))
	b = append(b[:BatchHeaderLen:BatchHeaderLen], body...)
	setCodecAndCRC(b, c)
	return b
}

func setCodecAndCRC(b []byte, c Codec) {
	b[offAttributes+1] = b[offAttributes+1]&^attrCompressionMask | byte(c)
	b[offLength], b[offLength+1], b[offLength+2], b[offLength+3] = byte((len(b)-12)>>24), byte((len(b)-12)>>16), byte((len(b)-12)>>8), byte(len(b)-12)
	crc := Checksum(b)
	b[offCRC], b[offCRC+1], b[offCRC+2], b[offCRC+3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
}

func rawRecords(t testing.TB, n int) []byte {
	t.Helper()
	recs := sampleRecords(n)
	recs[1].Value = bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB: far back-references
	b := mustBatch(t, BatchSpec{ProducerID: -1}, recs)
	return b[BatchHeaderLen:]
}

// The encodings real producers send: kgo's whole-batch s2.EncodeSnappy
// block (back-references across the batch), the Java client's xerial
// chunks, and kgo's zstd settings; and snappy blocks over snappyWhole,
// which stream, with near and far (s2) back-references.
func TestScanProducerEncodings(t *testing.T) {
	p := NewScanPool(1)
	raw := rawRecords(t, 20)
	big := bigRecords(t)
	if len(big) <= snappyWhole {
		t.Fatal("big records too small to stream")
	}
	for name, b := range map[string][]byte{
		"snappy-big":    rebatch(t, CodecSnappy, 3, snappyEncode(big)),
		"s2-snappy-big": rebatch(t, CodecSnappy, 3, s2.EncodeSnappy(nil, big)),
		"xerial-big":    rebatch(t, CodecSnappy, 3, XerialSnappy(big, 32<<10)),
	} {
		if _, err := scanAll(t, p, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// Cut short, the streaming path must fail too.
		body := b[BatchHeaderLen:]
		if _, err := scanAll(t, p, rebatch(t, CodecSnappy, 3, body[:len(body)-100])); err == nil {
			t.Errorf("%s truncated: accepted", name)
		}
	}
	var zb bytes.Buffer
	zw, _ := zstd.NewWriter(&zb, zstd.WithWindowSize(64<<10), zstd.WithEncoderConcurrency(1))
	zw.Write(raw)
	zw.Close()
	for name, b := range map[string][]byte{
		"s2-snappy": rebatch(t, CodecSnappy, 20, s2.EncodeSnappy(nil, raw)),
		"xerial":    rebatch(t, CodecSnappy, 20, XerialSnappy(raw, 32<<10)),
		"zstd-64k":  rebatch(t, CodecZstd, 20, zb.Bytes()),
	} {
		if _, err := scanAll(t, p, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestScanRefusesBrokenStreams(t *testing.T) {
	p := NewScanPool(1)
	raw := rawRecords(t, 20)
	for _, c := range allCodecs[1:] {
		body, err := Compress(c, raw)
		if err != nil {
			t.Fatal(err)
		}
		// Truncated: the CRC is recomputed, so only decoding can tell.
		for _, cut := range []int{1, 9, len(body) / 2} {
			b := rebatch(t, c, 20, body[:len(body)-cut])
			if _, err := scanAll(t, p, b); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidRecord) {
				t.Errorf("%s cut %d: %v", c, cut, err)
			}
		}
	}
	// The case: gzip with its deflate stream cut short.
	gz, _ := Compress(CodecGzip, raw)
	b := rebatch(t, CodecGzip, 20, gz[:len(gz)/2])
	if _, err := scanAll(t, p, b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated gzip: %v, want ErrCorrupt", err)
	}
	// A valid stream holding fewer records than the header claims.
	short, _ := Compress(CodecZstd, raw)
	b = rebatch(t, CodecZstd, 21, short)
	if _, err := scanAll(t, p, b); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("21 claimed, 20 present: %v", err)
	}
	// More bytes than the records.
	long, _ := Compress(CodecLZ4, append(append([]byte(nil), raw...), 0, 0))
	b = rebatch(t, CodecLZ4, 20, long)
	if _, err := scanAll(t, p, b); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("trailing bytes: %v", err)
	}
	// S2's repeat copy (offset 0) is not snappy.
	b = rebatch(t, CodecSnappy, 1, []byte{20, 4 << 2, 'a', 'b', 'c', 'd', 'e', 1 | 10<<2, 0})
	if _, err := scanAll(t, p, b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset 0: %v", err)
	}
}

// bombBody is a compressed body of one record whose value is n zero
// bytes, built without holding n bytes.
func bombBody(t testing.TB, c Codec, n int64) []byte {
	t.Helper()
	body := []byte{0, 0, 0, 1} // attributes, ts delta 0, offset delta 0, key null (-1)
	body = binary.AppendVarint(body, n)
	tail := []byte{0} // no headers
	rec := bytes.NewBuffer(binary.AppendVarint(nil, int64(len(body))+n+int64(len(tail))))
	rec.Write(body)
	var out bytes.Buffer
	var w io.WriteCloser
	switch c {
	case CodecGzip:
		w = gzip.NewWriter(&out)
	case CodecZstd:
		w, _ = zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1))
	default:
		t.Fatalf("bomb for %s", c)
	}
	w.Write(rec.Bytes())
	io.CopyN(w, zeros{}, n)
	w.Write(tail)
	w.Close()
	return out.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestScanBombIsBounded(t *testing.T) {
	p := NewScanPool(1)
	for _, c := range []Codec{CodecGzip, CodecZstd} {
		body := bombBody(t, c, 60<<20)
		if len(body) > 200<<10 {
			t.Fatalf("%s bomb is %d bytes", c, len(body))
		}
		b := rebatch(t, c, 1, body)
		// Within the limit it is a valid batch, read in bounded memory.
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		if _, err := scanAll(t, p, b); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		runtime.ReadMemStats(&ms1)
		if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 20<<20 {
			t.Errorf("%s: scanning a 60 MiB bomb allocated %d bytes", c, d)
		}
		h, _ := Validate(b)
		sc := p.Scan(h, b[BatchHeaderLen:], 1<<20)
		err := sc.AllRecords()
		sc.Close()
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s past limit: %v", c, err)
		}
	}
}

// benchRecords is 64 records of 1 KiB of words and numbers, compressing
// about 3:1 (like the broker's BenchmarkProduceCodecCPU).
func benchRecords() []Record {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", `"id":`, `"ts":`, "{", "}", ",", " "}
	r := rand.New(rand.NewPCG(3, 4))
	recs := make([]Record, 64)
	for i := range recs {
		var v []byte
		for len(v) < 1024 {
			if r.IntN(4) == 0 {
				v = fmt.Append(v, r.IntN(100000))
			} else {
				v = append(v, words[r.IntN(len(words))]...)
			}
		}
		recs[i].Value = v[:1024]
	}
	return recs
}

func BenchmarkScan(b *testing.B) {
	p := NewScanPool(1)
	recs := benchRecords()
	for _, c := range allCodecs {
		batch := mustBatch(b, BatchSpec{Codec: c, ProducerID: -1}, recs)
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(64 * int64(len(recs[0].Value)))
			b.ReportAllocs()
			scanLoop(b, p, batch)
		})
	}
}

// bigRecords is three records of 1.6 MiB each: a 200 KiB random run
// repeated, so encoders find matches 200 KiB back.
func bigRecords(t testing.TB) []byte {
	t.Helper()
	run := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range run {
		run[i] = byte(r.IntN(256))
	}
	v := bytes.Repeat(run, 8)
	recs := []Record{{Value: v}, {Key: []byte("k"), Value: v[:1000]}, {Value: v}}
	b := mustBatch(t, BatchSpec{ProducerID: -1}, recs)
	return b[BatchHeaderLen:]
}

func snappyEncode(b []byte) []byte {
	out, err := Compress(CodecSnappy, b)
	if err != nil {
		panic(err)
	}
	return out
}

func BenchmarkDecompressWhole(b *testing.B) {
	recs := benchRecords()
	for _, c := range allCodecs[1:] {
		batch := mustBatch(b, BatchSpec{Codec: c, ProducerID: -1}, recs)
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(64 * 1024)
			var dst []byte
			for b.Loop() {
				var err error
				dst, err = DecompressAppend(dst[:0], c, batch[BatchHeaderLen:], 1<<20)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzScan: the streaming Scanner never panics, and a batch it accepts
// decodes in full (Records, decompressing the whole body with the
// codecs' own readers) to the same records.
func FuzzScan(f *testing.F) {
	for _, c := range allCodecs {
		b, _ := AppendBatch(nil, BatchSpec{Codec: c, ProducerID: -1}, sampleRecords(3))
		f.Add(b)
	}
	f.Add(rebatch(f, CodecLZ4, 1, lz4FrameOf(0x60|0x04, 0x40, 0, [][]byte{[]byte{0x10, 0x00, 0x02, 0x00, 0x01}}, []bool{true}, []byte{0x10, 0x00, 0x02, 0x00, 0x01})))
	p := NewScanPool(1)
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Validate(b)
		if err != nil || h.Size() != len(b) {
			return
		}
		got, err := scanAll(t, p, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidRecord) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrUnsupportedCompression) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		it, err := Records(h, b[BatchHeaderLen:], 64<<20)
		if err != nil {
			t.Fatalf("scanner accepted, Records: %v", err)
		}
		i := 0
		for ; it.Next(); i++ {
			r := it.Record()
			if i >= len(got) || got[i].OffsetDelta != r.OffsetDelta || got[i].TimestampDelta != r.TimestampDelta ||
				int(got[i].ValueLen) != lenOrNull(r.Value) || int(got[i].KeyLen) != lenOrNull(r.Key) || int(got[i].Headers) != len(r.Headers) {
				t.Fatalf("record %d: scanner %+v", i, got[min(i, len(got)-1)])
			}
		}
		if it.Err() != nil || i != len(got) {
			t.Fatalf("scanner accepted %d records; Records %d, %v", len(got), i, it.Err())
		}
	})
}

func lenOrNull(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// BenchmarkScanSmall walks an uncompressed batch of 1000 records of 100
// bytes, as the broker validates a batch of small records: the per-record
// field walk is all the work.
func BenchmarkScanSmall(b *testing.B) {
	p := NewScanPool(1)
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i].Value = bytes.Repeat([]byte{byte('a' + i%26)}, 100)
	}
	batch := mustBatch(b, BatchSpec{ProducerID: -1}, recs)
	b.SetBytes(int64(len(recs) * 100))
	b.ReportAllocs()
	scanLoop(b, p, batch)
}

// scanLoop scans batch with p for every b.Loop iteration.
func scanLoop(b *testing.B, p *ScanPool, batch []byte) {
	h, err := Validate(batch)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sc := p.Scan(h, batch[BatchHeaderLen:], 64<<20)
		if err := sc.AllRecords(); err != nil {
			b.Fatal(err)
		}
		sc.Close()
	}
}

// wellFormedRecords are single records, each whole and valid.
var wellFormedRecords = [][]byte{
	{0x0e, 0x00, 0x02, 0x00, 0x01, 0x02, 0x61, 0x00},                   // null key, 1-byte value
	{0x10, 0x00, 0x80, 0x00, 0x00, 0x01, 0x02, 0x61, 0x00},             // its timestamp delta an overlong (2-byte) zero
	{0x14, 0x00, 0x00, 0x02, 0x02, 0x6b, 0x00, 0x02, 0x02, 0x68, 0x01}, // empty value, one header with a null value
}

// TestDecodeWholeTakesWellFormed: the in-buffer path takes whole, valid
// records itself (so the fast path is the one small batches use), with the
// fields decodeStream reads; a record cut short it declines untouched.
func TestDecodeWholeTakesWellFormed(t *testing.T) {
	for i, b := range wellFormedRecords {
		whole, stream := &Scanner{buf: b}, &Scanner{buf: b}
		if !whole.decodeWhole() {
			t.Fatalf("record %d declined", i)
		}
		if err := stream.decodeStream(); err != nil {
			t.Fatalf("record %d: decodeStream: %v", i, err)
		}
		if whole.r != len(b) || whole.r != stream.r || whole.rec != stream.rec {
			t.Fatalf("record %d: decodeWhole %+v after %d bytes, decodeStream %+v after %d", i, whole.rec, whole.r, stream.rec, stream.r)
		}
		cut := &Scanner{buf: b[:len(b)-1]}
		if cut.decodeWhole() || cut.r != 0 || cut.rec != (RecordInfo{}) {
			t.Fatalf("record %d cut short: taken or moved (r=%d rec=%+v)", i, cut.r, cut.rec)
		}
	}
}

// FuzzDecodeWhole: the in-buffer path and the streaming path agree. On
// any bytes, when decodeWhole accepts a record, decodeStream accepts it too,
// with the same fields and the same length; whatever decodeWhole declines
// is left untouched for decodeStream.
func FuzzDecodeWhole(f *testing.F) {
	for _, n := range []int{1, 3, 200} {
		b := mustBatch(f, BatchSpec{ProducerID: -1}, sampleRecords(n))
		f.Add(b[BatchHeaderLen:])
	}
	for _, b := range wellFormedRecords {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := &Scanner{buf: b}
		ok := whole.decodeWhole()
		if !ok {
			if whole.r != 0 || whole.rec != (RecordInfo{}) {
				t.Fatalf("declined, yet moved: r=%d rec=%+v", whole.r, whole.rec)
			}
			return
		}
		stream := &Scanner{buf: b}
		if err := stream.decodeStream(); err != nil {
			t.Fatalf("decodeWhole accepted %+v (%d bytes), decodeStream: %v", whole.rec, whole.r, err)
		}
		if whole.r != stream.r || whole.rec != stream.rec {
			t.Fatalf("decodeWhole %+v after %d bytes, decodeStream %+v after %d", whole.rec, whole.r, stream.rec, stream.r)
		}
	})
}
