package txn

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// FuzzTxnLogFrames: decoding never panics, the valid prefix is within the
// input, and re-encoding the decoded records reproduces that prefix (so a
// torn or corrupt tail is cut exactly where the good frames end).
func FuzzTxnLogFrames(f *testing.F) {
	good, _ := appendFrame(nil, &record{Txn: &snapshot{ID: "a", PID: 3, Epoch: 1, State: Ongoing,
		Parts: []partRecord{{Topic: "00112233445566778899aabbccddeeff", Partition: 2, Start: 10}}}})
	good, _ = appendFrame(good, &record{Aborted: []abortedRecord{{Topic: "00", PID: 3, First: 1, Last: 9}}})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(append([]byte{}, good...), 0, 0, 0, 9, 1, 2, 3, 4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, n := decodeFrames(b)
		if n < 0 || n > len(b) {
			t.Fatalf("prefix %d of %d bytes", n, len(b))
		}
		var again []byte
		for i := range recs {
			var err error
			if again, err = appendFrame(again, &recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		recs2, n2 := decodeFrames(again)
		if n2 != len(again) || len(recs2) != len(recs) {
			t.Fatalf("re-encoded records do not decode back: %d/%d bytes, %d/%d records", n2, len(again), len(recs2), len(recs))
		}
	})
}

// A torn tail (a crash mid-append) is truncated on open and the records
// before it survive; new appends follow the good prefix.
func TestTxnLogTornTail(t *testing.T) {
	mem := vfs.NewMem()
	tl, _, err := openLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.append(true, record{Txn: &snapshot{ID: "keep", PID: 1}}); err != nil {
		t.Fatal(err)
	}
	good := tl.size
	frame, _ := appendFrame(nil, &record{Txn: &snapshot{ID: "torn", PID: 2}})
	if _, err := tl.f.WriteAt(frame[:len(frame)-5], tl.size); err != nil {
		t.Fatal(err)
	}
	tl.f.Sync()
	tl.Close()

	tl, recs, err := openLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Txn.ID != "keep" || tl.size != good {
		t.Fatalf("after torn tail: %d records, size %d (want 1, %d)", len(recs), tl.size, good)
	}
	if err := tl.append(true, record{Txn: &snapshot{ID: "next", PID: 3}}); err != nil {
		t.Fatal(err)
	}
	tl.Close()
	_, recs, err = openLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || len(recs) != 2 || recs[1].Txn.ID != "next" {
		t.Fatalf("append after truncation: %v %d records", err, len(recs))
	}
	data, _ := readAll(mem, "/d/"+logName(1))
	if !bytes.HasPrefix(data, []byte(logMagic)) {
		t.Fatal("bad header")
	}
}

// The transaction log undoes a write torn by a full disk instead of
// refusing every later one: the next append after space returns goes
// through, without a reopen, and a reopen finds exactly the appends that
// succeeded.
func TestLogResumesAfterDiskFull(t *testing.T) {
	var full atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if full.Load() && op == vfs.OpWrite {
			return n / 2, syscall.ENOSPC
		}
		return n, nil
	})
	mem := vfs.NewMem()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tl, _, err := openLog(vfs.NewFaultFS(mem, inj), "/d", true, logger)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id string) record { return record{Txn: &snapshot{ID: id, PID: 1}} }
	if err := tl.append(true, rec("before")); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	if err := tl.append(true, rec("refused")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ENOSPC", err)
	}
	full.Store(false)
	if err := tl.append(true, rec("after")); err != nil {
		t.Fatalf("append once there is space: %v", err)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	tl, _, err = openLog(mem, "/d", true, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	var ids []string
	for id := range tl.live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if strings.Join(ids, ",") != "after,before" {
		t.Fatalf("reopened txn log holds %v, want [after before]", ids)
	}
}

// The finalized transaction.version survives a compaction (it is live
// content, not history) and a reopen; the newest record wins.
func TestTxnLogKeepsTxnVersion(t *testing.T) {
	fs := vfs.NewMem()
	tl, err := OpenLog(fs, "/tx", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for i, level := range []int16{0, 1} {
		l := level
		if err := tl.append(true, record{TxnVersion: &l, FeaturesEpoch: int64(i + 2)}); err != nil {
			t.Fatal(err)
		}
	}
	// Enough superseded state of one ID to make the log worth compacting.
	pad := strings.Repeat("x", 4096)
	for i := 0; tl.size < 2<<20; i++ {
		if err := tl.append(false, record{Txn: &snapshot{ID: "churn", PID: int64(i), Offsets: []offsetsRecord{{Group: "g", Topic: pad}}}}); err != nil {
			t.Fatal(err)
		}
	}
	gen := tl.gen
	if err := tl.maybeCompact(func(abortedRecord) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if tl.gen == gen {
		t.Fatalf("not compacted: generation %d, %d bytes", tl.gen, tl.size)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	tl, err = OpenLog(fs, "/tx", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if tl.txnVersion != 1 || tl.featuresEpoch != 3 {
		t.Fatalf("after compaction and reopen: transaction.version %d, features epoch %d; want 1, 3", tl.txnVersion, tl.featuresEpoch)
	}
}
