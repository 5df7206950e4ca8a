package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/txn"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// readAll consumes topic from the start at an isolation level until n
// records arrived, then checks that no more arrive for a short while.
func readAll(t *testing.T, addr, topic string, committed bool, n int) []*kgo.Record {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records (committed=%v)", len(out), n, committed)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		out = append(out, fs.Records()...)
	}
	short, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	out = append(out, cl.PollFetches(short).Records()...)
	if len(out) != n {
		t.Fatalf("read %d records, want %d (committed=%v)", len(out), n, committed)
	}
	return out
}

func txnClient(t *testing.T, addr, id string, opts ...kgo.Opt) *kgo.Client {
	return newClient(t, addr, append([]kgo.Opt{kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(10 * time.Second)}, opts...)...)
}

func produceTxn(t *testing.T, cl *kgo.Client, topic string, tag string, parts []int32, n int, commit bool) {
	t.Helper()
	ctx := testCtx(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := &kgo.Record{Topic: topic, Partition: parts[i%len(parts)], Value: fmt.Appendf(nil, "%s-%d", tag, i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end txn (commit=%v): %v", commit, err)
	}
}

// Committed transactions are visible to read_committed consumers, aborted
// ones only to read_uncommitted; the end offset counts one control marker
// per transaction and partition; the LSO holds back an open transaction.
func TestTxnCommitAbortIsolation(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "tx", 2, nil)
	cl := txnClient(t, addr, "tid-iso")
	produceTxn(t, cl, "tx", "a", []int32{0, 1}, 6, true)
	produceTxn(t, cl, "tx", "b", []int32{0, 1}, 4, false)
	produceTxn(t, cl, "tx", "c", []int32{0}, 3, true)

	got := readAll(t, addr, "tx", true, 9)
	for _, r := range got {
		if r.Value[0] == 'b' {
			t.Fatalf("aborted record %s visible to read_committed", r.Value)
		}
	}
	readAll(t, addr, "tx", false, 13)

	ends, err := adm.ListEndOffsets(testCtx(t), "tx")
	if err != nil {
		t.Fatal(err)
	}
	// p0: 3+2+3 records + 3 markers; p1: 3+2 records + 2 markers.
	if o, _ := ends.Lookup("tx", 0); o.Offset != 11 {
		t.Fatalf("end offset p0 %d, want 11", o.Offset)
	}
	if o, _ := ends.Lookup("tx", 1); o.Offset != 7 {
		t.Fatalf("end offset p1 %d, want 7", o.Offset)
	}

	// An open transaction: its data is past the LSO.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "tx", Partition: 1, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := b.lookupTopic("tx", [16]byte{}).partition(1)
	if lso, hw := b.storeOf(p).lastStable(), p.log.HighWatermark(); lso != 7 || hw != 8 {
		t.Fatalf("open txn: lso %d hw %d, want 7 and 8", lso, hw)
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.IsolationLevel = 5, 1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "tx"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp = 1, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if o := serve(t, b, lo).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset; o != 7 {
		t.Fatalf("read_committed latest offset %d, want 7", o)
	}
	readAll(t, addr, "tx", true, 9)
	if err := cl.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	readAll(t, addr, "tx", true, 10)
}

// A second producer with the same transactional ID fences the first: its
// open transaction is aborted and its writes and commit fail.
func TestTxnZombieFenced(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	mustCreate(t, newAdmin(t, addr), "z", 1, nil)
	old := txnClient(t, addr, "tid-z")
	if err := old.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := old.ProduceSync(testCtx(t), &kgo.Record{Topic: "z", Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := txnClient(t, addr, "tid-z")
	produceTxn(t, fresh, "z", "new", []int32{0}, 2, true)

	err := old.ProduceSync(testCtx(t), &kgo.Record{Topic: "z", Value: []byte("zombie2")}).FirstErr()
	if err == nil {
		err = old.EndTransaction(testCtx(t), kgo.TryCommit)
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie not fenced: %v", err)
	}
	for _, r := range readAll(t, addr, "z", true, 2) {
		if string(r.Value[:3]) != "new" {
			t.Fatalf("zombie record %s committed", r.Value)
		}
	}
}

// A transaction that outlives its timeout is aborted by the broker, and
// its producer's epoch is bumped so it cannot commit.
func TestTxnTimeoutAborted(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	mustCreate(t, newAdmin(t, addr), "to", 1, nil)
	cl := txnClient(t, addr, "tid-to", kgo.TransactionTimeout(300*time.Millisecond))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "to", Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		in, _ := b.txns.Transaction("tid-to")
		st := in.State
		if st == txn.CompleteAbort {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction still %s", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cl.EndTransaction(testCtx(t), kgo.TryCommit); err == nil {
		t.Fatal("commit of a timed-out transaction succeeded")
	}
	readAll(t, addr, "to", false, 1)
	readAll(t, addr, "to", true, 0)
}

func initTxn(t *testing.T, b *Broker, id string, version int16, timeoutMs int32, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, kmsg.StringPtr(id), timeoutMs
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return serve(t, b, req).(*kmsg.InitProducerIDResponse)
}

// Protocol-level errors of the transactional APIs, by version.
func TestTxnProtocolErrors(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "e", 1)
	wantCode(t, "timeout 0", initTxn(t, b, "x", 4, 0, -1, -1).ErrorCode, kerr.InvalidTransactionTimeout)
	wantCode(t, "timeout too large", initTxn(t, b, "x", 4, 16*60*1000, -1, -1).ErrorCode, kerr.InvalidTransactionTimeout)
	wantCode(t, "empty id", initTxn(t, b, "", 4, 1000, -1, -1).ErrorCode, kerr.InvalidRequest)
	r := initTxn(t, b, "x", 4, 1000, -1, -1)
	wantCode(t, "init", r.ErrorCode, nil)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	r2 := initTxn(t, b, "x", 4, 1000, -1, -1)
	if r2.ProducerID != pid || r2.ProducerEpoch != epoch+1 {
		t.Fatalf("re-init: pid %d epoch %d, want %d %d", r2.ProducerID, r2.ProducerEpoch, pid, epoch+1)
	}
	// KIP-360 callers naming a stale epoch: PRODUCER_FENCED from v4,
	// INVALID_PRODUCER_EPOCH at v3.
	// The current epoch (or the one before, a retry) may re-initialize.
	r3 := initTxn(t, b, "x", 4, 1000, pid, epoch+1)
	wantCode(t, "kip-360 re-init", r3.ErrorCode, nil)
	wantCode(t, "stale v4", initTxn(t, b, "x", 4, 1000, pid, epoch).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "stale v3", initTxn(t, b, "x", 3, 1000, pid, epoch).ErrorCode, kerr.InvalidProducerEpoch)
	epoch = r3.ProducerEpoch - 1 // from here on, epoch+1 is current

	end := func(version int16, e int16, commit bool) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = version, "x", pid, e, commit
		return serve(t, b, req).(*kmsg.EndTxnResponse).ErrorCode
	}
	wantCode(t, "end without txn", end(3, epoch+1, true), kerr.InvalidTxnState)
	wantCode(t, "end old epoch v2", end(2, epoch, true), kerr.ProducerFenced)
	wantCode(t, "end old epoch v1", end(1, epoch, true), kerr.InvalidProducerEpoch)

	add := func(version int16, topic string, e int16) *kmsg.AddPartitionsToTxnResponse {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = version, "x", pid, e
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "e", Partitions: []int32{0}}}
		if topic != "e" {
			req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: topic, Partitions: []int32{0}})
		}
		return serve(t, b, req).(*kmsg.AddPartitionsToTxnResponse)
	}
	ar := add(3, "missing", epoch+1)
	wantCode(t, "add known beside unknown", ar.Topics[0].Partitions[0].ErrorCode, kerr.OperationNotAttempted)
	wantCode(t, "add unknown", ar.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "add fenced", add(3, "e", epoch).Topics[0].Partitions[0].ErrorCode, kerr.ProducerFenced)
	wantCode(t, "add", add(3, "e", epoch+1).Topics[0].Partitions[0].ErrorCode, nil)

	// A transactional batch for a partition not in the transaction.
	createTopic(t, b, "other", 1)
	batch := txnBatch(t, pid, epoch+1, 0, "v")
	// Kafka's verification: TRANSACTION_ABORTABLE from v11, with no
	// message; INVALID_TXN_STATE before.
	wantCode(t, "produce outside txn", txnProduce(t, b, "x", "other", 0, batch).ErrorCode, kerr.TransactionAbortable)
	v10 := produceReq(10, -1, "other", [16]byte{}, 0, batch)
	v10.TransactionID = kmsg.StringPtr("x")
	r10 := serve(t, b, v10).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	wantCode(t, "produce v10 outside txn", r10.ErrorCode, kerr.InvalidTxnState)
	if r10.ErrorMessage == nil || *r10.ErrorMessage != "Partition was not added to the transaction" {
		t.Fatalf("produce v10 outside txn: message %v", r10.ErrorMessage)
	}
	wantCode(t, "produce old epoch", txnProduce(t, b, "x", "e", 0, txnBatch(t, pid, epoch, 0, "v")).ErrorCode, kerr.InvalidProducerEpoch)
	// Kafka refuses transactional records in a request without a
	// transactional ID, whole request.
	wantCode(t, "produce without transactional id", produce(t, b, "e", 0, txnBatch(t, pid, epoch+1, 0, "v")).ErrorCode, kerr.TransactionalIDAuthorizationFailed)
	wantCode(t, "produce in txn", txnProduce(t, b, "x", "e", 0, txnBatch(t, pid, epoch+1, 0, "v")).ErrorCode, nil)
	wantCode(t, "abort", end(3, epoch+1, false), nil)
	wantCode(t, "abort retried", end(3, epoch+1, false), nil)
	wantCode(t, "commit after abort", end(3, epoch+1, true), kerr.InvalidTxnState)

	// v5 (KIP-890): every EndTxn bumps the epoch, an empty abort too;
	// Produce v12 adds its partition implicitly.
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 5, "x", pid, epoch+1
	er := serve(t, b, req).(*kmsg.EndTxnResponse)
	wantCode(t, "v5 empty abort", er.ErrorCode, nil)
	if er.ProducerEpoch != epoch+2 {
		t.Fatalf("v5 abort epoch %d, want %d", er.ProducerEpoch, epoch+2)
	}
	preq := produceReq(12, -1, "other", [16]byte{}, 0, txnBatch(t, pid, epoch+2, 0, "implicit"))
	preq.TransactionID = kmsg.StringPtr("x")
	pr := serve(t, b, preq).(*kmsg.ProduceResponse)
	wantCode(t, "produce v12 implicit add", pr.Topics[0].Partitions[0].ErrorCode, nil)
	req.ProducerEpoch, req.Commit = epoch+2, true
	er = serve(t, b, req).(*kmsg.EndTxnResponse)
	wantCode(t, "v5 commit", er.ErrorCode, nil)
	if er.ProducerEpoch != epoch+3 {
		t.Fatalf("v5 commit epoch %d, want %d", er.ProducerEpoch, epoch+3)
	}
	// A retried v5 commit carries the epoch it was sent with.
	req.ProducerEpoch = epoch + 2
	wantCode(t, "v5 commit retried", serve(t, b, req).(*kmsg.EndTxnResponse).ErrorCode, nil)
	if in, _ := b.txns.Transaction("x"); len(b.txns.abortedIn(b.lookupTopic("e", [16]byte{}).partition(0), 0, 100)) != 1 || in.State != txn.CompleteCommit {
		t.Fatal("expected one aborted txn on e-0 and a committed state")
	}
}

func txnBatch(t testing.TB, pid int64, epoch int16, seq int32, v string) []byte {
	t.Helper()
	b, err := records.AppendBatch(nil, records.BatchSpec{Transactional: true, FirstTimestamp: time.Now().UnixMilli(),
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, []records.Record{{Value: []byte(v)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TxnOffsetCommit offsets become visible to OffsetFetch only on commit;
// require_stable answers UNSTABLE_OFFSET_COMMIT meanwhile; an abort drops
// them.
func TestTxnOffsetCommitVisibility(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "in", 1)
	r := initTxn(t, b, "oc", 4, 60000, -1, -1)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	addOffsets := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOffsets.Version, addOffsets.TransactionalID, addOffsets.ProducerID, addOffsets.ProducerEpoch, addOffsets.Group = 3, "oc", pid, epoch, "g"
	commit := func(off int64) {
		wantCode(t, "add offsets", serve(t, b, addOffsets).(*kmsg.AddOffsetsToTxnResponse).ErrorCode, nil)
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = 3, "oc", "g", pid, epoch, -1
		req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "in", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: off, LeaderEpoch: -1}}}}
		wantCode(t, "txn offset commit", serve(t, b, req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, nil)
	}
	fetch := func(stable bool) (int64, int16) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group, req.RequireStable = 7, "g", stable
		req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "in", Partitions: []int32{0}}}
		p := serve(t, b, req).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]
		return p.Offset, p.ErrorCode
	}
	end := func(c bool) {
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 3, "oc", pid, epoch, c
		wantCode(t, "end", serve(t, b, req).(*kmsg.EndTxnResponse).ErrorCode, nil)
	}
	commit(42)
	if o, c := fetch(false); o != -1 || c != 0 {
		t.Fatalf("pending offset visible: %d %v", o, kerr.ErrorForCode(c))
	}
	if _, c := fetch(true); c != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable: %v", kerr.ErrorForCode(c))
	}
	end(true)
	if o, c := fetch(true); o != 42 || c != 0 {
		t.Fatalf("committed offset: %d %v", o, kerr.ErrorForCode(c))
	}
	commit(50)
	end(false)
	if o, c := fetch(true); o != 42 || c != 0 {
		t.Fatalf("after abort: %d %v", o, kerr.ErrorForCode(c))
	}
}

// crashRestart simulates power loss on a broker over a crash-simulating
// memory FS: only fsynced data survives, and a new broker starts on it.
func crashRestart(t *testing.T, mem *vfs.MemFS, old *Broker) (*Broker, *vfs.MemFS) {
	t.Helper()
	clone := mem.CrashClone()
	old.Close()
	b, err := New(Config{DataDir: "/data", FS: clone, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, clone
}

// A broker that crashes after a commit or abort decision was made durable,
// but before every marker was written, completes the transaction on
// restart: markers present once, the LSO released, aborted data in the
// rebuilt aborted index, staged offsets committed. An Ongoing transaction
// stays open across the restart (LSO held) until its producer ends it.
func TestTxnCrashMidCommitRecovers(t *testing.T) {
	mem := vfs.NewMem()
	b, err := New(Config{DataDir: "/data", FS: mem, NodeID: 1, Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "c", 2)
	begin := func(b *Broker, id string) (int64, int16) {
		r := initTxn(t, b, id, 4, 60000, -1, -1)
		wantCode(t, "init "+id, r.ErrorCode, nil)
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, r.ProducerID, r.ProducerEpoch
		req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "c", Partitions: []int32{0, 1}}}
		wantCode(t, "add", serve(t, b, req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode, nil)
		for p := int32(0); p < 2; p++ {
			wantCode(t, "produce", txnProduce(t, b, id, "c", p, txnBatch(t, r.ProducerID, r.ProducerEpoch, 0, id)).ErrorCode, nil)
		}
		return r.ProducerID, r.ProducerEpoch
	}
	// "com" decides commit and crashes after one marker; "abo" decides
	// abort and crashes before any; "open" is still open.
	pidCom, epochCom := begin(b, "com")
	pidAbo, _ := begin(b, "abo")
	pidOpen, epochOpen := begin(b, "open")
	// "com" stages an offset of group g, to be committed with it.
	addOffsets := kmsg.NewPtrAddOffsetsToTxnRequest()
	addOffsets.Version, addOffsets.TransactionalID, addOffsets.ProducerID, addOffsets.ProducerEpoch, addOffsets.Group = 3, "com", pidCom, epochCom, "g"
	wantCode(t, "add offsets", serve(t, b, addOffsets).(*kmsg.AddOffsetsToTxnResponse).ErrorCode, nil)
	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.Version, toc.TransactionalID, toc.ProducerID, toc.ProducerEpoch, toc.Group = 2, "com", pidCom, epochCom, "g"
	toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "c", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7, LeaderEpoch: -1}}}}
	wantCode(t, "txn offset commit", serve(t, b, toc).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, nil)
	p0 := b.lookupTopic("c", [16]byte{}).partition(0)
	if err := b.txns.PrepareAndStop("com", true, []txn.Partition{p0}); err != nil {
		t.Fatal(err)
	}
	if err := b.txns.PrepareAndStop("abo", false, nil); err != nil {
		t.Fatal(err)
	}

	b, mem = crashRestart(t, mem, b)
	for _, id := range []string{"com", "abo", "open"} {
		in, ok := b.txns.Transaction(id)
		want := map[string]txn.State{"com": txn.CompleteCommit, "abo": txn.CompleteAbort, "open": txn.Ongoing}[id]
		if !ok || in.State != want {
			t.Fatalf("%s after restart: %+v, want %s", id, in, want)
		}
	}
	// Each partition: 3 data batches + markers of com and abo.
	for p := int32(0); p < 2; p++ {
		part := b.lookupTopic("c", [16]byte{}).partition(p)
		if leo := part.log.LogEndOffset(); leo != 5 {
			t.Fatalf("p%d: log end %d, want 5 (a marker written twice or missing)", p, leo)
		}
		// The open txn's batch is at offset 2: the LSO stays there.
		if lso := b.storeOf(part).lastStable(); lso != 2 {
			t.Fatalf("p%d: lso %d, want 2", p, lso)
		}
		ab := b.txns.abortedIn(part, 0, 10)
		if len(ab) != 1 || ab[0].PID != pidAbo || ab[0].First != 1 {
			t.Fatalf("p%d: aborted %+v, want producer %d from offset 1", p, ab, pidAbo)
		}
	}
	if o, ok := b.groups.Committed("g", "c", 0); !ok || o.Offset != 7 {
		t.Fatalf("staged offset after recovered commit: %+v %v", o, ok)
	}

	// The open transaction commits after the restart; then a second
	// crash keeps everything, the aborted index coming from the log.
	end2 := kmsg.NewPtrEndTxnRequest()
	end2.Version, end2.TransactionalID, end2.ProducerID, end2.ProducerEpoch, end2.Commit = 3, "open", pidOpen, epochOpen, true
	wantCode(t, "commit open after restart", serve(t, b, end2).(*kmsg.EndTxnResponse).ErrorCode, nil)
	b, _ = crashRestart(t, mem, b)
	for p := int32(0); p < 2; p++ {
		part := b.lookupTopic("c", [16]byte{}).partition(p)
		if lso, hw := b.storeOf(part).lastStable(), part.log.HighWatermark(); lso != 6 || hw != 6 {
			t.Fatalf("p%d: lso %d hw %d, want 6", p, lso, hw)
		}
		if ab := b.txns.abortedIn(part, 0, 10); len(ab) != 1 || ab[0].PID != pidAbo {
			t.Fatalf("p%d: aborted index after second restart %+v", p, ab)
		}
	}
	// And read_committed over TCP sees exactly com and open, twice each.
	addr := listenOn(t, b, "127.0.0.1:0")
	got := readAll(t, addr, "c", true, 4)
	for _, r := range got {
		if string(r.Value) == "abo" {
			t.Fatal("aborted record visible")
		}
	}
	readAll(t, addr, "c", false, 6)
}

// DescribeTransactions, ListTransactions and DescribeProducers report an
// open transaction.
func TestTxnDescribeAndList(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "d", 1, nil)
	cl := txnClient(t, addr, "tid-d")
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "d", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dt, err := adm.DescribeTransactions(testCtx(t), "tid-d", "nope")
	if err != nil {
		t.Fatal(err)
	}
	d := dt["tid-d"]
	if d.Err != nil || d.State != "Ongoing" || len(d.Topics["d"]) == 0 || d.TimeoutMillis != 10000 {
		t.Fatalf("describe: %+v", d)
	}
	if !errors.Is(dt["nope"].Err, kerr.TransactionalIDNotFound) {
		t.Fatalf("describe unknown: %v", dt["nope"].Err)
	}
	lt, err := adm.ListTransactions(testCtx(t), nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lt) != 1 || lt["tid-d"].ProducerID != d.ProducerID {
		t.Fatalf("list: %+v", lt)
	}
	dp, err := adm.DescribeProducers(testCtx(t), kadm.TopicsSet{"d": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	dp.EachPartition(func(p kadm.DescribedProducersPartition) {
		for _, pr := range p.ActiveProducers {
			if pr.ProducerID == d.ProducerID && pr.CurrentTxnStartOffset == 0 {
				found = true
			}
		}
	})
	if !found {
		t.Fatalf("describe producers: %+v", dp)
	}
	if err := cl.EndTransaction(testCtx(t), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	lt, err = adm.ListTransactions(testCtx(t), nil, []string{"Ongoing"})
	if err != nil || len(lt) != 0 {
		t.Fatalf("list after abort: %v %+v", err, lt)
	}
}
