package broker

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// skewedClock is time.Now moved forward on demand: tests skip the wait a
// full disk imposes between a log's write attempts (logstore backs off up
// to 500 ms) instead of sleeping through it; frozen, it stands still, so
// that a wait cannot end by itself while a slow machine runs the test.
type skewedClock struct {
	skew   atomic.Int64
	frozen atomic.Pointer[time.Time]
}

func (c *skewedClock) now() time.Time {
	if t := c.frozen.Load(); t != nil {
		return *t
	}
	return time.Now().Add(time.Duration(c.skew.Load()))
}

func (c *skewedClock) freeze() { t := c.now(); c.frozen.Store(&t) }

func (c *skewedClock) skipNoSpaceWait() { c.skew.Add(int64(time.Second)) }

// fullDiskBroker is a test broker on a disk that fills when told, with a
// clock that can skip the full-disk backoff.
func fullDiskBroker(t *testing.T) (*Broker, *fullDisk, *skewedClock) {
	disk, clock := &fullDisk{}, &skewedClock{}
	b := newTestBroker(t, func(c *Config) { c.FS, c.Now = vfs.NewFaultFS(vfs.NewMem(), disk), clock.now })
	return b, disk, clock
}

// A partition that hit a full disk answers KAFKA_STORAGE_ERROR while the
// disk is full and takes produce again once there is space, without a
// restart; a consumer reads exactly the acknowledged batches, and
// DeleteRecords works on it meanwhile.
func TestDiskFullPartitionRecovers(t *testing.T) {
	b, disk, clock := fullDiskBroker(t)
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
	clock.skipNoSpaceWait()
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

// Offset commits that meet a full disk fail with NOT_COORDINATOR (never
// acknowledged, never fetched) and succeed again once there is space,
// without a restart.
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
	if c := commit(9); c != kerr.NotCoordinator.Code {
		t.Fatalf("commit on a full disk: %v, want NOT_COORDINATOR (Kafka's answer to a failed offsets append)", kerr.ErrorForCode(c))
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

// aclDisk fails writes of the ACL file's temporary copy with ENOSPC while
// full is set.
type aclDisk struct{ full atomic.Bool }

func (d *aclDisk) Inject(op vfs.Op, path string, n int) (int, error) {
	if d.full.Load() && op == vfs.OpWrite && strings.HasSuffix(path, aclFile+".tmp") {
		return n / 2, syscall.ENOSPC
	}
	return n, nil
}

// CreateAcls and DeleteAcls on a full disk answer KAFKA_STORAGE_ERROR and
// change nothing (the ACL in force is the one on disk); once there is
// space they succeed, without a restart.
func TestDiskFullACLChanges(t *testing.T) {
	disk := &aclDisk{}
	b := newTestBroker(t, func(c *Config) {
		c.FS = vfs.NewFaultFS(vfs.NewMem(), disk)
		c.Authorizer = &AuthorizerConfig{}
	})
	binding := kmsg.NewCreateACLsRequestCreation()
	binding.ResourceType, binding.ResourceName, binding.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
	binding.Principal, binding.Host, binding.Operation, binding.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	create := func() int16 {
		r := kmsg.NewPtrCreateACLsRequest()
		r.Creations = []kmsg.CreateACLsRequestCreation{binding}
		return serve(t, b, r).(*kmsg.CreateACLsResponse).Results[0].ErrorCode
	}
	remove := func() (int16, int) {
		r := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		r.Filters = []kmsg.DeleteACLsRequestFilter{f}
		res := serve(t, b, r).(*kmsg.DeleteACLsResponse).Results[0]
		return res.ErrorCode, len(res.MatchingACLs)
	}
	count := func() int {
		r := kmsg.NewPtrDescribeACLsRequest()
		r.ResourceType, r.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		resp := serve(t, b, r).(*kmsg.DescribeACLsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("DescribeAcls: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		n := 0
		for _, res := range resp.Resources {
			n += len(res.ACLs)
		}
		return n
	}

	disk.full.Store(true)
	if c := create(); c != kerr.KafkaStorageError.Code {
		t.Fatalf("CreateAcls on a full disk: code %d, want KAFKA_STORAGE_ERROR", c)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d ACLs after a failed create, want 0", n)
	}
	disk.full.Store(false)
	if c := create(); c != 0 {
		t.Fatalf("CreateAcls once there is space: %v", kerr.ErrorForCode(c))
	}
	disk.full.Store(true)
	if c, _ := remove(); c != kerr.KafkaStorageError.Code {
		t.Fatalf("DeleteAcls on a full disk: code %d, want KAFKA_STORAGE_ERROR", c)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d ACLs after a failed delete, want 1", n)
	}
	disk.full.Store(false)
	if c, n := remove(); c != 0 || n != 1 {
		t.Fatalf("DeleteAcls once there is space: code %d, %d removed, want 0 and 1", c, n)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d ACLs after the delete, want 0", n)
	}
}

// Deleting a topic frees space for every other partition at once: one
// waiting out its full-disk backoff takes the next produce without
// waiting for the backoff to end.
func TestDiskFullDeletedTopicEndsWait(t *testing.T) {
	b, disk, clock := fullDiskBroker(t)
	createTopic(t, b, "t", 1)
	createTopic(t, b, "old", 1)
	send := func(v string) int16 {
		return produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte(v)})).ErrorCode
	}
	disk.full.Store(true)
	// Each failure after a skipped wait doubles the next wait, up to
	// its longest (500 ms); then the clock stands still, so only the
	// deleted topic can end the wait.
	for i := 0; i < 8; i++ {
		if c := send("lost"); c != kerr.KafkaStorageError.Code {
			t.Fatalf("produce on a full disk: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(c))
		}
		clock.skipNoSpaceWait()
	}
	clock.freeze()
	if c := send("lost"); c != kerr.KafkaStorageError.Code {
		t.Fatalf("produce on a full disk: %v", kerr.ErrorForCode(c))
	}
	disk.full.Store(false)
	// Space came back without the log knowing: it still waits.
	if c := send("early"); c != kerr.KafkaStorageError.Code {
		t.Fatalf("produce within the wait: %v, want KAFKA_STORAGE_ERROR (the log backs off)", kerr.ErrorForCode(c))
	}
	deleteTopicByName(t, b, "old")
	if c := send("after delete"); c != 0 {
		t.Fatalf("produce right after a topic was deleted: %v", kerr.ErrorForCode(c))
	}
}
