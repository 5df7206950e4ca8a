package broker

// Transaction version 2 (KIP-890 part 2) and the marker's coordinator
// epoch, answer by answer. Each expectation is what Apache Kafka 4.4
// answered to the same sequence (compat_test/kafkadiff_txnv2_test.go
// replays several against a real one).

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

func endTxnV(t *testing.T, b *Broker, version int16, id string, pid int64, epoch int16, commit bool) *kmsg.EndTxnResponse {
	t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, id, pid, epoch, commit
	return serve(t, b, req).(*kmsg.EndTxnResponse)
}

// addPartitionV3 adds one partition to id's transaction the explicit way
// (AddPartitionsToTxn v3) and returns the partition's code.
func addPartitionV3(t *testing.T, b *Broker, id string, pid int64, epoch int16, topic string, part int32) int16 {
	t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: []int32{part}}}
	return serve(t, b, req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
}

func txnProduceV(t *testing.T, b *Broker, version int16, id, topic string, part int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := produceReq(version, -1, topic, [16]byte{}, part, batch)
	req.TransactionID = kmsg.StringPtr(id)
	return serve(t, b, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

func txnOffsetCommitV(t *testing.T, b *Broker, version int16, id, group string, pid int64, epoch int16, topic string, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = version, id, group, pid, epoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 0, offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return serve(t, b, req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

func describeTxn(t *testing.T, b *Broker, id string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	return serve(t, b, req).(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
}

// producerOn is DescribeProducers' entry for pid on topic-part.
func producerOn(t *testing.T, b *Broker, topic string, part int32, pid int64) (kmsg.DescribeProducersResponseTopicPartitionActiveProducer, bool) {
	t.Helper()
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{part}
	req.Topics = append(req.Topics, rt)
	for _, p := range serve(t, b, req).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ActiveProducers {
		if p.ProducerID == pid {
			return p, true
		}
	}
	return kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}, false
}

func txnVersionFinalized(t *testing.T, b *Broker) (level int16, epoch int64) {
	t.Helper()
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "t", "1"
	if v3 := serve(t, b, av).(*kmsg.ApiVersionsResponse); len(v3.SupportedFeatures) != 0 {
		// Kafka lists no range starting at 0 before v4 (KIP-1022).
		t.Fatalf("ApiVersions v3 lists supported features %+v", v3.SupportedFeatures)
	}
	av.Version = 4
	resp := serve(t, b, av).(*kmsg.ApiVersionsResponse)
	supported := false
	for _, f := range resp.SupportedFeatures {
		if f.Name == "transaction.version" {
			supported = f.MinVersion == 0 && f.MaxVersion == 2
		}
	}
	if !supported {
		t.Fatalf("transaction.version not supported 0-2: %+v", resp.SupportedFeatures)
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "transaction.version" {
			return f.MaxVersionLevel, resp.FinalizedFeaturesEpoch
		}
	}
	return 0, resp.FinalizedFeaturesEpoch
}

func updateTxnVersion(t *testing.T, b *Broker, version int16, level int16, upgradeType int8, validateOnly bool) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version, req.ValidateOnly = version, validateOnly
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", level, upgradeType
	u.AllowDowngrade = upgradeType >= 2
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	resp := serve(t, b, req).(*kmsg.UpdateFeaturesResponse)
	if version < 2 {
		return resp.Results[0].ErrorCode, deref(resp.Results[0].ErrorMessage)
	}
	return resp.ErrorCode, deref(resp.ErrorMessage)
}

// A TV2 transaction from start to end: Produce v12 adds its partition,
// EndTxn v5 bumps the epoch and its markers carry the bumped one, retries
// and the opposite decision, the old epoch fenced, the empty abort,
// TxnOffsetCommit v5 adding the group, and the older versions' answers
// beside them.
func TestTxnV2Answers(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "a", 2)
	if level, epoch := txnVersionFinalized(t, b); level != 2 || epoch != 1 {
		t.Fatalf("transaction.version %d epoch %d, want 2 at epoch 1", level, epoch)
	}
	ir := initTxn(t, b, "v2", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch

	wantCode(t, "implicit add", txnProduceV(t, b, 12, "v2", "a", 0, txnBatch(t, pid, e, 0, "c0")).ErrorCode, nil)
	wantCode(t, "implicit add, second partition", txnProduceV(t, b, 12, "v2", "a", 1, txnBatch(t, pid, e, 0, "c1")).ErrorCode, nil)
	if d := describeTxn(t, b, "v2"); d.State != "Ongoing" || len(d.Topics) != 1 || len(d.Topics[0].Partitions) != 2 {
		t.Fatalf("after implicit adds: %+v", d)
	}
	er := endTxnV(t, b, 5, "v2", pid, e, true)
	wantCode(t, "commit v5", er.ErrorCode, nil)
	if er.ProducerID != pid || er.ProducerEpoch != e+1 {
		t.Fatalf("commit v5 answered %d/%d, want %d/%d", er.ProducerID, er.ProducerEpoch, pid, e+1)
	}
	// The markers carry the bumped epoch and coordinator epoch 0.
	if p, ok := producerOn(t, b, "a", 0, pid); !ok || p.ProducerEpoch != int32(e+1) || p.CoordinatorEpoch != 0 || p.CurrentTxnStartOffset != -1 {
		t.Fatalf("producer on a-0 after commit: %+v (known %v)", p, ok)
	}
	if d := describeTxn(t, b, "v2"); d.State != "CompleteCommit" || d.ProducerEpoch != e+1 {
		t.Fatalf("after commit: %+v", d)
	}

	// Retries of that EndTxn name the epoch before the bump.
	er = endTxnV(t, b, 5, "v2", pid, e, true)
	wantCode(t, "commit v5 retried", er.ErrorCode, nil)
	if er.ProducerEpoch != e+1 {
		t.Fatalf("retry answered epoch %d, want %d", er.ProducerEpoch, e+1)
	}
	wantCode(t, "retry with the other decision", endTxnV(t, b, 5, "v2", pid, e, false).ErrorCode, kerr.InvalidTxnState)
	wantCode(t, "retry as v4", endTxnV(t, b, 4, "v2", pid, e, true).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "produce at the old epoch", txnProduceV(t, b, 12, "v2", "a", 0, txnBatch(t, pid, e, 1, "late")).ErrorCode, kerr.InvalidProducerEpoch)
	wantCode(t, "produce v11 at the old epoch", txnProduceV(t, b, 11, "v2", "a", 0, txnBatch(t, pid, e, 1, "late")).ErrorCode, kerr.InvalidProducerEpoch)

	// Nothing open: a commit is INVALID_TXN_STATE, an abort bumps.
	e++
	wantCode(t, "empty commit", endTxnV(t, b, 5, "v2", pid, e, true).ErrorCode, kerr.InvalidTxnState)
	er = endTxnV(t, b, 5, "v2", pid, e, false)
	if er.ErrorCode != 0 || er.ProducerEpoch != e+1 {
		t.Fatalf("empty abort: %v epoch %d, want epoch %d", kerr.ErrorForCode(er.ErrorCode), er.ProducerEpoch, e+1)
	}
	if er = endTxnV(t, b, 5, "v2", pid, e, false); er.ErrorCode != 0 || er.ProducerEpoch != e+1 {
		t.Fatalf("empty abort retried: %v epoch %d", kerr.ErrorForCode(er.ErrorCode), er.ProducerEpoch)
	}
	e++
	wantCode(t, "a future epoch", endTxnV(t, b, 5, "v2", pid, e+5, false).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "another producer id", endTxnV(t, b, 5, "v2", pid+100, e, false).ErrorCode, kerr.InvalidProducerIDMapping)

	// TxnOffsetCommit v5 adds the group; v4 and v3 do not.
	wantCode(t, "produce", txnProduceV(t, b, 12, "v2", "a", 0, txnBatch(t, pid, e, 0, "c2")).ErrorCode, nil)
	wantCode(t, "offsets v4 without AddOffsetsToTxn", txnOffsetCommitV(t, b, 4, "v2", "g", pid, e, "a", 7), kerr.TransactionAbortable)
	wantCode(t, "offsets v3 without AddOffsetsToTxn", txnOffsetCommitV(t, b, 3, "v2", "g", pid, e, "a", 7), kerr.InvalidTxnState)
	wantCode(t, "offsets v5", txnOffsetCommitV(t, b, 5, "v2", "g", pid, e, "a", 7), nil)
	wantCode(t, "offsets v5 at a future epoch", txnOffsetCommitV(t, b, 5, "v2", "g", pid, e+3, "a", 7), kerr.InvalidProducerEpoch)
	if d := describeTxn(t, b, "v2"); d.State != "Ongoing" {
		t.Fatalf("after the v5 offset commit: %+v", d)
	}
	wantCode(t, "commit with offsets", endTxnV(t, b, 5, "v2", pid, e, true).ErrorCode, nil)
	wantCode(t, "offsets v5 at the old epoch", txnOffsetCommitV(t, b, 5, "v2", "g", pid, e, "a", 8), kerr.InvalidProducerEpoch)
	e++
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 7, "g"
	oft := kmsg.NewOffsetFetchRequestTopic()
	oft.Topic, oft.Partitions = "a", []int32{0}
	of.Topics = append(of.Topics, oft)
	if got := serve(t, b, of).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0].Offset; got != 7 {
		t.Fatalf("committed offset %d, want 7", got)
	}

	// The older flow on the same ID, after TV2 transactions: a partition
	// not added is refused by version, EndTxn v4 keeps the epoch.
	wantCode(t, "produce v11 not added", txnProduceV(t, b, 11, "v2", "a", 1, txnBatch(t, pid, e, 0, "x")).ErrorCode, kerr.TransactionAbortable)
	wantCode(t, "add v3", addPartitionV3(t, b, "v2", pid, e, "a", 1), nil)
	wantCode(t, "produce v11 added", txnProduceV(t, b, 11, "v2", "a", 1, txnBatch(t, pid, e, 0, "c3")).ErrorCode, nil)
	wantCode(t, "commit v4", endTxnV(t, b, 4, "v2", pid, e, true).ErrorCode, nil)
	wantCode(t, "commit v4 retried", endTxnV(t, b, 4, "v2", pid, e, true).ErrorCode, nil)
	if d := describeTxn(t, b, "v2"); d.State != "CompleteCommit" || d.ProducerEpoch != e {
		t.Fatalf("after a v4 commit: %+v, want epoch %d kept", d, e)
	}

	// InitProducerId naming the epoch before the last bump is a retry:
	// the current epoch, not bumped again.
	if r := initTxn(t, b, "v2", 5, 60000, pid, e-1); r.ErrorCode != 0 || r.ProducerEpoch != e {
		t.Fatalf("init retry: %v epoch %d, want %d", kerr.ErrorForCode(r.ErrorCode), r.ProducerEpoch, e)
	}
	if r := initTxn(t, b, "v2", 5, 60000, pid, e); r.ErrorCode != 0 || r.ProducerEpoch != e+1 {
		t.Fatalf("init: %v epoch %d, want %d", kerr.ErrorForCode(r.ErrorCode), r.ProducerEpoch, e+1)
	}
}

// transaction.version is set by UpdateFeatures as Kafka's controller sets
// it; below 2 the TV2 versions are UNSUPPORTED_VERSION and the older flow
// works; the level survives a restart.
func TestTxnVersionFeature(t *testing.T) {
	mem := vfs.NewMem()
	b := newTestBroker(t, func(c *Config) { c.FS = mem; c.Sync = logstore.SyncPolicy{Mode: logstore.SyncAlways} })
	createTopic(t, b, "a", 1)

	code, msg := updateTxnVersion(t, b, 2, 0, 1, false)
	wantCode(t, "downgrade as an upgrade", code, kerr.InvalidUpdateVersion)
	if want := "The update failed for all features since the following feature had an error: Invalid update version 0 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."; msg != want {
		t.Fatalf("message %q", msg)
	}
	code, msg = updateTxnVersion(t, b, 2, 3, 1, false)
	wantCode(t, "beyond the supported", code, kerr.InvalidUpdateVersion)
	if want := "The update failed for all features since the following feature had an error: Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2"; msg != want {
		t.Fatalf("message %q", msg)
	}
	code, _ = updateTxnVersion(t, b, 2, -1, 1, false)
	wantCode(t, "below zero", code, kerr.InvalidUpdateVersion)
	code, _ = updateTxnVersion(t, b, 1, 1, 1, false)
	wantCode(t, "v1 downgrade as an upgrade", code, kerr.InvalidUpdateVersion)
	code, _ = updateTxnVersion(t, b, 2, 0, 2, true)
	wantCode(t, "validate only", code, nil)
	if level, _ := txnVersionFinalized(t, b); level != 2 {
		t.Fatalf("validate_only changed the level to %d", level)
	}
	code, _ = updateTxnVersion(t, b, 2, 0, 2, false)
	wantCode(t, "safe downgrade", code, nil)
	if level, epoch := txnVersionFinalized(t, b); level != 0 || epoch != 2 {
		t.Fatalf("after the downgrade: level %d epoch %d", level, epoch)
	}

	ir := initTxn(t, b, "t0", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch
	wantCode(t, "produce v12 at TV0", txnProduceV(t, b, 12, "t0", "a", 0, txnBatch(t, pid, e, 0, "x")).ErrorCode, kerr.UnsupportedVersion)
	wantCode(t, "offsets v5 at TV0", txnOffsetCommitV(t, b, 5, "t0", "g", pid, e, "a", 1), kerr.UnsupportedVersion)
	wantCode(t, "end v5 at TV0", endTxnV(t, b, 5, "t0", pid, e, false).ErrorCode, kerr.UnsupportedVersion)
	wantCode(t, "add v3", addPartitionV3(t, b, "t0", pid, e, "a", 0), nil)
	wantCode(t, "produce v11", txnProduceV(t, b, 11, "t0", "a", 0, txnBatch(t, pid, e, 0, "x")).ErrorCode, nil)
	wantCode(t, "commit v4", endTxnV(t, b, 4, "t0", pid, e, true).ErrorCode, nil)

	b, mem = crashRestart(t, mem, b)
	if level, epoch := txnVersionFinalized(t, b); level != 0 || epoch != 2 {
		t.Fatalf("after a restart: level %d epoch %d", level, epoch)
	}
	code, _ = updateTxnVersion(t, b, 2, 2, 1, false)
	wantCode(t, "upgrade", code, nil)
	b, _ = crashRestart(t, mem, b)
	if level, epoch := txnVersionFinalized(t, b); level != 2 || epoch != 3 {
		t.Fatalf("after the upgrade and a restart: level %d epoch %d", level, epoch)
	}
	wantCode(t, "end v5 at TV2", endTxnV(t, b, 5, "t0", pid, e, false).ErrorCode, nil)
}

// WriteTxnMarkers checks the coordinator epoch as a partition leader
// does: older than the producer's last marker there is
// TRANSACTION_COORDINATOR_FENCED (after the producer epoch's own check),
// and a transaction version 2 marker (v2, KIP-1228) must carry a newer
// epoch than the producer's unless it repeats a finished one.
func TestWriteTxnMarkersCoordinatorEpoch(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "m", 2)
	marker := func(version int16, pid int64, epoch int16, coordinatorEpoch int32, tv int8, part int32) int16 {
		t.Helper()
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.Version = version
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.TransactionVersion = pid, epoch, coordinatorEpoch, tv
		m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "m", Partitions: []int32{part}}}
		req.Markers = append(req.Markers, m)
		return serve(t, b, req).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	const fake = 900000
	wantCode(t, "first marker", marker(1, fake, 3, 5, 0, 0), nil)
	if p, ok := producerOn(t, b, "m", 0, fake); !ok || p.ProducerEpoch != 3 || p.CoordinatorEpoch != 5 {
		t.Fatalf("producer after a marker: %+v (known %v)", p, ok)
	}
	wantCode(t, "older coordinator", marker(1, fake, 3, 4, 0, 0), kerr.TransactionCoordinatorFenced)
	wantCode(t, "same coordinator", marker(1, fake, 3, 5, 0, 0), nil)
	wantCode(t, "older epoch, newer coordinator", marker(1, fake, 2, 9, 0, 0), kerr.InvalidProducerEpoch)
	wantCode(t, "older epoch, older coordinator", marker(1, fake, 2, 1, 0, 0), kerr.InvalidProducerEpoch)
	wantCode(t, "newer epoch, older coordinator", marker(1, fake, 4, 1, 0, 0), kerr.TransactionCoordinatorFenced)
	if p, _ := producerOn(t, b, "m", 0, fake); p.ProducerEpoch != 3 || p.CoordinatorEpoch != 5 {
		t.Fatalf("a refused marker changed the producer: %+v", p)
	}
	wantCode(t, "TV2, newer epoch", marker(2, fake, 4, 6, 2, 0), nil)
	wantCode(t, "TV2, newer again", marker(2, fake, 5, 6, 2, 0), nil)
	wantCode(t, "TV2, repeated (a retry)", marker(2, fake, 5, 6, 2, 0), nil)
	if p, _ := producerOn(t, b, "m", 0, fake); p.ProducerEpoch != 5 || p.CoordinatorEpoch != 6 {
		t.Fatalf("after TV2 markers: %+v", p)
	}

	// With data open, a TV2 marker at the data's epoch is refused; a
	// legacy one is taken.
	ir := initTxn(t, b, "mk", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch
	wantCode(t, "produce", txnProduceV(t, b, 12, "mk", "m", 1, txnBatch(t, pid, e, 0, "x")).ErrorCode, nil)
	wantCode(t, "TV2 at the open epoch", marker(2, pid, e, 0, 2, 1), kerr.InvalidProducerEpoch)
	wantCode(t, "TV2 field ignored at v1", marker(1, pid, e, 0, 2, 1), nil)
	if p, _ := producerOn(t, b, "m", 1, pid); p.CoordinatorEpoch != 0 || p.CurrentTxnStartOffset != -1 {
		t.Fatalf("after the legacy marker: %+v", p)
	}
	wantCode(t, "coordinator epoch -1 after 0", marker(2, pid, e+1, -1, 2, 1), kerr.TransactionCoordinatorFenced)
	wantCode(t, "the producer's abort", endTxnV(t, b, 5, "mk", pid, e, false).ErrorCode, nil)
	if p, _ := producerOn(t, b, "m", 1, pid); p.ProducerEpoch != int32(e+1) || p.CoordinatorEpoch != 0 {
		t.Fatalf("after the producer's abort: %+v", p)
	}
}

// EndTxn v5 at the last epoch a producer ID has: the markers take it,
// and the answer names a new producer ID at epoch 0; a retry names the
// old ID and gets the same answer.
func TestTxnV2EpochOverflow(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "o", 1)
	ir := initTxn(t, b, "ov", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch
	// Empty aborts bump one epoch each, up to the last a client gets.
	for e < maxProducerEpoch-1 {
		er := endTxnV(t, b, 5, "ov", pid, e, false)
		if er.ErrorCode != 0 || er.ProducerID != pid {
			t.Fatalf("abort at epoch %d: %v %d/%d", e, kerr.ErrorForCode(er.ErrorCode), er.ProducerID, er.ProducerEpoch)
		}
		e = er.ProducerEpoch
	}
	wantCode(t, "produce at the last epoch", txnProduceV(t, b, 12, "ov", "o", 0, txnBatch(t, pid, e, 0, "x")).ErrorCode, nil)
	er := endTxnV(t, b, 5, "ov", pid, e, true)
	if er.ErrorCode != 0 || er.ProducerID == pid || er.ProducerEpoch != 0 {
		t.Fatalf("commit at the last epoch: %v %d/%d, want a new producer id at 0", kerr.ErrorForCode(er.ErrorCode), er.ProducerID, er.ProducerEpoch)
	}
	if p, ok := producerOn(t, b, "o", 0, pid); !ok || p.ProducerEpoch != maxProducerEpoch {
		t.Fatalf("the old producer's marker: %+v (known %v), want epoch %d", p, ok, maxProducerEpoch)
	}
	retry := endTxnV(t, b, 5, "ov", pid, e, true)
	if retry.ErrorCode != 0 || retry.ProducerID != er.ProducerID || retry.ProducerEpoch != 0 {
		t.Fatalf("retry: %v %d/%d", kerr.ErrorForCode(retry.ErrorCode), retry.ProducerID, retry.ProducerEpoch)
	}
	wantCode(t, "the old id at its old epoch", txnProduceV(t, b, 12, "ov", "o", 0, txnBatch(t, pid, e, 1, "y")).ErrorCode, kerr.InvalidProducerIDMapping)
	wantCode(t, "the new id", txnProduceV(t, b, 12, "ov", "o", 0, txnBatch(t, er.ProducerID, 0, 0, "z")).ErrorCode, nil)
	wantCode(t, "commit under the new id", endTxnV(t, b, 5, "ov", er.ProducerID, 0, true).ErrorCode, nil)
}

const maxProducerEpoch = 32767

// AddPartitionsToTxn v4+, the broker-to-broker form: adds, or with
// verify_only checks, several transactions at once; CLUSTER_ACTION with
// the authorizer on.
func TestAddPartitionsToTxnV5(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "v5", 2)
	ir := initTxn(t, b, "b2b", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch
	apt := func(id string, pid int64, epoch int16, verify bool, topic string, parts ...int32) []int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 5
		tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = id, pid, epoch, verify
		tr.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: topic, Partitions: parts}}
		req.Transactions = append(req.Transactions, tr)
		resp := serve(t, b, req).(*kmsg.AddPartitionsToTxnResponse)
		if resp.ErrorCode != 0 || len(resp.Transactions) != 1 || resp.Transactions[0].TransactionalID != id {
			t.Fatalf("answer shape: %+v", resp)
		}
		var codes []int16
		for _, p := range resp.Transactions[0].Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		return codes
	}
	same := func(what string, got []int16, want ...error) {
		t.Helper()
		for i := range want {
			wantCode(t, what, got[i], want[i])
		}
	}
	same("verify before", apt("b2b", pid, e, true, "v5", 0, 1), kerr.TransactionAbortable, kerr.TransactionAbortable)
	same("add", apt("b2b", pid, e, false, "v5", 0), nil)
	same("verify after", apt("b2b", pid, e, true, "v5", 0, 1), nil, kerr.TransactionAbortable)
	same("verify, future epoch", apt("b2b", pid, e+1, true, "v5", 0), kerr.ProducerFenced)
	same("verify, other producer", apt("b2b", pid+7, e, true, "v5", 0), kerr.InvalidProducerIDMapping)
	same("verify, unknown id", apt("b2b-none", pid, e, true, "v5", 0), kerr.InvalidProducerIDMapping)
	same("add, unknown id", apt("b2b-none", pid, e, false, "v5", 0), kerr.InvalidProducerIDMapping)
	same("verify, unknown topic", apt("b2b", pid, e, true, "nosuch", 0), kerr.UnknownTopicOrPartition)
	same("verify, an unknown partition beside a known one", apt("b2b", pid, e, true, "v5", 0, 99), kerr.OperationNotAttempted, kerr.UnknownTopicOrPartition)
	if d := describeTxn(t, b, "b2b"); d.State != "Ongoing" || len(d.Topics) != 1 || len(d.Topics[0].Partitions) != 1 {
		t.Fatalf("after the v5 add: %+v", d)
	}
	wantCode(t, "commit what v5 added", endTxnV(t, b, 4, "b2b", pid, e, true).ErrorCode, nil)

	// With the authorizer on, v4+ needs CLUSTER_ACTION.
	ab, addr := aclBroker(t)
	createTopic(t, ab, "v5", 1)
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "b2b", ProducerID: 1, ProducerEpoch: 0,
		Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "v5", Partitions: []int32{0}}}}}
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), 5)
	raw, err := userClient(t, addr, "alice", kgo.MaxVersions(vs)).Broker(1).Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := raw.(*kmsg.AddPartitionsToTxnResponse)
	if resp.Version != 5 || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("v%d without CLUSTER_ACTION: %v", resp.Version, kerr.ErrorForCode(resp.ErrorCode))
	}
}

// A new producer fences a TV2 transaction as Kafka does: the abort
// markers carry the next epoch and the new producer gets the one after,
// so the old producer's EndTxn v5 at its epoch is no retry. A transaction
// the timeout aborted, bumping once, takes its producer's abort as one.
func TestTxnV2FencingAndTimeout(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "f", 1)
	ir := initTxn(t, b, "f", 5, 60000, -1, -1)
	pid, e := ir.ProducerID, ir.ProducerEpoch
	wantCode(t, "produce", txnProduceV(t, b, 12, "f", "f", 0, txnBatch(t, pid, e, 0, "zombie")).ErrorCode, nil)
	if r := initTxn(t, b, "f", 5, 60000, -1, -1); r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != e+2 {
		t.Fatalf("the new producer: %v %d/%d, want %d/%d", kerr.ErrorForCode(r.ErrorCode), r.ProducerID, r.ProducerEpoch, pid, e+2)
	}
	if p, _ := producerOn(t, b, "f", 0, pid); p.ProducerEpoch != int32(e+1) || p.CurrentTxnStartOffset != -1 {
		t.Fatalf("the fenced transaction's marker: %+v, want epoch %d", p, e+1)
	}
	wantCode(t, "the old producer commits", endTxnV(t, b, 5, "f", pid, e, true).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "the old producer aborts", endTxnV(t, b, 5, "f", pid, e, false).ErrorCode, kerr.ProducerFenced)
	if d := describeTxn(t, b, "f"); d.State != "Empty" || d.ProducerEpoch != e+2 {
		t.Fatalf("after the fencing: %+v", d)
	}

	ir = initTxn(t, b, "slow", 5, 100, -1, -1)
	pid, e = ir.ProducerID, ir.ProducerEpoch
	wantCode(t, "produce", txnProduceV(t, b, 12, "slow", "f", 0, txnBatch(t, pid, e, 0, "late")).ErrorCode, nil)
	deadline := time.Now().Add(10 * time.Second)
	for describeTxn(t, b, "slow").State != "CompleteAbort" {
		if time.Now().After(deadline) {
			t.Fatalf("not aborted on timeout: %+v", describeTxn(t, b, "slow"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	wantCode(t, "commit after the timeout", endTxnV(t, b, 5, "slow", pid, e, true).ErrorCode, kerr.InvalidTxnState)
	if er := endTxnV(t, b, 5, "slow", pid, e, false); er.ErrorCode != 0 || er.ProducerEpoch != e+1 {
		t.Fatalf("abort after the timeout: %v epoch %d, want %d", kerr.ErrorForCode(er.ErrorCode), er.ProducerEpoch, e+1)
	}
	wantCode(t, "the next transaction", txnProduceV(t, b, 12, "slow", "f", 0, txnBatch(t, pid, e+1, 0, "again")).ErrorCode, nil)
}
