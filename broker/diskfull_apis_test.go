package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/minikafka/minikafka/broker/internal/txn"
	"github.com/minikafka/minikafka/internal/vfs"
)

// EndTxn whose Prepare is written but whose markers meet a full disk (the
// partitions' logs are full, the transaction log is not): NOT_COORDINATOR,
// and the client's retry, with the epoch it knows, writes the markers and
// succeeds once there is space. A read_committed consumer then sees the
// transaction's records exactly once.
func TestDiskFullEndTxnMarkersResume(t *testing.T) {
	for _, version := range []int16{3, 5} {
		t.Run(fmt.Sprintf("EndTxn v%d", version), func(t *testing.T) {
			var full atomic.Bool
			inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
				if full.Load() && op == vfs.OpWrite && strings.Contains(p, "/topics/") {
					return 0, syscall.ENOSPC
				}
				return n, nil
			})
			b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), inj) })
			createTopic(t, b, "t", 2)
			addr := listen(t, b)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tx := newClient(t, addr, kgo.TransactionalID("tx"), kgo.ProducerLinger(0), kgo.DefaultProduceTopic("t"))
			if err := tx.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for p := int32(0); p < 2; p++ {
				if err := tx.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte{'a' + byte(p)}}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			pid, epoch, err := tx.ProducerID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			vs := kversion.Stable()
			vs.SetMaxKeyVersion(26, version)
			raw := newClient(t, addr, kgo.MaxVersions(vs))
			endTxn := func() int16 {
				req := kmsg.NewPtrEndTxnRequest()
				req.Version = version
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "tx", pid, epoch, true
				resp, err := raw.Broker(int(b.NodeID())).Request(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return resp.(*kmsg.EndTxnResponse).ErrorCode
			}
			full.Store(true)
			if c := endTxn(); c != kerr.NotCoordinator.Code {
				t.Fatalf("EndTxn with the markers refused: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
			}
			full.Store(false)
			var c int16
			for i := 0; i < 100; i++ { // past the log's full-disk backoff
				if c = endTxn(); c != kerr.NotCoordinator.Code {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if c != 0 {
				t.Fatalf("EndTxn retried once there is space: %v", kerr.ErrorForCode(c))
			}
			if c := endTxn(); c != 0 {
				t.Fatalf("EndTxn retried after it succeeded: %v", kerr.ErrorForCode(c))
			}
			got := map[string]int{}
			for _, r := range consumeN(t, addr, "t", 2, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
				got[string(r.Value)]++
			}
			if got["a"] != 1 || got["b"] != 1 {
				t.Fatalf("read_committed reads %v, want a and b once", got)
			}
		})
	}
}

// A directory that cannot be renamed on a full disk (it may need a block
// for the new name) does not keep a deleted topic: topic.json goes
// instead, the delete is acknowledged, and the topic stays gone after a
// restart.
func TestDiskFullDeleteTopicWithoutRename(t *testing.T) {
	var full atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if full.Load() && (op == vfs.OpWrite || op == vfs.OpRename) {
			return 0, syscall.ENOSPC
		}
		return n, nil
	})
	fsys := vfs.NewFaultFS(vfs.NewMem(), inj)
	cfg := Config{DataDir: "/data", FS: fsys, NodeID: 1, DefaultPartitions: 1}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "gone", 1)
	createTopic(t, b, "kept", 1)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full.Store(true)
	resp, err := adm.DeleteTopics(ctx, "gone")
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("DeleteTopics on a full disk: %v", err)
	}
	full.Store(false)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.TopicExists("gone") {
		t.Fatal("a topic deleted on a full disk came back after a restart")
	}
	if !b.TopicExists("kept") {
		t.Fatal("topic kept lost")
	}
}

// AddPartitionsToTxn and AddOffsetsToTxn refused on a full disk leave the
// transaction as it was, so that the retry once there is space writes the
// change (before, it found the change in memory and answered success
// without writing it): after a restart the transaction still holds the
// partition and the group.
func TestDiskFullTxnAddsAreWrittenOnRetry(t *testing.T) {
	var full atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if full.Load() && op == vfs.OpWrite {
			return 0, syscall.ENOSPC
		}
		return n, nil
	})
	cfg := Config{DataDir: "/data", FS: vfs.NewFaultFS(vfs.NewMem(), inj), NodeID: 1, DefaultPartitions: 1}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "t", 1)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 60000
	ipr := serve(t, b, ip).(*kmsg.InitProducerIDResponse)
	if ipr.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(ipr.ErrorCode))
	}
	addParts := func() int16 {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.Version = 3
		r.TransactionalID, r.ProducerID, r.ProducerEpoch = "tx", ipr.ProducerID, ipr.ProducerEpoch
		r.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		return serve(t, b, r).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
	}
	addOffsets := func() int16 {
		r := kmsg.NewPtrAddOffsetsToTxnRequest()
		r.Version = 3
		r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Group = "tx", ipr.ProducerID, ipr.ProducerEpoch, "g"
		return serve(t, b, r).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
	}
	restart := func() txn.Info {
		t.Helper()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if b, err = New(cfg); err != nil {
			t.Fatal(err)
		}
		in, ok := b.txns.Transaction("tx")
		if !ok {
			t.Fatal("transactional ID lost across the restart")
		}
		return in
	}
	// One at a time, with a restart after each: a later write would
	// carry an earlier change along and hide that it was never written.
	full.Store(true)
	if c := addOffsets(); c != kerr.NotCoordinator.Code {
		t.Fatalf("AddOffsetsToTxn on a full disk: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	full.Store(false)
	if c := addOffsets(); c != 0 {
		t.Fatalf("AddOffsetsToTxn once there is space: %v", kerr.ErrorForCode(c))
	}
	if in := restart(); !slices.Contains(in.Groups, "g") || in.State != txn.Ongoing {
		t.Fatalf("after a restart the transaction holds groups %v, state %v; want g, ongoing", in.Groups, in.State)
	}
	full.Store(true)
	if c := addParts(); c != kerr.NotCoordinator.Code {
		t.Fatalf("AddPartitionsToTxn on a full disk: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	full.Store(false)
	if c := addParts(); c != 0 {
		t.Fatalf("AddPartitionsToTxn once there is space: %v", kerr.ErrorForCode(c))
	}
	if in := restart(); in.Partitions != 1 {
		t.Fatalf("after a restart the transaction holds %d partitions, want 1", in.Partitions)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// A TxnOffsetCommit refused on a full disk stages nothing: the
// transaction's commit does not carry the refused offset (Kafka drops the
// pending offsets of a failed append), and OffsetFetch with require_stable
// does not wait on it.
func TestDiskFullTxnOffsetCommitStagesNothing(t *testing.T) {
	var full atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if full.Load() && op == vfs.OpWrite {
			return 0, syscall.ENOSPC
		}
		return n, nil
	})
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), inj) })
	createTopic(t, b, "t", 1)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 60000
	ipr := serve(t, b, ip).(*kmsg.InitProducerIDResponse)
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version = 3
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "tx", ipr.ProducerID, ipr.ProducerEpoch, "g"
	if c := serve(t, b, ao).(*kmsg.AddOffsetsToTxnResponse).ErrorCode; c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	full.Store(true)
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version = 3
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = "tx", "g", ipr.ProducerID, ipr.ProducerEpoch, -1
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7}}}}
	if c := serve(t, b, tc).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; c != kerr.NotCoordinator.Code {
		t.Fatalf("TxnOffsetCommit on a full disk: %v, want NOT_COORDINATOR", kerr.ErrorForCode(c))
	}
	full.Store(false)
	fetch := func() (int64, int16) {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.RequireStable = 7, "g", true
		r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		p := serve(t, b, r).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]
		return p.Offset, p.ErrorCode
	}
	if off, c := fetch(); c != 0 || off != -1 {
		t.Fatalf("OffsetFetch (require_stable) after the refused commit: offset %d, %v; want -1 and no error", off, kerr.ErrorForCode(c))
	}
	et := kmsg.NewPtrEndTxnRequest()
	et.Version = 3
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = "tx", ipr.ProducerID, ipr.ProducerEpoch, true
	if c := serve(t, b, et).(*kmsg.EndTxnResponse).ErrorCode; c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	if off, c := fetch(); c != 0 || off != -1 {
		t.Fatalf("after the commit: offset %d, %v; want -1 (the refused offset never committed)", off, kerr.ErrorForCode(c))
	}
}
