package records

import (
	"bytes"
	"testing"
)

// FuzzValidate: Validate and record iteration never panic, never read past
// the batch, and a batch that validates re-validates identically after its
// base offset is rewritten.
func FuzzValidate(f *testing.F) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		b, _ := AppendBatch(nil, BatchSpec{Codec: c, ProducerID: -1}, sampleRecords(3))
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(make([]byte, BatchHeaderLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Validate(b)
		if err != nil {
			return
		}
		if h.Size() > len(b) {
			t.Fatalf("size %d > %d", h.Size(), len(b))
		}
		c := append([]byte(nil), b[:h.Size()]...)
		SetBaseOffset(c, 12345)
		h2, err := Validate(c)
		if err != nil || h2.BaseOffset != 12345 || h2.CRC != h.CRC {
			t.Fatalf("rewrite: %v", err)
		}
		it, err := Records(h, b[BatchHeaderLen:h.Size()], 1<<20)
		if err != nil {
			return
		}
		n := 0
		for it.Next() {
			r := it.Record()
			if len(r.Key) > h.Size() && h.Compression() == CodecNone {
				t.Fatal("key longer than batch")
			}
			n++
		}
		if it.Err() == nil && n != int(h.NumRecords) {
			t.Fatalf("%d records, header says %d", n, h.NumRecords)
		}
		if !bytes.Equal(b[:h.Size()][8:], c[8:]) {
			t.Fatal("rewrite touched more than the base offset")
		}
	})
}
