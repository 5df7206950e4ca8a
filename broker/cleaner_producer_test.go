package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// TestCompactedProducerStateSurvivesRestart: when compaction removes every
// record of an idempotent producer's last batch it keeps the batch, empty,
// so the producer's sequence state survives. A restart must rebuild that
// state from the empty batch: a retry of the batch is then a duplicate
// answered with its original offset, not appended again.
func TestCompactedProducerStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, NodeID: 1, CleanerBackoff: 10 * time.Millisecond}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close() }()
	createTopic(t, b, "c", 1, "cleanup.policy", "compact", "segment.bytes", "1024",
		"min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "0")
	ipid := serve(t, b, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse)
	pid := ipid.ProducerID
	idem := makeBatch(t, records.CodecNone, pid, 0, 0, testRec{key: []byte("k"), value: []byte("from the idempotent producer")})
	if r := produce(t, b, "c", 0, idem); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("idempotent produce: code %d offset %d", r.ErrorCode, r.BaseOffset)
	}
	// Plain producers overwrite key k, rolling segments as they go.
	val := make([]byte, 600)
	for i := 0; i < 8; i++ {
		if r := produce(t, b, "c", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte("k"), value: val})); r.ErrorCode != 0 {
			t.Fatalf("plain produce: code %d", r.ErrorCode)
		}
	}
	// Wait until the cleaner has emptied the idempotent batch at offset 0.
	p := b.lookupTopic("c", [16]byte{}).partition(0)
	deadline := time.Now().Add(20 * time.Second)
	for !firstBatchEmpty(t, p.log) {
		if time.Now().After(deadline) {
			t.Fatal("the cleaner never emptied the first batch")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	if r := produce(t, b, "c", 0, idem); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("retry after restart: code %d offset %d, want the original offset 0", r.ErrorCode, r.BaseOffset)
	}
}

func firstBatchEmpty(t *testing.T, l *logstore.Log) bool {
	t.Helper()
	rr, err := l.Read(logstore.ReadOptions{Offset: 0, MaxBytes: 1, MinOneBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if len(rr.Ranges) == 0 {
		return false
	}
	var hdr [records.BatchHeaderLen]byte
	if _, err := rr.Ranges[0].File.ReadAt(hdr[:], rr.Ranges[0].Pos); err != nil {
		t.Fatal(err)
	}
	h, err := records.ParseHeader(hdr[:])
	if err != nil {
		t.Fatal(err)
	}
	return h.BaseOffset == 0 && h.NumRecords == 0
}
