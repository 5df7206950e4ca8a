package logstore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// batch builds one uncompressed batch of n records whose values encode tag.
func batch(t testing.TB, n int, ts int64, tag string) []byte {
	t.Helper()
	recs := make([]records.Record, n)
	for i := range recs {
		recs[i] = records.Record{TimestampDelta: int64(i), Value: []byte(fmt.Sprintf("%s-%d", tag, i))}
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type testEnv struct {
	fs   vfs.FS
	dir  string
	opts Options
}

func memEnv(t testing.TB) *testEnv {
	m := vfs.NewMem()
	return &testEnv{fs: m, dir: "/data/topic-0", opts: Options{FS: m, Dir: "/data/topic-0", Config: DefaultConfig()}}
}

func osEnv(t testing.TB) *testEnv {
	dir := filepath.Join(t.TempDir(), "topic-0")
	return &testEnv{fs: vfs.Default, dir: dir, opts: Options{FS: vfs.Default, Dir: dir, Config: DefaultConfig()}}
}

func (e *testEnv) open(t testing.TB) (*Log, *RecoveryReport) {
	t.Helper()
	l, rep, err := Open(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	return l, rep
}

// readAll reads every visible batch from off and returns the bytes.
func readAll(t testing.TB, l *Log, off int64) []byte {
	t.Helper()
	var out []byte
	for {
		r, err := l.Read(ReadOptions{Offset: off, MaxBytes: 1 << 20, MinOneBatch: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Size == 0 {
			r.Release()
			return out
		}
		b, err := r.AppendTo(nil)
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
		next := off
		if err := records.Split(b, func(_ int, h records.BatchHeader, _ []byte) error {
			next = h.LastOffset() + 1
			return nil
		}); err != nil {
			t.Fatalf("read returned bad batches: %v", err)
		}
		off = next
	}
}

// offsetsOf lists the (base, last) of each batch in b.
func offsetsOf(t testing.TB, b []byte) [][2]int64 {
	t.Helper()
	var out [][2]int64
	if err := records.Split(b, func(_ int, h records.BatchHeader, _ []byte) error {
		out = append(out, [2]int64{h.BaseOffset, h.LastOffset()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
