package records

import (
	"bytes"
	"fmt"
	"testing"
)

// Every codec to every codec, at the default and at explicit levels: the
// result validates (CRC, framing), keeps the producer fields and holds
// exactly the original records.
func TestRecompress(t *testing.T) {
	codecs := []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}
	var recs []Record
	for i := 0; i < 50; i++ {
		recs = append(recs, Record{TimestampDelta: int64(i), Key: []byte(fmt.Sprintf("k%d", i)),
			Value: bytes.Repeat([]byte{byte(i)}, 100+i), Headers: []Header{{Key: []byte("h"), Value: []byte("v")}}})
	}
	levels := map[Codec][]int{CodecGzip: {1, 9}, CodecLZ4: {1, 17}, CodecZstd: {-5, 1, 19}}
	for _, from := range codecs {
		in, err := AppendBatch(nil, BatchSpec{BaseOffset: 7, Codec: from, FirstTimestamp: 1000, ProducerID: 42, ProducerEpoch: 3, BaseSequence: 11, Transactional: true}, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range codecs {
			for _, level := range append([]int{LevelDefault}, levels[to]...) {
				out, _, err := Recompress(nil, in, to, level, 1<<20, nil)
				if err != nil {
					t.Fatalf("%v -> %v level %d: %v", from, to, level, err)
				}
				h, err := Validate(out)
				if err != nil {
					t.Fatalf("%v -> %v level %d: result does not validate: %v", from, to, level, err)
				}
				if h.Compression() != to || h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != 11 || !h.IsTransactional() || h.BaseOffset != 7 || h.FirstTimestamp != 1000 {
					t.Fatalf("%v -> %v: header %+v", from, to, h)
				}
				it, err := BatchRecords(out, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for it.Next() {
					r := it.Record()
					if !bytes.Equal(r.Key, recs[n].Key) || !bytes.Equal(r.Value, recs[n].Value) || len(r.Headers) != 1 {
						t.Fatalf("%v -> %v: record %d differs", from, to, n)
					}
					n++
				}
				if it.Err() != nil || n != len(recs) {
					t.Fatalf("%v -> %v: %d records, err %v", from, to, n, it.Err())
				}
			}
		}
	}
}

// A batch whose records inflate past max is refused, not materialized.
func TestRecompressBounded(t *testing.T) {
	in, err := AppendBatch(nil, BatchSpec{Codec: CodecZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]Record{{Value: make([]byte, 4<<20)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Recompress(nil, in, CodecGzip, LevelDefault, 1<<20, nil); err == nil {
		t.Fatal("a 4 MiB record recompressed under a 1 MiB bound")
	}
}

// BenchmarkRecompress is the codec work alone per batch (64 records of 1
// KiB text-like values, lz4 in).
func BenchmarkRecompress(b *testing.B) {
	var recs []Record
	for i := 0; i < 64; i++ {
		v := bytes.Repeat([]byte(fmt.Sprintf(`{"id":%d,"name":"alpha bravo %d"},`, i, i*7)), 1024/32)
		recs = append(recs, Record{TimestampDelta: int64(i), Value: v[:1024]})
	}
	in, err := AppendBatch(nil, BatchSpec{Codec: CodecLZ4, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	for _, to := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecZstd} {
		b.Run("lz4-to-"+to.String(), func(b *testing.B) {
			b.SetBytes(64 * 1024)
			var scratch []byte
			for i := 0; i < b.N; i++ {
				if _, scratch, err = Recompress(nil, in, to, LevelDefault, 1<<20, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
