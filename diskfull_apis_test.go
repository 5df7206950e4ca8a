package minikafka_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/minikafka/minikafka"
)

// logSink collects a broker's log lines for a test to read.
type logSink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// diskFullRig is a durable broker on a data dir behind the storage fault
// switches, and a kgo client over TCP that sends requests as they are
// (Broker.Request: no retries), so each answer is the broker's own.
type diskFullRig struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	logs   *logSink
	b      *minikafka.Broker
	cl     *kgo.Client
	adm    *kadm.Client
	nodeID int32
}

func (r *diskFullRig) start() {
	t := r.t
	b, err := minikafka.Start(r.ctx, minikafka.WithDataDir(r.dir), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithStorageFaults(), minikafka.WithDurability("always"), minikafka.WithAutoCreateTopics(true),
		minikafka.WithLogger(slog.New(slog.NewTextHandler(r.logs, nil))),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:ANONYMOUS"}}))
	if err != nil {
		t.Fatal(err)
	}
	// The hand-built requests name topics (OffsetCommit v10 and
	// TxnOffsetCommit v6 use IDs) and end transactions without KIP-890's
	// epoch bump (EndTxn v5).
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(8, 8)
	vs.SetMaxKeyVersion(28, 3)
	vs.SetMaxKeyVersion(26, 3)
	vs.SetMaxKeyVersion(24, 3) // v4+ is the brokers' batched form
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.MaxVersions(vs), kgo.RequestRetries(2), kgo.RecordRetries(2),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }), kgo.MetadataMinAge(10*time.Millisecond),
		kgo.ProducerLinger(0), kgo.DisableIdempotentWrite(), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	r.b, r.cl, r.adm = b, cl, kadm.NewClient(cl)
	t.Cleanup(func() { cl.Close(); b.Close() })
	bm, err := r.adm.BrokerMetadata(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.nodeID = bm.Brokers[0].NodeID
}

func (r *diskFullRig) stop() {
	r.cl.Close()
	if err := r.b.Close(); err != nil {
		r.t.Fatalf("close: %v", err)
	}
}

func (r *diskFullRig) req(req kmsg.Request) kmsg.Response {
	r.t.Helper()
	resp, err := r.cl.Broker(int(r.nodeID)).Request(r.ctx, req)
	if err != nil {
		r.t.Fatalf("%T: %v (is the broker still up?)", req, err)
	}
	return resp
}

// failsWith runs call while the disk is full and checks its code, that a
// log line told why (the ENOSPC text), and that the broker still answers.
func (r *diskFullRig) failsWith(what string, want *kerr.Error, call func() int16) {
	r.t.Helper()
	before := len(r.logs.String())
	if c := call(); c != want.Code {
		r.t.Errorf("%s on a full disk: %v, want %v", what, kerr.ErrorForCode(c), want)
	}
	if logged := r.logs.String()[before:]; !strings.Contains(logged, "no space left on device") {
		r.t.Errorf("%s on a full disk: no log line names the cause; logged:\n%s", what, logged)
	}
	if _, err := r.adm.ApiVersions(r.ctx); err != nil {
		r.t.Fatalf("after %s: the broker does not answer: %v", what, err)
	}
}

// succeeds runs call once there is space again; a write that just failed
// may meet the log's short full-disk backoff, so it is tried a few times.
func (r *diskFullRig) succeeds(what string, call func() int16) {
	r.t.Helper()
	var c int16
	for i := 0; i < 50; i++ {
		if c = call(); c == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Errorf("%s once there is space: %v", what, kerr.ErrorForCode(c))
}

func strp(s string) *string { return &s }

// Every API that writes to disk, on a full disk, through real clients: each
// answers the code Kafka's handler of that API gives for a storage failure
// (KAFKA_STORAGE_ERROR, or NOT_COORDINATOR where Kafka's group and
// transaction coordinators answer a failed append with it, and
// COORDINATOR_LOAD_IN_PROGRESS for a producer-ID block), logs why, leaves
// the broker and other clients working, and succeeds once there is space,
// without a restart. After a restart exactly what was acknowledged is
// there.
func TestDiskFullEveryWritingAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := &diskFullRig{t: t, ctx: ctx, dir: t.TempDir(), logs: &logSink{}}
	r.start()
	faults := r.b.StorageFaults()

	// --- Before: data, a group, an open transaction, an ACL.
	if _, err := r.adm.CreateTopic(ctx, 1, 1, nil, "data"); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"spare", "data2"} {
		if _, err := r.adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	var acked []string
	for i := 0; i < 20; i++ {
		v := fmt.Sprint("v", i)
		if err := r.cl.ProduceSync(ctx, &kgo.Record{Topic: "data", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, v)
	}
	commit := func(group string, off int64) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "data"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := r.req(req).(*kmsg.OffsetCommitResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	// FindCoordinator creates __consumer_offsets on first use, as Kafka.
	if _, err := r.adm.FetchOffsets(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"g", "gd", "gx"} {
		if c := commit(g, 5); c != 0 {
			t.Fatal(kerr.ErrorForCode(c))
		}
	}
	txcl, err := kgo.NewClient(kgo.SeedBrokers(r.b.Addr()), kgo.TransactionalID("tx-1"), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer txcl.Close()
	if err := txcl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txcl.ProduceSync(ctx, &kgo.Record{Topic: "data", Value: []byte("in-txn")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := txcl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	{
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version = 3
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "tx-1", pid, epoch, "gt"
		if c := r.req(req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode; c != 0 {
			t.Fatal(kerr.ErrorForCode(c))
		}
	}
	createACL := func(principal string) int16 {
		req := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "data", kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
		return r.req(req).(*kmsg.CreateACLsResponse).Results[0].ErrorCode
	}
	deleteACL := func(principal string) (int16, int) {
		req := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, strp("data"), kmsg.ACLResourcePatternTypeLiteral
		f.Principal, f.Host, f.Operation, f.PermissionType = strp(principal), strp("*"), kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		req.Filters = append(req.Filters, f)
		res := r.req(req).(*kmsg.DeleteACLsResponse).Results[0]
		return res.ErrorCode, len(res.MatchingACLs)
	}
	if c := createACL("User:old"); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}

	// A consumer that reads while the disk is full.
	cons, err := kgo.NewClient(kgo.SeedBrokers(r.b.Addr()), kgo.ConsumeTopics("data"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()

	// --- The disk is full.
	faults.Full(true)

	r.failsWith("CreateTopics", kerr.KafkaStorageError, func() int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new1", 2, 1
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	})
	metadataAutoCreate := func(topic string) int16 {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = true
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = strp(topic)
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	r.failsWith("Metadata auto-creating a topic", kerr.KafkaStorageError, func() int16 { return metadataAutoCreate("auto1") })
	r.failsWith("Produce to a missing topic (kgo auto-creates it)", kerr.KafkaStorageError, func() int16 {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := r.cl.ProduceSync(pctx, &kgo.Record{Topic: "auto2", Value: []byte("a")}).FirstErr()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Code
		}
		t.Errorf("produce to a missing topic on a full disk: %v", err)
		return 0
	})
	createPartitions := func() int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "data", 2
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
	}
	r.failsWith("CreatePartitions", kerr.KafkaStorageError, createPartitions)
	r.failsWith("OffsetCommit", kerr.NotCoordinator, func() int16 { return commit("g", 9) })
	if resp, err := r.adm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "data", Partition: 0, Offset: 8})); err == nil && resp.Error() == nil {
		t.Error("kadm CommitOffsets on a full disk: no error")
	}
	offsetDelete := func() int16 {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = "gd"
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = "data"
		rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
		resp := r.req(req).(*kmsg.OffsetDeleteResponse)
		if resp.ErrorCode != 0 {
			return resp.ErrorCode
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	r.failsWith("OffsetDelete", kerr.NotCoordinator, offsetDelete)
	deleteGroup := func() int16 {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"gx"}
		return r.req(req).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode
	}
	r.failsWith("DeleteGroups", kerr.NotCoordinator, deleteGroup)
	txnCommit := func() int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version = 3
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tx-1", "gt", pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "data"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, 7
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	r.failsWith("TxnOffsetCommit", kerr.NotCoordinator, txnCommit)
	r.failsWith("CreateAcls", kerr.KafkaStorageError, func() int16 { return createACL("User:new") })
	r.failsWith("DeleteAcls", kerr.KafkaStorageError, func() int16 { c, _ := deleteACL("User:old"); return c })
	deleteRecords := func(before int64) int16 {
		req := kmsg.NewPtrDeleteRecordsRequest()
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = "data"
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = 0, before
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
	}
	// DeleteRecords is what frees space on the full partition itself: it
	// deletes the segments below the new start and saves that start
	// again later (logstore), as Kafka writes its checkpoint later.
	before := len(r.logs.String())
	if c := deleteRecords(1); c != 0 {
		t.Errorf("DeleteRecords on a full disk: %v, want it to free space", kerr.ErrorForCode(c))
	}
	if logged := r.logs.String()[before:]; !strings.Contains(logged, "no space left on device") {
		t.Errorf("DeleteRecords on a full disk: the unsaved log start is not logged:\n%s", logged)
	}
	alterQuota := func() int16 {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		e := kmsg.NewAlterClientQuotasRequestEntry()
		ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ent.Type, ent.Name = "client-id", strp("slow")
		e.Entity = append(e.Entity, ent)
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "producer_byte_rate", 1<<20
		e.Ops = append(e.Ops, op)
		req.Entries = append(req.Entries, e)
		return r.req(req).(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode
	}
	r.failsWith("AlterClientQuotas", kerr.KafkaStorageError, alterQuota)
	alterScram := func() int16 {
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations = "alice", 1, 4096
		u.Salt, u.SaltedPassword = []byte("salt-salt-salt"), []byte("0123456789abcdef0123456789abcdef")
		req.Upsertions = append(req.Upsertions, u)
		return r.req(req).(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode
	}
	r.failsWith("AlterUserScramCredentials", kerr.KafkaStorageError, alterScram)
	initTxnID := func(id string) int16 {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = strp(id), 60000
		return r.req(req).(*kmsg.InitProducerIDResponse).ErrorCode
	}
	r.failsWith("InitProducerId (transactional)", kerr.NotCoordinator, func() int16 { return initTxnID("tx-2") })
	r.failsWith("InitProducerId (idempotent)", kerr.CoordinatorLoadInProgress, func() int16 {
		// Producer IDs are recorded a block at a time: run through the
		// block at hand until one needs writing.
		for i := 0; i < 5000; i++ {
			if c := r.req(kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse).ErrorCode; c != 0 {
				return c
			}
		}
		return 0
	})
	endTxn := func() int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.Version = 3
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "tx-1", pid, epoch, true
		return r.req(req).(*kmsg.EndTxnResponse).ErrorCode
	}
	addPartitions := func() int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "tx-1", pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "data2", []int32{0}
		req.Topics = append(req.Topics, rt)
		return r.req(req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
	}
	r.failsWith("AddPartitionsToTxn", kerr.NotCoordinator, addPartitions)
	addOffsets := func() int16 {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "tx-1", pid, epoch, "gt2"
		return r.req(req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	r.failsWith("AddOffsetsToTxn", kerr.NotCoordinator, addOffsets)
	r.failsWith("EndTxn", kerr.NotCoordinator, endTxn)
	r.failsWith("Produce", kerr.KafkaStorageError, func() int16 {
		err := r.cl.ProduceSync(ctx, &kgo.Record{Topic: "data", Value: []byte("refused")}).FirstErr()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Code
		}
		t.Errorf("produce on a full disk: %v", err)
		return 0
	})

	// Other clients go on: reads, metadata, deleting a topic (which
	// frees space, as in Kafka).
	seen := 0
	for seen < len(acked) {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consuming while the disk is full (%d of %d): %v", seen, len(acked), err)
		}
		seen += fs.NumRecords()
	}
	if _, err := r.adm.ListTopics(ctx); err != nil {
		t.Fatalf("metadata while the disk is full: %v", err)
	}
	if resp, err := r.adm.DeleteTopics(ctx, "spare"); err != nil || resp.Error() != nil {
		t.Fatalf("DeleteTopics while the disk is full: %v %v", err, resp.Error())
	}

	// --- Space again: every one of them goes through, no restart.
	faults.Full(false)

	r.succeeds("CreateTopics", func() int16 {
		resp, err := r.adm.CreateTopic(ctx, 2, 1, nil, "new1")
		if err != nil {
			t.Fatal(err)
		}
		var ke *kerr.Error
		if errors.As(resp.Err, &ke) {
			return ke.Code
		}
		return 0
	})
	r.succeeds("Metadata auto-creating a topic", func() int16 {
		if c := metadataAutoCreate("auto1"); c != kerr.LeaderNotAvailable.Code {
			return c
		}
		return 0
	})
	r.succeeds("Produce to a missing topic", func() int16 {
		err := r.cl.ProduceSync(ctx, &kgo.Record{Topic: "auto2", Value: []byte("a")}).FirstErr()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Code
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	})
	r.succeeds("CreatePartitions", createPartitions)
	r.succeeds("OffsetCommit", func() int16 { return commit("g", 9) })
	r.succeeds("OffsetDelete", offsetDelete)
	r.succeeds("DeleteGroups", deleteGroup)
	r.succeeds("TxnOffsetCommit", txnCommit)
	r.succeeds("CreateAcls", func() int16 { return createACL("User:new") })
	r.succeeds("DeleteAcls", func() int16 {
		c, n := deleteACL("User:old")
		if c == 0 && n != 1 {
			t.Errorf("DeleteAcls removed %d ACLs, want 1", n)
		}
		return c
	})
	r.succeeds("DeleteRecords", func() int16 { return deleteRecords(2) })
	r.succeeds("AlterClientQuotas", alterQuota)
	r.succeeds("AlterUserScramCredentials", alterScram)
	r.succeeds("InitProducerId (transactional)", func() int16 { return initTxnID("tx-2") })
	r.succeeds("InitProducerId (idempotent)", func() int16 {
		return r.req(kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse).ErrorCode
	})
	r.succeeds("AddPartitionsToTxn", addPartitions)
	r.succeeds("AddOffsetsToTxn", addOffsets)
	r.succeeds("EndTxn", endTxn)
	r.succeeds("Produce", func() int16 {
		err := r.cl.ProduceSync(ctx, &kgo.Record{Topic: "data", Value: []byte("after")}).FirstErr()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Code
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	})
	if t.Failed() {
		return
	}

	// --- After a restart, what was acknowledged is there, and nothing
	// that was refused.
	cons.Close()
	txcl.Close()
	r.stop()
	r.start()
	topics, err := r.adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, parts := range map[string]int{"data": 2, "new1": 2, "auto1": 0, "auto2": 0} {
		td, ok := topics[name]
		if !ok {
			t.Errorf("topic %s acknowledged, missing after a restart", name)
		} else if parts > 0 && len(td.Partitions) != parts {
			t.Errorf("topic %s has %d partitions after a restart, want %d", name, len(td.Partitions), parts)
		}
	}
	if topics.Has("spare") {
		t.Error("deleted topic spare is back after a restart")
	}
	for group, want := range map[string]int64{"g": 9, "gt": 7} {
		offs, err := r.adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("data", 0); !ok || o.At != want {
			t.Errorf("group %s: committed offset %v after a restart, want %d", group, o.At, want)
		}
	}
	for _, group := range []string{"gd", "gx"} {
		offs, err := r.adm.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("data", 0); ok && o.At >= 0 {
			t.Errorf("group %s: offset %d after a restart, deleted before it", group, o.At)
		}
	}
	acls, err := r.adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny))
	if err != nil {
		t.Fatal(err)
	}
	var principals []string
	for _, res := range acls {
		for _, d := range res.Described {
			principals = append(principals, d.Principal)
		}
	}
	if strings.Join(principals, ",") != "User:new" {
		t.Errorf("ACLs after a restart: %v, want [User:new]", principals)
	}
	scram, err := r.adm.DescribeUserSCRAMs(ctx, "alice")
	if err != nil || scram.Error() != nil {
		t.Errorf("SCRAM credentials of alice after a restart: %v %v", err, scram.Error())
	}
	quotas, err := r.adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: strp("slow")}})
	if err != nil || len(quotas) != 1 {
		t.Errorf("client quotas after a restart: %v %v", quotas, err)
	}
	// The consumer reads every acknowledged record at or above the log
	// start DeleteRecords set, the committed transaction's record, and
	// nothing that was refused.
	rc, err := kgo.NewClient(kgo.SeedBrokers(r.b.Addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"data": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	want := append(append(append([]string(nil), acked[2:]...), "in-txn"), "after")
	var got []string
	for len(got) < len(want) {
		fs := rc.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consuming after a restart (%d of %d): %v", len(got), len(want), err)
		}
		fs.EachRecord(func(rec *kgo.Record) { got = append(got, string(rec.Value)) })
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after a restart the log holds %v, want %v", got, want)
	}
}
