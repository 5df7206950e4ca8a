package logstore

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenLog writes a small deterministic log: two sealed segments and an
// active one, a timestamp going backwards, and a DeleteRecords, then closes
// it cleanly.
func goldenLog(t *testing.T, fsys vfs.FS, dir string) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 600
	cfg.IndexIntervalBytes = 150
	l, _, err := Open(Options{FS: fsys, Dir: dir, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		recs := []records.Record{
			{TimestampDelta: 0, Key: []byte{byte('a' + i)}, Value: bytes.Repeat([]byte{byte(i)}, 20+i*3)},
			{TimestampDelta: 5, Value: []byte("second"), Headers: []records.Header{{Key: []byte("h"), Value: []byte{byte(i)}}}},
		}
		ts := int64(1_700_000_000_000 + i*1000)
		if i == 9 {
			ts = 1_600_000_000_000
		}
		// Uncompressed: compressor output may change between library versions.
		b, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DeleteRecords(3); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGolden pins the on-disk format: the files a fixed sequence of
// operations produces must match testdata/golden byte for byte (regenerate
// with -update after a deliberate format change and say so in doc.go), and
// the golden files must open and read back.
func TestGolden(t *testing.T) {
	mem := vfs.NewMem()
	goldenLog(t, mem, "/g")
	names, _ := mem.ReadDir("/g")
	golden := filepath.Join("testdata", "golden")
	if *update {
		os.RemoveAll(golden)
		os.MkdirAll(golden, 0o755)
		for _, n := range names {
			f, _ := mem.OpenFile("/g/"+n, os.O_RDONLY, 0)
			st, _ := f.Stat()
			b := make([]byte, st.Size())
			f.ReadAt(b, 0)
			f.Close()
			if err := os.WriteFile(filepath.Join(golden, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := os.ReadDir(golden)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(names) {
		t.Fatalf("log has files %v, golden has %d", names, len(want))
	}
	for _, n := range names {
		f, _ := mem.OpenFile("/g/"+n, os.O_RDONLY, 0)
		st, _ := f.Stat()
		got := make([]byte, st.Size())
		f.ReadAt(got, 0)
		f.Close()
		w, err := os.ReadFile(filepath.Join(golden, n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, w) {
			t.Errorf("%s differs from the golden file (format change? rerun with -update)", n)
		}
	}
	// The golden files open cleanly (no rescan) and hold the expected log.
	dir := filepath.Join(t.TempDir(), "g")
	os.MkdirAll(dir, 0o755)
	for _, de := range want {
		b, _ := os.ReadFile(filepath.Join(golden, de.Name()))
		os.WriteFile(filepath.Join(dir, de.Name()), b, 0o644)
	}
	l, rep, err := Open(Options{Dir: dir, Config: DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(rep.Rescanned) != 0 || rep.Segments != 3 || l.LogStartOffset() != 3 || l.LogEndOffset() != 24 {
		t.Fatalf("golden log: %+v", rep)
	}
	if off, ts, ok, _ := l.OffsetForTimestamp(1_700_000_004_000); !ok || off != 8 || ts != 1_700_000_004_000 {
		t.Fatal(off, ts, ok)
	}
	if off, ts := l.MaxTimestamp(); off != 23 || ts != 1_700_000_011_005 {
		t.Fatal(off, ts)
	}
}
