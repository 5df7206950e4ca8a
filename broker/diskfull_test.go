package broker

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// fullDisk fails segment writes with ENOSPC (tearing them half way) while
// full is set.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) Inject(op vfs.Op, path string, n int) (int, error) {
	if d.full.Load() && op == vfs.OpWrite && strings.HasSuffix(path, ".log") {
		return n / 2, syscall.ENOSPC
	}
	return n, nil
}

// A partition that hit a full disk answers KAFKA_STORAGE_ERROR while the
// disk is full and takes produce again once there is space, without a
// restart; a consumer reads exactly the acknowledged batches, and
// DeleteRecords works on it meanwhile.
func TestDiskFullPartitionRecovers(t *testing.T) {
	disk := &fullDisk{}
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), disk) })
	createTopic(t, b, "t", 1)
	send := func(v string) kmsg.ProduceResponseTopicPartition {
		return produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte(v)}))
	}
	if r := send("one"); r.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.ErrorCode))
	}
	disk.full.Store(true)
	for i := 0; i < 3; i++ {
		if r := send("lost"); r.ErrorCode != kerr.KafkaStorageError.Code {
			t.Fatalf("produce on a full disk: code %d, want KAFKA_STORAGE_ERROR", r.ErrorCode)
		}
	}
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "t"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = 0, 0
	dt.Partitions = append(dt.Partitions, dp)
	dr.Topics = append(dr.Topics, dt)
	if c := serve(t, b, dr).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("DeleteRecords while the disk is full: code %d", c)
	}
	disk.full.Store(false)
	r := send("two")
	if r.ErrorCode != 0 || r.BaseOffset != 1 {
		t.Fatalf("produce once there is space: code %d offset %d, want 0 at offset 1", r.ErrorCode, r.BaseOffset)
	}
	fr := serve(t, b, fetchReq(12, "t", [16]byte{}, 0, 0, 0, 1)).(*kmsg.FetchResponse)
	var got []string
	if err := records.Split(fr.Topics[0].Partitions[0].RecordBatches, func(_ int, h records.BatchHeader, batch []byte) error {
		it, err := records.BatchRecords(batch, 1<<20)
		if err != nil {
			return err
		}
		for it.Next() {
			got = append(got, string(it.Record().Value))
		}
		return it.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "one,two" {
		t.Fatalf("consumer reads %v, want [one two]", got)
	}
}

// Offset commits that meet a full disk fail (never acknowledged, never
// fetched) and succeed again once there is space, without a restart.
func TestDiskFullOffsetCommitsResume(t *testing.T) {
	var full atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if full.Load() && op == vfs.OpWrite && strings.Contains(p, "group_offsets") {
			return n / 2, syscall.ENOSPC
		}
		return n, nil
	})
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), inj) })
	createTopic(t, b, "t", 1)
	commit := func(off int64) int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Version, r.Group, r.Generation = 8, "g", -1
		tt := kmsg.NewOffsetCommitRequestTopic()
		tt.Topic = "t"
		pp := kmsg.NewOffsetCommitRequestTopicPartition()
		pp.Partition, pp.Offset = 0, off
		tt.Partitions = append(tt.Partitions, pp)
		r.Topics = append(r.Topics, tt)
		return serve(t, b, r).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	fetched := func() (int16, int64) {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group = 7, "g"
		r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		resp := serve(t, b, r).(*kmsg.OffsetFetchResponse)
		return resp.ErrorCode, resp.Topics[0].Partitions[0].Offset
	}
	if c := commit(5); c != 0 {
		t.Fatalf("first commit: %d", c)
	}
	full.Store(true)
	if c := commit(9); c == 0 {
		t.Fatal("a commit was acknowledged on a full disk")
	}
	if code, off := fetched(); code != 0 || off != 5 {
		t.Fatalf("OffsetFetch while full: code %d offset %d, want 0 and the acknowledged 5", code, off)
	}
	full.Store(false)
	if c := commit(12); c != 0 {
		t.Fatalf("commit once there is space: code %d", c)
	}
	if code, off := fetched(); code != 0 || off != 12 {
		t.Fatalf("OffsetFetch after: code %d offset %d, want 12", code, off)
	}
}
