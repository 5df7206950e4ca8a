package broker

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// A request's acknowledgements on several share-partitions are written to
// the share state file in one write (one fsync under durability
// "always"), not one per partition; when that write fails, every
// partition in it answers COORDINATOR_NOT_AVAILABLE and the broker goes on.
func TestShareAcksOneStateWritePerRequest(t *testing.T) {
	var writes atomic.Int64
	var failWrites atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, path string, n int) (int, error) {
		if op == vfs.OpWrite && strings.HasSuffix(path, "share-state.log") {
			writes.Add(1)
			if failWrites.Load() {
				return 0, vfs.ErrInjected
			}
		}
		return n, nil
	})
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), inj) })
	const parts = 4
	id := createTopic(t, b, "acks", parts)
	for p := range int32(parts) {
		recs := []testRec{{value: []byte("a")}, {value: []byte("b")}, {value: []byte("c")}}
		if r := produce(t, b, "acks", p, makeBatch(t, records.CodecNone, -1, 0, 0, recs...)); r.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	setGroupConfig(t, b, "g", "share.auto.offset.reset", "earliest")

	fetch := kmsg.NewPtrShareFetchRequest()
	fetch.Version, fetch.GroupID, fetch.MemberID = 1, kmsg.StringPtr("g"), kmsg.StringPtr(member1)
	fetch.MaxBytes, fetch.MaxRecords = 1<<20, 100
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = id
	for p := range int32(parts) {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	fetch.Topics = append(fetch.Topics, rt)
	if got := len(acquired(shareFetchResp(serve(t, b, fetch)))); got != parts {
		t.Fatalf("acquired %d ranges, want %d", got, parts)
	}

	ack := func(epoch int32, first, last int64) *kmsg.ShareAcknowledgeResponse {
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 1, kmsg.StringPtr("g"), kmsg.StringPtr(member1), epoch
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = id
		for p := range int32(parts) {
			rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
			rp.Partition = p
			ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
			ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = first, last, []int8{1}
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.ShareAcknowledgeResponse)
	}
	before := writes.Load()
	r := ack(1, 0, 0)
	for _, p := range r.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("ack partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	if d := writes.Load() - before; d != 1 {
		t.Fatalf("acknowledging %d partitions took %d state writes, want 1", parts, d)
	}

	failWrites.Store(true)
	r = ack(2, 1, 1)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != parts {
		t.Fatalf("answer shape %+v", r.Topics)
	}
	for _, p := range r.Topics[0].Partitions {
		if p.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("failed write: partition %d answered %v, want COORDINATOR_NOT_AVAILABLE", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
}
