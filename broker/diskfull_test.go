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
