package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// kafka-transactions.sh abort, as KIP-664 has it, over TCP: a kgo
// transactional producer produces and is abandoned without EndTxn; the
// operator finds the producer with DescribeProducers and sends
// WriteTxnMarkers with the producer ID, epoch and coordinator epoch it
// reports. A read_committed kgo consumer then reads past the hung
// transaction and never sees its records, the LSO reaches the high
// watermark, and both hold after a crash and restart.
func TestWriteTxnMarkersAbortsAbandonedKgoProducer(t *testing.T) {
	mem := vfs.NewMem()
	b, err := New(Config{DataDir: "/data", FS: mem, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	createTopic(t, b, "hang", 1)
	addr := listen(t, b)
	ctx := testCtx(t)

	// The abandoned producer: a transaction timeout the test never
	// reaches, so only the operator's abort can end it.
	txn := txnClient(t, addr, "abandoned", kgo.TransactionTimeout(10*time.Minute))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"hung-1", "hung-2"} {
		if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "hang", Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	plain := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "hang", Partition: 0, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if lso := lastStableOffset(t, b, "hang", 0); lso != 0 {
		t.Fatalf("LSO pinned by the hung transaction: %d, want 0", lso)
	}

	// What the tool does: DescribeProducers for the partition ...
	dp := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = "hang", []int32{0}
	dp.Topics = append(dp.Topics, dt)
	dresp, err := dp.RequestWith(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	var found *kmsg.DescribeProducersResponseTopicPartitionActiveProducer
	for i, ap := range dresp.Topics[0].Partitions[0].ActiveProducers {
		if ap.CurrentTxnStartOffset == 0 {
			found = &dresp.Topics[0].Partitions[0].ActiveProducers[i]
		}
	}
	if found == nil {
		t.Fatalf("no producer with a transaction open at 0: %+v", dresp.Topics[0].Partitions[0])
	}

	// ... then WriteTxnMarkers to the leader, over the wire.
	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed = found.ProducerID, int16(found.ProducerEpoch), found.CoordinatorEpoch, false
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "hang", []int32{0}
	m.Topics = append(m.Topics, mt)
	wm.Markers = append(wm.Markers, m)
	wresp, err := wm.RequestWith(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if c := wresp.Markers[0].Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("abort marker: %v", kerr.ErrorForCode(c))
	}

	check := func(b *Broker, addr string) {
		t.Helper()
		// hung-1 0, hung-2 1, after 2, marker 3.
		if lso, hw := lastStableOffset(t, b, "hang", 0), b.lookupTopic("hang", [16]byte{}).partition(0).log.HighWatermark(); lso != 4 || hw != 4 {
			t.Fatalf("LSO %d HW %d, want 4 and 4", lso, hw)
		}
		got := readAll(t, addr, "hang", true, 1)
		if string(got[0].Value) != "after" {
			t.Fatalf("read_committed read %q", got[0].Value)
		}
		if n := len(readAll(t, addr, "hang", false, 3)); n != 3 {
			t.Fatalf("read_uncommitted: %d records", n)
		}
	}
	check(b, addr)

	// DescribeProducers no longer reports the transaction open.
	dresp, err = dp.RequestWith(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, ap := range dresp.Topics[0].Partitions[0].ActiveProducers {
		if ap.ProducerID == found.ProducerID && ap.CurrentTxnStartOffset != -1 {
			t.Fatalf("transaction still open after the abort: %+v", ap)
		}
	}

	txn.Close()
	plain.Close()
	b, _ = crashRestart(t, mem, b)
	check(b, listen(t, b))
}

// v0 went with KIP-896 (Kafka 4): ApiVersions advertises 1–2 for key 27.
func TestWriteTxnMarkersVersions(t *testing.T) {
	b := newTestBroker(t)
	resp := serve(t, b, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 27 {
			if k.MinVersion != 1 || k.MaxVersion != 2 {
				t.Fatalf("WriteTxnMarkers advertised %d-%d, want 1-2", k.MinVersion, k.MaxVersion)
			}
			return
		}
	}
	t.Fatal("WriteTxnMarkers not advertised")
}

// The producer was not dead after all: after the operator aborted its
// data on a partition, it commits through the coordinator, which still
// has the transaction Ongoing. The commit succeeds (its COMMIT marker on
// the partition closes nothing), the aborted records stay aborted, and a
// record produced after the abort in the same transaction is committed.
func TestWriteTxnMarkersThenProducerCommits(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "back", 1)
	addr := listen(t, b)
	ctx := testCtx(t)
	txn := txnClient(t, addr, "back", kgo.TransactionTimeout(10*time.Minute))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "back", Partition: 0, Value: []byte("aborted")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := txn.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := writeMarkers(t, b, 2, pid, epoch, false, "back", 0); c[0] != 0 {
		t.Fatalf("abort marker: %v", kerr.ErrorForCode(c[0]))
	}
	if lso := lastStableOffset(t, b, "back", 0); lso != 2 {
		t.Fatalf("LSO after the operator's abort: %d, want 2", lso)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "back", Partition: 0, Value: []byte("kept")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if lso := lastStableOffset(t, b, "back", 0); lso != 2 {
		t.Fatalf("LSO with new data in the transaction: %d, want 2", lso)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after the operator's abort: %v", err)
	}
	got := readAll(t, addr, "back", true, 1)
	if string(got[0].Value) != "kept" {
		t.Fatalf("read_committed read %q, want kept", got[0].Value)
	}
	if lso, hw := lastStableOffset(t, b, "back", 0), b.lookupTopic("back", [16]byte{}).partition(0).log.HighWatermark(); lso != hw {
		t.Fatalf("LSO %d behind HW %d after the commit", lso, hw)
	}
}
