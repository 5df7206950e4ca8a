package logstore

import (
	"bytes"
	"os"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
)

func fuzzSegmentSeeds(f testing.TB) [][]byte {
	var seg []byte
	off := int64(0)
	for i := 0; i < 4; i++ {
		b := batch(f, 1+i, int64(i), "f")
		records.SetBaseOffset(b, off)
		off += int64(1 + i)
		seg = append(seg, b...)
	}
	return [][]byte{seg, seg[:len(seg)-7], {}, make([]byte, 61)}
}

// FuzzScanSegment: the recovery scanner never panics, never claims more
// than it was given, and is stable: rescanning the good prefix it found
// yields the same batches and no error.
func FuzzScanSegment(f *testing.F) {
	for _, s := range fuzzSegmentSeeds(f) {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, verify bool) {
		r := bytes.NewReader(data)
		var n int
		res := scanBatches(r, int64(len(data)), 0, verify, func(batchInfo) { n++ })
		if res.end < 0 || res.end > int64(len(data)) || n != res.batches {
			t.Fatalf("end %d of %d, %d visits, %d batches", res.end, len(data), n, res.batches)
		}
		if (res.err == nil) != (res.end == int64(len(data))) {
			t.Fatalf("err %v with end %d of %d", res.err, res.end, len(data))
		}
		again := scanBatches(bytes.NewReader(data[:res.end]), res.end, 0, verify, nil)
		if again.err != nil || again.end != res.end || again.next != res.next || again.batches != res.batches {
			t.Fatalf("prefix rescan differs: %+v vs %+v", again, res)
		}
		if verify {
			// Every batch the verifying scan accepts passes Validate.
			if err := records.Split(data[:res.end], func(int, records.BatchHeader, []byte) error { return nil }); err != nil {
				t.Fatalf("accepted bytes fail validation: %v", err)
			}
		}
	})
}

// FuzzIndex: index decoders never panic; whatever they accept re-encodes
// to the same bytes and satisfies the ordering invariants lookups rely on.
func FuzzIndex(f *testing.F) {
	h := indexHeader{logSize: 5000, next: 42}
	f.Add(encodeOffsetIndex(h, []idxEntry{{1, 100}, {5, 900}, {9, 4000}}))
	f.Add(encodeTimeIndex(h, []tidxEntry{{1000, 1, 100}, {2000, 9, 4000}}))
	f.Add(encodeOffsetIndex(h, nil))
	f.Add([]byte("MKOI"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if oh, idx, err := decodeOffsetIndex(data); err == nil {
			if !bytes.Equal(encodeOffsetIndex(oh, idx), data) {
				t.Fatal("offset index does not re-encode identically")
			}
			for i := 1; i < len(idx); i++ {
				if idx[i].rel <= idx[i-1].rel || idx[i].pos <= idx[i-1].pos {
					t.Fatal("unordered entries accepted")
				}
			}
			for _, e := range idx {
				if int64(e.pos) >= oh.logSize {
					t.Fatal("entry beyond the log accepted")
				}
				if got, ok := floorByRel(idx, e.rel); !ok || got != e {
					t.Fatal("lookup does not find an entry")
				}
			}
		}
		if th, tidx, err := decodeTimeIndex(data); err == nil {
			if !bytes.Equal(encodeTimeIndex(th, tidx), data) {
				t.Fatal("time index does not re-encode identically")
			}
			for i := 1; i < len(tidx); i++ {
				if tidx[i].ts <= tidx[i-1].ts || tidx[i].pos <= tidx[i-1].pos {
					t.Fatal("unordered time entries accepted")
				}
			}
		}
		readLogStartBytes(data)
	})
}

// readLogStartBytes runs the logstart decoder on data (must not panic).
func readLogStartBytes(data []byte) {
	m := memEnv(nil)
	m.fs.MkdirAll("/x", 0o755)
	f, _ := m.fs.OpenFile("/x/logstart", os.O_RDWR|os.O_CREATE, 0o644)
	f.Write(data)
	f.Close()
	readLogStart(m.fs, "/x/logstart")
}
