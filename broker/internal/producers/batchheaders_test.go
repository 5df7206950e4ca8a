package producers

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// EachBatchHeader walks header to header, takes a header-only (emptied)
// batch, stops when told, and reports a length shorter than a header.
func TestEachBatchHeader(t *testing.T) {
	one, err := records.AppendBatch(nil, records.BatchSpec{
		Codec: records.CodecNone, FirstTimestamp: time.Now().UnixMilli(), ProducerID: 7, ProducerEpoch: 0, BaseSequence: 0,
	}, []records.Record{{Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	empty := append([]byte(nil), one[:records.BatchHeaderLen]...)
	binary.BigEndian.PutUint32(empty[8:], uint32(records.BatchHeaderLen-12)) // Length: header only
	short := append([]byte(nil), one...)
	binary.BigEndian.PutUint32(short[8:], 20)

	walk := func(data []byte, stopAfter int) ([]int64, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "seg")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := vfs.Default.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rr := &logstore.ReadResult{Ranges: []logstore.Range{{File: f, Len: int64(len(data))}}}
		var sizes []int64
		err = EachBatchHeader(rr, func(h *records.BatchHeader) bool {
			sizes = append(sizes, int64(h.Size()))
			return len(sizes) < stopAfter
		})
		return sizes, err
	}
	sizes, err := walk(append(append(append([]byte(nil), one...), empty...), one...), 10)
	if err != nil || len(sizes) != 3 || sizes[1] != records.BatchHeaderLen {
		t.Fatalf("walk: sizes %v, %v", sizes, err)
	}
	if sizes, err = walk(append(append([]byte(nil), one...), one...), 1); err != nil || len(sizes) != 1 {
		t.Fatalf("stop after one: sizes %v, %v", sizes, err)
	}
	if _, err = walk(append(append([]byte(nil), one...), short...), 10); err == nil || !strings.Contains(err.Error(), "smaller than the header") {
		t.Fatalf("short batch: %v", err)
	}
}
