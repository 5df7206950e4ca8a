package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// writeMarkers sends one WriteTxnMarkers marker for topic/partitions and
// returns the per-partition codes.
func writeMarkers(t *testing.T, b *Broker, version int16, pid int64, epoch int16, commit bool, topic string, parts ...int32) []int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = version
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, 3
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, parts
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp := serve(t, b, req).(*kmsg.WriteTxnMarkersResponse)
	if len(resp.Markers) != 1 || resp.Markers[0].ProducerID != pid || len(resp.Markers[0].Topics) != 1 || resp.Markers[0].Topics[0].Topic != topic {
		t.Fatalf("response shape: %+v", resp)
	}
	var codes []int16
	for i, p := range resp.Markers[0].Topics[0].Partitions {
		if p.Partition != parts[i] {
			t.Fatalf("partition %d answered as %d", parts[i], p.Partition)
		}
		codes = append(codes, p.ErrorCode)
	}
	return codes
}

// lastStableOffset is ListOffsets latest at read_committed.
func lastStableOffset(t *testing.T, b *Broker, topic string, part int32) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.IsolationLevel = 5, 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = part, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := serve(t, b, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	wantCode(t, "list offsets", p.ErrorCode, nil)
	return p.Offset
}

// A hanging transaction (its producer gone, the timeout far off) pins
// the LSO; WriteTxnMarkers aborts it as kafka-transactions.sh abort does:
// read_committed consumers then read past it and never see its records,
// also after a crash and restart; a commit marker makes another
// transaction's records visible.
func TestWriteTxnMarkersAbortsHangingTxn(t *testing.T) {
	mem := vfs.NewMem()
	b, err := New(Config{DataDir: "/data", FS: mem, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "w", 1)
	begin := func(b *Broker, id, value string) (int64, int16) {
		r := initTxn(t, b, id, 4, 600000, -1, -1) // a timeout the test never reaches
		wantCode(t, "init "+id, r.ErrorCode, nil)
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, r.ProducerID, r.ProducerEpoch
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "w", Partitions: []int32{0}}}
		wantCode(t, "add", serve(t, b, req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode, nil)
		wantCode(t, "produce", txnProduce(t, b, id, "w", 0, txnBatch(t, r.ProducerID, r.ProducerEpoch, 0, value)).ErrorCode, nil)
		return r.ProducerID, r.ProducerEpoch
	}
	pid, epoch := begin(b, "hang", "hung")
	wantCode(t, "plain produce", produce(t, b, "w", 0, makeBatch(t, 0, -1, 0, 0, testRec{value: []byte("after")})).ErrorCode, nil)
	if lso := lastStableOffset(t, b, "w", 0); lso != 0 {
		t.Fatalf("LSO with the hanging transaction: %d, want 0", lso)
	}

	// Refused: a negative producer ID, a partition or topic this node
	// does not have.
	if c := writeMarkers(t, b, 2, -1, 0, false, "w", 0); c[0] != kerr.InvalidRequest.Code {
		t.Fatalf("negative producer ID: %v", kerr.ErrorForCode(c[0]))
	}
	if c := writeMarkers(t, b, 1, pid, epoch, false, "w", 5); c[0] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown partition: %v", kerr.ErrorForCode(c[0]))
	}
	if c := writeMarkers(t, b, 1, pid, epoch, false, "nope", 0); c[0] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", kerr.ErrorForCode(c[0]))
	}
	if lso := lastStableOffset(t, b, "w", 0); lso != 0 {
		t.Fatalf("LSO after refused markers: %d", lso)
	}

	// The abort: data at 0, "after" at 1, the marker at 2.
	if c := writeMarkers(t, b, 1, pid, epoch, false, "w", 0); c[0] != 0 {
		t.Fatalf("abort marker: %v", kerr.ErrorForCode(c[0]))
	}
	if lso, hw := lastStableOffset(t, b, "w", 0), b.lookupTopic("w", [16]byte{}).partition(0).log.HighWatermark(); lso != 3 || hw != 3 {
		t.Fatalf("after the abort: LSO %d HW %d, want 3 and 3", lso, hw)
	}
	check := func(b *Broker, want ...string) {
		t.Helper()
		got := readAll(t, listen(t, b), "w", true, len(want))
		for i, r := range got {
			if string(r.Value) != want[i] {
				t.Fatalf("read_committed record %d: %q, want %q", i, r.Value, want[i])
			}
		}
	}
	check(b, "after")
	if n := len(readAll(t, listen(t, b), "w", false, 2)); n != 2 {
		t.Fatalf("read_uncommitted: %d records", n)
	}

	// After a crash the abort holds: the coordinator still has "hang"
	// Ongoing, but its data on w-0 is closed by the marker.
	b, mem = crashRestart(t, mem, b)
	if lso := lastStableOffset(t, b, "w", 0); lso != 3 {
		t.Fatalf("LSO after restart: %d, want 3", lso)
	}
	check(b, "after")

	// A commit marker for another hanging transaction: its record shows.
	pid2, epoch2 := begin(b, "com", "committed")
	if lso := lastStableOffset(t, b, "w", 0); lso != 3 {
		t.Fatalf("LSO with the second transaction open: %d", lso)
	}
	if c := writeMarkers(t, b, 2, pid2, epoch2, true, "w", 0); c[0] != 0 {
		t.Fatalf("commit marker: %v", kerr.ErrorForCode(c[0]))
	}
	check(b, "after", "committed")
	// A marker where the producer has nothing open is written, as Kafka does.
	if c := writeMarkers(t, b, 2, pid2, epoch2, false, "w", 0); c[0] != 0 {
		t.Fatalf("marker with nothing open: %v", kerr.ErrorForCode(c[0]))
	}
	// A marker at a newer epoch fences the older one on the partition.
	if c := writeMarkers(t, b, 2, pid2, epoch2+1, false, "w", 0); c[0] != 0 {
		t.Fatalf("marker at a newer epoch: %v", kerr.ErrorForCode(c[0]))
	}
	if c := writeMarkers(t, b, 2, pid2, epoch2, false, "w", 0); c[0] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(c[0]))
	}
	b, _ = crashRestart(t, mem, b)
	check(b, "after", "committed")
	if lso := lastStableOffset(t, b, "w", 0); lso != 7 {
		t.Fatalf("final LSO %d, want 7", lso)
	}
}

// A marker the disk cannot take is KAFKA_STORAGE_ERROR for its partition,
// and the transaction stays open (the LSO does not move); once there is
// room the same marker goes in.
func TestWriteTxnMarkersDiskFull(t *testing.T) {
	b, disk, clock := fullDiskBroker(t)
	createTopic(t, b, "w", 1)
	r := initTxn(t, b, "full", 4, 600000, -1, -1)
	wantCode(t, "init", r.ErrorCode, nil)
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch = 3, "full", r.ProducerID, r.ProducerEpoch
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "w", Partitions: []int32{0}}}
	wantCode(t, "add", serve(t, b, add).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode, nil)
	wantCode(t, "produce", txnProduce(t, b, "full", "w", 0, txnBatch(t, r.ProducerID, r.ProducerEpoch, 0, "x")).ErrorCode, nil)

	disk.full.Store(true)
	if c := writeMarkers(t, b, 2, r.ProducerID, r.ProducerEpoch, false, "w", 0); c[0] != kerr.KafkaStorageError.Code {
		t.Fatalf("marker on a full disk: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(c[0]))
	}
	if lso := lastStableOffset(t, b, "w", 0); lso != 0 {
		t.Fatalf("LSO after the failed marker: %d, want 0", lso)
	}
	disk.full.Store(false)
	clock.skipNoSpaceWait()
	if c := writeMarkers(t, b, 2, r.ProducerID, r.ProducerEpoch, false, "w", 0); c[0] != 0 {
		t.Fatalf("marker once there is room: %v", kerr.ErrorForCode(c[0]))
	}
	if lso := lastStableOffset(t, b, "w", 0); lso != 2 {
		t.Fatalf("LSO after the abort: %d, want 2", lso)
	}
}
