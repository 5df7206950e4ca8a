package records

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// compactedBatch builds a batch with records at offset deltas 0..n-1 and
// then rewrites it keeping only the deltas in keep.
func compactedBatch(t *testing.T, codec Codec, n int, keep map[int32]bool, xerial bool) ([]byte, []Record) {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{TimestampDelta: int64(i * 3), Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint("v", i))}
		if i%4 == 3 {
			recs[i].Value = nil
			recs[i].Headers = []Header{{Key: []byte("h"), Value: []byte("x")}}
		}
	}
	orig, err := AppendBatch(nil, BatchSpec{BaseOffset: 100, FirstTimestamp: 5000, ProducerID: 9, ProducerEpoch: 1, BaseSequence: 40}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ParseHeader(orig)
	var raw []byte
	var kept []Record
	_, err = ForEachStored(orig, 1<<20, nil, func(r *Record, enc []byte) error {
		if keep[r.OffsetDelta] {
			raw = append(raw, enc...)
			kept = append(kept, recs[r.OffsetDelta])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Attributes |= int16(codec)
	var origBody []byte
	if xerial {
		origBody = XerialSnappy([]byte("x"), 16)
	}
	b, err := AppendRewritten(nil, h, int32(len(kept)), raw, origBody)
	if err != nil {
		t.Fatal(err)
	}
	return b, kept
}

func TestRewriteRoundTrip(t *testing.T) {
	keep := map[int32]bool{1: true, 3: true, 4: true, 9: true}
	for _, c := range []struct {
		codec  Codec
		xerial bool
	}{{CodecNone, false}, {CodecGzip, false}, {CodecSnappy, false}, {CodecSnappy, true}, {CodecLZ4, false}, {CodecZstd, false}} {
		t.Run(fmt.Sprint(c.codec, c.xerial), func(t *testing.T) {
			b, kept := compactedBatch(t, c.codec, 10, keep, c.xerial)
			if _, err := Validate(b); err == nil {
				t.Fatal("Validate accepted a batch with fewer records than its offset span")
			}
			h, err := ValidateStored(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.Compression() != c.codec || h.NumRecords != 4 || h.LastOffsetDelta != 9 || h.BaseOffset != 100 ||
				h.ProducerID != 9 || h.BaseSequence != 40 || h.FirstTimestamp != 5000 {
				t.Fatalf("header %+v", h)
			}
			if body := b[BatchHeaderLen:]; c.xerial != bytes.HasPrefix(body, xerialMagic) {
				t.Fatalf("xerial framing %v, want %v", !c.xerial, c.xerial)
			}
			i := 0
			_, err = ForEachStored(b, 1<<20, nil, func(r *Record, _ []byte) error {
				w := kept[i]
				if !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) ||
					r.TimestampDelta != w.TimestampDelta || len(r.Headers) != len(w.Headers) {
					t.Fatalf("record %d: %+v, want %+v", i, r, w)
				}
				i++
				return nil
			})
			if err != nil || i != 4 {
				t.Fatalf("%d records, %v", i, err)
			}
		})
	}
}

func TestRewriteEmptyBatch(t *testing.T) {
	b, _ := compactedBatch(t, CodecZstd, 5, nil, false)
	h, err := ValidateStored(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != BatchHeaderLen || h.NumRecords != 0 || h.Compression() != CodecNone || h.LastOffsetDelta != 4 {
		t.Fatalf("empty batch: %d bytes, %+v", len(b), h)
	}
	n := 0
	if _, err := ForEachStored(b, 1<<20, nil, func(*Record, []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d records, %v", n, err)
	}
}

func TestValidateStoredRejects(t *testing.T) {
	b, _ := compactedBatch(t, CodecNone, 6, map[int32]bool{0: true, 5: true}, false)
	// More records than the offset span allows.
	bad := append([]byte(nil), b...)
	bad[offNumRecords+3] = 7
	putCRC(bad)
	if _, err := ValidateStored(bad); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("7 records in a span of 6: %v", err)
	}
	bad = append([]byte(nil), b...)
	bad[len(bad)-1] ^= 1
	if _, err := ValidateStored(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("bad crc: %v", err)
	}
	// Offset deltas must increase: swap the two records.
	var recs [][]byte
	ForEachStored(b, 1<<20, nil, func(_ *Record, raw []byte) error {
		recs = append(recs, append([]byte(nil), raw...))
		return nil
	})
	h, _ := ParseHeader(b)
	swapped, _ := AppendRewritten(nil, h, 2, append(append([]byte(nil), recs[1]...), recs[0]...), nil)
	if _, err := ForEachStored(swapped, 1<<20, nil, func(*Record, []byte) error { return nil }); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("decreasing offset deltas: %v", err)
	}
}

func putCRC(b []byte) {
	crc := Checksum(b)
	b[offCRC], b[offCRC+1], b[offCRC+2], b[offCRC+3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
}

// FuzzStoredBatch: ValidateStored and ForEachStored never panic, and a
// batch they accept decodes within the size bound.
func FuzzStoredBatch(f *testing.F) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		recs := []Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b")}, {Key: []byte("a"), Value: []byte("2")}}
		b, err := AppendBatch(nil, BatchSpec{Codec: c, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ValidateStored(b); err != nil {
			return
		}
		const max = 1 << 20
		var total int
		scratch, _ := ForEachStored(b, max, nil, func(r *Record, raw []byte) error {
			total += len(raw)
			return nil
		})
		if cap(scratch) > 2*max+1024 || total > max+len(b) {
			t.Fatalf("decoded %d bytes with a scratch of %d", total, cap(scratch))
		}
	})
}

// A transactional batch restamped as an idempotent producer's: new producer
// fields, no transactional bit, a valid CRC, the records untouched.
func TestSetIdempotentProducer(t *testing.T) {
	recs := []Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("w")}}
	batch, err := AppendBatch(nil, BatchSpec{Codec: CodecLZ4, ProducerID: 5, ProducerEpoch: 1, BaseSequence: 9, Transactional: true}, recs)
	if err != nil {
		t.Fatal(err)
	}
	SetIdempotentProducer(batch, 42, 3, 1000)
	h, err := Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	if h.IsTransactional() || h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != 1000 || h.NumRecords != 2 || h.Compression() != CodecLZ4 {
		t.Fatalf("header %+v", h)
	}
}

// A plain batch restamped as a transactional producer's: new producer
// fields, the transactional bit set, a valid CRC, the records untouched.
func TestSetTransactionalProducer(t *testing.T) {
	recs := []Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("w")}}
	batch, err := AppendBatch(nil, BatchSpec{Codec: CodecZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	SetTransactionalProducer(batch, 7, 2, 30)
	h, err := Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsTransactional() || h.IsControl() || h.ProducerID != 7 || h.ProducerEpoch != 2 || h.BaseSequence != 30 || h.NumRecords != 2 || h.Compression() != CodecZstd {
		t.Fatalf("header %+v", h)
	}
	it, err := Records(h, batch[BatchHeaderLen:], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for it.Next() {
		got = append(got, string(it.Record().Key)+"="+string(it.Record().Value))
	}
	if it.Err() != nil || strings.Join(got, ",") != "k=v,=w" {
		t.Fatalf("records %q, %v", got, it.Err())
	}
}
