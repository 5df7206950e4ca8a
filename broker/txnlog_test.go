package broker

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// FuzzTxnLogFrames: decoding never panics, the valid prefix is within the
// input, and re-encoding the decoded records reproduces that prefix (so a
// torn or corrupt tail is cut exactly where the good frames end).
func FuzzTxnLogFrames(f *testing.F) {
	good, _ := appendTxnFrame(nil, &txnRecord{Txn: &txnSnapshot{ID: "a", PID: 3, Epoch: 1, State: txnOngoing,
		Parts: []partRecord{{Topic: "00112233445566778899aabbccddeeff", Partition: 2, Start: 10}}}})
	good, _ = appendTxnFrame(good, &txnRecord{Aborted: []abortedRecord{{Topic: "00", PID: 3, First: 1, Last: 9}}})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append(append([]byte{}, good...), 0, 0, 0, 9, 1, 2, 3, 4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, n := decodeTxnFrames(b)
		if n < 0 || n > len(b) {
			t.Fatalf("prefix %d of %d bytes", n, len(b))
		}
		var again []byte
		for i := range recs {
			var err error
			if again, err = appendTxnFrame(again, &recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		recs2, n2 := decodeTxnFrames(again)
		if n2 != len(again) || len(recs2) != len(recs) {
			t.Fatalf("re-encoded records do not decode back: %d/%d bytes, %d/%d records", n2, len(again), len(recs2), len(recs))
		}
	})
}

// A torn tail (a crash mid-append) is truncated on open and the records
// before it survive; new appends follow the good prefix.
func TestTxnLogTornTail(t *testing.T) {
	mem := vfs.NewMem()
	tl, _, err := openTxnLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.append(true, txnRecord{Txn: &txnSnapshot{ID: "keep", PID: 1}}); err != nil {
		t.Fatal(err)
	}
	good := tl.size
	frame, _ := appendTxnFrame(nil, &txnRecord{Txn: &txnSnapshot{ID: "torn", PID: 2}})
	if _, err := tl.f.WriteAt(frame[:len(frame)-5], tl.size); err != nil {
		t.Fatal(err)
	}
	tl.f.Sync()
	tl.close()

	tl, recs, err := openTxnLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Txn.ID != "keep" || tl.size != good {
		t.Fatalf("after torn tail: %d records, size %d (want 1, %d)", len(recs), tl.size, good)
	}
	if err := tl.append(true, txnRecord{Txn: &txnSnapshot{ID: "next", PID: 3}}); err != nil {
		t.Fatal(err)
	}
	tl.close()
	_, recs, err = openTxnLog(mem, "/d", true, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || len(recs) != 2 || recs[1].Txn.ID != "next" {
		t.Fatalf("append after truncation: %v %d records", err, len(recs))
	}
	data, _ := readFile(mem, "/d/"+txnLogName(1))
	if !bytes.HasPrefix(data, []byte(txnLogMagic)) {
		t.Fatal("bad header")
	}
}
