package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func sampleRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{
			TimestampDelta: int64(i * 3),
			Key:            []byte(fmt.Sprintf("k%d", i)),
			Value:          bytes.Repeat([]byte{byte('a' + i%26)}, 10+i),
		}
		if i%3 == 0 {
			recs[i].Key = nil
			recs[i].Headers = []Header{{Key: []byte("h"), Value: []byte("v")}, {Key: []byte("n"), Value: nil}}
		}
	}
	return recs
}

func mustBatch(t testing.TB, spec BatchSpec, recs []Record) []byte {
	t.Helper()
	b, err := AppendBatch(nil, spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTripAllCodecs(t *testing.T) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(c.String(), func(t *testing.T) {
			recs := sampleRecords(50)
			b := mustBatch(t, BatchSpec{BaseOffset: 7, Codec: c, FirstTimestamp: 1000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
			h, err := Validate(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.BaseOffset != 7 || h.NumRecords != 50 || h.LastOffsetDelta != 49 || h.Compression() != c || h.Size() != len(b) {
				t.Fatalf("header %+v", h)
			}
			if h.MaxTimestamp != 1000+49*3 {
				t.Fatalf("max ts %d", h.MaxTimestamp)
			}
			it, err := Records(h, b[BatchHeaderLen:], 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for it.Next() {
				r := it.Record()
				w := recs[i]
				if r.OffsetDelta != int32(i) || r.TimestampDelta != w.TimestampDelta || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
					t.Fatalf("record %d: %+v want %+v", i, r, w)
				}
				for j, hd := range r.Headers {
					if !bytes.Equal(hd.Key, w.Headers[j].Key) || (hd.Value == nil) != (w.Headers[j].Value == nil) {
						t.Fatalf("record %d header %d: %+v", i, j, hd)
					}
				}
				i++
			}
			if err := it.Err(); err != nil || i != 50 {
				t.Fatalf("err %v after %d records", err, i)
			}
		})
	}
}

// TestAgainstKmsg checks our record encoding against franz-go's independent
// kmsg encoder and decoder.
func TestAgainstKmsg(t *testing.T) {
	var recBytes []byte
	for i := 0; i < 5; i++ {
		r := kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Key: []byte("key"), Value: []byte(fmt.Sprint("value", i)),
			Headers: []kmsg.Header{{Key: "hk", Value: []byte("hv")}}}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // placeholder varint is 1 byte for length 0
		recBytes = r.AppendTo(recBytes)
	}
	kb := kmsg.RecordBatch{FirstOffset: 42, Magic: 2, LastOffsetDelta: 4, FirstTimestamp: 99, MaxTimestamp: 103, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 5, Records: recBytes}
	b := kb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[offCRC:], Checksum(b))
	h, err := Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	it, err := Records(h, b[BatchHeaderLen:], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.Next() {
		r := it.Record()
		if string(r.Value) != fmt.Sprint("value", n) || string(r.Headers[0].Key) != "hk" {
			t.Fatalf("record %d %+v", n, r)
		}
		n++
	}
	if it.Err() != nil || n != 5 {
		t.Fatal(it.Err(), n)
	}

	// And the other direction: kmsg parses what we write.
	ours := mustBatch(t, BatchSpec{BaseOffset: 3, FirstTimestamp: 5, ProducerID: 9, ProducerEpoch: 1, BaseSequence: 4}, sampleRecords(4))
	var kb2 kmsg.RecordBatch
	if err := kb2.ReadFrom(ours); err != nil {
		t.Fatal(err)
	}
	if kb2.FirstOffset != 3 || kb2.NumRecords != 4 || kb2.ProducerID != 9 || kb2.FirstSequence != 4 || uint32(kb2.CRC) != Checksum(ours) {
		t.Fatalf("kmsg sees %+v", kb2)
	}
}

func TestValidateErrors(t *testing.T) {
	good := mustBatch(t, BatchSpec{ProducerID: -1}, sampleRecords(3))
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	recrc := func(b []byte) { binary.BigEndian.PutUint32(b[offCRC:], Checksum(b)) }
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:60], ErrCorrupt},
		{"truncated", good[:len(good)-1], ErrCorrupt},
		{"bad crc", mod(func(b []byte) { b[len(b)-1] ^= 1 }), ErrCorrupt},
		{"magic", mod(func(b []byte) { b[offMagic] = 1 }), ErrInvalidMagic},
		{"tiny length", mod(func(b []byte) { binary.BigEndian.PutUint32(b[offLength:], 10) }), ErrCorrupt},
		{"count mismatch", mod(func(b []byte) { binary.BigEndian.PutUint32(b[offNumRecords:], 2); recrc(b) }), ErrInvalidRecord},
		{"zero count", mod(func(b []byte) {
			binary.BigEndian.PutUint32(b[offNumRecords:], 0)
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 0xffffffff)
			recrc(b)
		}), ErrInvalidRecord},
		{"codec 7", mod(func(b []byte) { b[offAttributes+1] |= 7; recrc(b) }), ErrUnsupportedCompression},
	}
	for _, c := range cases {
		if _, err := Validate(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// The base offset and leader epoch are outside the CRC.
	b := mod(func(b []byte) { SetBaseOffset(b, 1<<40); SetPartitionLeaderEpoch(b, 5) })
	if h, err := Validate(b); err != nil || h.BaseOffset != 1<<40 || h.PartitionLeaderEpoch != 5 {
		t.Fatal(h, err)
	}
	b = mod(func(b []byte) { SetLogAppendTime(b, 12345) })
	if h, err := Validate(b); err != nil || !h.HasLogAppendTime() || h.MaxTimestamp != 12345 {
		t.Fatal(h, err)
	}
}

func TestRecordLevelErrors(t *testing.T) {
	// A batch whose header count agrees with LastOffsetDelta but whose body
	// holds fewer records.
	b := mustBatch(t, BatchSpec{ProducerID: -1}, sampleRecords(3))
	b2 := append([]byte(nil), b...)
	binary.BigEndian.PutUint32(b2[offNumRecords:], 4)
	binary.BigEndian.PutUint32(b2[offLastOffsetDelta:], 3)
	binary.BigEndian.PutUint32(b2[offCRC:], Checksum(b2))
	if _, err := Validate(b2); err != nil {
		t.Fatal(err)
	}
	it, err := BatchRecords(b2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
	}
	if !errors.Is(it.Err(), ErrInvalidRecord) {
		t.Fatalf("got %v", it.Err())
	}
	// Trailing garbage after the last record.
	b3 := append(append([]byte(nil), b...), 0)
	binary.BigEndian.PutUint32(b3[offLength:], uint32(len(b3)-12))
	binary.BigEndian.PutUint32(b3[offCRC:], Checksum(b3))
	it, _ = BatchRecords(b3, 1<<20)
	for it.Next() {
	}
	if !errors.Is(it.Err(), ErrInvalidRecord) {
		t.Fatalf("trailing: got %v", it.Err())
	}
}

func TestSplit(t *testing.T) {
	var buf []byte
	for i := 0; i < 4; i++ {
		buf = append(buf, mustBatch(t, BatchSpec{BaseOffset: int64(i), ProducerID: -1}, sampleRecords(i+1))...)
	}
	n := 0
	if err := Split(buf, func(i int, h BatchHeader, b []byte) error {
		if h.NumRecords != int32(i+1) || len(b) != h.Size() {
			t.Fatalf("batch %d: %+v", i, h)
		}
		n++
		return nil
	}); err != nil || n != 4 {
		t.Fatal(err, n)
	}
	err := Split(buf[:len(buf)-3], func(int, BatchHeader, []byte) error { return nil })
	var be *BatchError
	if !errors.As(err, &be) || be.Index != 3 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v", err)
	}
}

func TestXerialSnappy(t *testing.T) {
	recs := sampleRecords(200)
	plain := mustBatch(t, BatchSpec{ProducerID: -1}, recs)[BatchHeaderLen:]
	framed := XerialSnappy(plain, 1024)
	if !bytes.HasPrefix(framed, xerialMagic) {
		t.Fatal("no magic")
	}
	out, err := Decompress(CodecSnappy, framed, 1<<20)
	if err != nil || !bytes.Equal(out, plain) {
		t.Fatalf("xerial: %v", err)
	}
	if _, err := Decompress(CodecSnappy, framed, len(plain)-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	if _, err := Decompress(CodecSnappy, framed[:len(framed)-2], 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
}

// TestDecompressBounded feeds compression bombs and lying size prefixes and
// checks the limit holds and memory stays near it.
func TestDecompressBounded(t *testing.T) {
	const big = 16 << 20
	zeros := make([]byte, big)
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		comp, err := Compress(c, zeros)
		if err != nil {
			t.Fatal(err)
		}
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err = Decompress(c, comp, 1<<20)
		runtime.ReadMemStats(&ms1)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%v: got %v", c, err)
		}
		if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%v: allocated %d bytes for a 1 MiB limit", c, alloc)
		}
		out, err := Decompress(c, comp, big)
		if err != nil || len(out) != big {
			t.Fatalf("%v: full decode %d %v", c, len(out), err)
		}
	}
	// Raw snappy block claiming 2 GiB.
	lie := binary.AppendUvarint(nil, 1<<31)
	lie = append(lie, 0, 0, 0)
	if _, err := Decompress(CodecSnappy, lie, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("snappy lie: %v", err)
	}
	// LZ4 frame header with a content-size of 1 TiB but no data.
	if _, err := Decompress(CodecLZ4, []byte{0x04, 0x22, 0x4d, 0x18, 0x6c, 0x40, 0, 0, 0, 0, 0, 1, 0, 0, 0x00}, 1<<20); err == nil {
		t.Fatal("lz4 lie accepted")
	}
	if _, err := Decompress(CodecGzip, []byte("not gzip"), 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("gzip garbage: %v", err)
	}
	if _, err := Decompress(Codec(6), nil, 1); !errors.Is(err, ErrUnsupportedCompression) {
		t.Fatal(err)
	}
}

func TestCompressedRecordsLimit(t *testing.T) {
	b := mustBatch(t, BatchSpec{Codec: CodecZstd, ProducerID: -1}, sampleRecords(100))
	h, _ := Validate(b)
	if _, err := Records(h, b[BatchHeaderLen:], 100); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkValidate16K(b *testing.B) {
	recs := make([]Record, 64)
	for i := range recs {
		recs[i].Value = make([]byte, 240)
	}
	batch := mustBatch(b, BatchSpec{ProducerID: -1}, recs)
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		if _, err := Validate(batch); err != nil {
			b.Fatal(err)
		}
	}
}
