package broker

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/broker/internal/topics"
	"github.com/minikafka/minikafka/internal/records"
)

func TestCreateTopicsValidation(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.DefaultPartitions = 3 })
	createTopic(t, b, "exists", 1)
	long := strings.Repeat("a", 250)
	ok249 := strings.Repeat("a", 249)
	type topicSpec struct {
		name    string
		parts   int32
		rf      int16
		assign  [][]int32
		configs []string
	}
	for _, tc := range []struct {
		name string
		spec topicSpec
		want *kerr.Error
	}{
		{"empty name", topicSpec{"", 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"dot", topicSpec{".", 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"dotdot", topicSpec{"..", 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"too long", topicSpec{long, 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"bad char", topicSpec{"a b", 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"slash", topicSpec{"a/b", 1, 1, nil, nil}, kerr.InvalidTopicException},
		{"exists", topicSpec{"exists", 1, 1, nil, nil}, kerr.TopicAlreadyExists},
		{"zero partitions", topicSpec{"z", 0, 1, nil, nil}, kerr.InvalidPartitions},
		{"negative partitions", topicSpec{"z", -2, 1, nil, nil}, kerr.InvalidPartitions},
		{"rf 3", topicSpec{"z", 1, 3, nil, nil}, kerr.InvalidReplicationFactor},
		{"rf 0", topicSpec{"z", 1, 0, nil, nil}, kerr.InvalidReplicationFactor},
		{"unknown config", topicSpec{"z", 1, 1, nil, []string{"no.such", "1"}}, kerr.InvalidConfig},
		{"bad config value", topicSpec{"z", 1, 1, nil, []string{"retention.ms", "soon"}}, kerr.InvalidConfig},
		{"bad enum", topicSpec{"z", 1, 1, nil, []string{"cleanup.policy", "shred"}}, kerr.InvalidConfig},
		{"assignment and count", topicSpec{"z", 2, -1, [][]int32{{1}}, nil}, kerr.InvalidRequest},
		{"assignment to other node", topicSpec{"z", -1, -1, [][]int32{{2}}, nil}, kerr.InvalidReplicaAssignment},
		{"too many partitions", topicSpec{"z", topics.MaxPartitions + 1, 1, nil, nil}, kerr.InvalidPartitions},
		{"max length ok", topicSpec{ok249, 1, 1, nil, nil}, nil},
		{"defaults", topicSpec{"d", -1, -1, nil, nil}, nil},
		{"assignment", topicSpec{"a", -1, -1, [][]int32{{1}, {1}}, nil}, nil},
		{"compact", topicSpec{"c", 1, 1, nil, []string{"cleanup.policy", "compact,delete", "retention.ms", "-1"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.Version = 7
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tc.spec.name, tc.spec.parts, tc.spec.rf
			for i, a := range tc.spec.assign {
				ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				ra.Partition, ra.Replicas = int32(i), a
				rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
			}
			for i := 0; i+1 < len(tc.spec.configs); i += 2 {
				c := kmsg.NewCreateTopicsRequestTopicConfig()
				c.Name, c.Value = tc.spec.configs[i], kmsg.StringPtr(tc.spec.configs[i+1])
				rt.Configs = append(rt.Configs, c)
			}
			req.Topics = append(req.Topics, rt)
			st := serve(t, b, req).(*kmsg.CreateTopicsResponse).Topics[0]
			want := int16(0)
			if tc.want != nil {
				want = tc.want.Code
			}
			if st.ErrorCode != want {
				t.Fatalf("code %v (%s), want %v", kerr.ErrorForCode(st.ErrorCode), deref(st.ErrorMessage), tc.want)
			}
			if tc.want != nil {
				if st.ErrorMessage == nil {
					t.Fatal("no error message")
				}
				return
			}
			if st.TopicID == ([16]byte{}) || st.NumPartitions <= 0 || st.ReplicationFactor != 1 || len(st.Configs) == 0 {
				t.Fatalf("incomplete v7 answer: %+v", st)
			}
			if tc.spec.name == "d" && st.NumPartitions != 3 {
				t.Fatalf("default partitions: %d", st.NumPartitions)
			}
		})
	}

	// Duplicates in one request are all rejected; validate_only creates nothing.
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 4
	for _, n := range []string{"dup", "dup", "v"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = n, 1, 1
		req.Topics = append(req.Topics, rt)
	}
	req.ValidateOnly = true
	resp := serve(t, b, req).(*kmsg.CreateTopicsResponse)
	if resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code || resp.Topics[1].ErrorCode != kerr.InvalidRequest.Code || resp.Topics[2].ErrorCode != 0 {
		t.Fatalf("duplicates / validate only: %+v", resp.Topics)
	}
	if b.TopicExists("v") || b.TopicExists("dup") {
		t.Fatal("validate_only created a topic")
	}
}

func TestDeleteTopics(t *testing.T) {
	b := newTestBroker(t)
	idA := createTopic(t, b, "a", 2)
	createTopic(t, b, "b", 1)
	var deleted []string
	b.OnTopicDeleted(func(name string, id [16]byte) { deleted = append(deleted, name) })
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	for _, rt := range []kmsg.DeleteTopicsRequestTopic{
		{TopicID: idA},
		{Topic: kmsg.StringPtr("b")},
		{Topic: kmsg.StringPtr("nope")},
		{TopicID: [16]byte{7}},
		{Topic: kmsg.StringPtr("b"), TopicID: idA},
	} {
		req.Topics = append(req.Topics, rt)
	}
	resp := serve(t, b, req).(*kmsg.DeleteTopicsResponse)
	want := []*kerr.Error{nil, nil, kerr.UnknownTopicOrPartition, kerr.UnknownTopicID, kerr.InvalidRequest}
	for i, w := range want {
		c := int16(0)
		if w != nil {
			c = w.Code
		}
		if resp.Topics[i].ErrorCode != c {
			t.Errorf("topic %d: %v, want %v", i, kerr.ErrorForCode(resp.Topics[i].ErrorCode), w)
		}
	}
	if deref(resp.Topics[0].Topic) != "a" {
		t.Errorf("delete by id does not name the topic: %v", deref(resp.Topics[0].Topic))
	}
	if b.TopicExists("a") || b.TopicExists("b") || len(deleted) != 2 {
		t.Fatalf("after delete: a %v b %v hooks %v", b.TopicExists("a"), b.TopicExists("b"), deleted)
	}
	// Re-creating the name gives a new, empty topic with a new ID.
	idA2 := createTopic(t, b, "a", 1)
	if idA2 == idA {
		t.Fatal("topic id reused")
	}
	if got := b.lookupTopic("a", [16]byte{}).partition(0).log.LogEndOffset(); got != 0 {
		t.Fatalf("recreated topic has data: %d", got)
	}
}

func TestCreatePartitions(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 2)
	run := func(topic string, count int32, assign [][]int32, validateOnly bool) int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version = 3
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = topic, count
		for _, a := range assign {
			rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
		}
		req.Topics = append(req.Topics, rt)
		req.ValidateOnly = validateOnly
		return serve(t, b, req).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
	}
	for _, tc := range []struct {
		name   string
		topic  string
		count  int32
		assign [][]int32
		want   *kerr.Error
	}{
		{"unknown", "nope", 3, nil, kerr.UnknownTopicOrPartition},
		{"fewer", "t", 1, nil, kerr.InvalidPartitions},
		{"same", "t", 2, nil, kerr.InvalidPartitions},
		{"bad assignment", "t", 3, [][]int32{{5}}, kerr.InvalidReplicaAssignment},
		{"wrong assignment count", "t", 4, [][]int32{{1}}, kerr.InvalidReplicaAssignment},
	} {
		if c := run(tc.topic, tc.count, tc.assign, false); c != tc.want.Code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(c), tc.want)
		}
	}
	if c := run("t", 4, nil, true); c != 0 {
		t.Fatalf("validate only: %v", kerr.ErrorForCode(c))
	}
	if n, _ := b.PartitionCount("t"); n != 2 {
		t.Fatalf("validate only grew the topic to %d", n)
	}
	if c := run("t", 4, [][]int32{{1}, {1}}, false); c != 0 {
		t.Fatalf("grow: %v", kerr.ErrorForCode(c))
	}
	if n, _ := b.PartitionCount("t"); n != 4 {
		t.Fatalf("partitions %d, want 4", n)
	}
	if r := produce(t, b, "t", 3, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); r.ErrorCode != 0 {
		t.Fatalf("produce to new partition: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

func TestMetadata(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.AutoCreateTopics = true; c.DefaultPartitions = 2; c.ClusterID = "test-cluster" })
	id := createTopic(t, b, "t", 3)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for _, n := range []string{"t", "auto", "bad name"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = [16]byte{5}
	req.Topics = append(req.Topics, rt)
	// By ID with an empty name, as the Java client asks.
	rt = kmsg.NewMetadataRequestTopic()
	rt.Topic, rt.TopicID = kmsg.StringPtr(""), id
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp := serve(t, b, req).(*kmsg.MetadataResponse)
	if deref(resp.ClusterID) != "test-cluster" || resp.ControllerID != 1 || len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 {
		t.Fatalf("cluster: %+v", resp)
	}
	got := resp.Topics
	if got[0].ErrorCode != 0 || got[0].TopicID != id || len(got[0].Partitions) != 3 || got[0].Partitions[2].Leader != 1 {
		t.Fatalf("t: %+v", got[0])
	}
	// As Kafka: the creating request is told LEADER_NOT_AVAILABLE with no
	// partitions; the next request sees them.
	if got[1].ErrorCode != kerr.LeaderNotAvailable.Code || len(got[1].Partitions) != 0 || deref(got[1].Topic) != "auto" || !b.TopicExists("auto") {
		t.Fatalf("auto-create: %+v", got[1])
	}
	if again := serve(t, b, req).(*kmsg.MetadataResponse).Topics[1]; again.ErrorCode != 0 || len(again.Partitions) != 2 || again.TopicID == ([16]byte{}) {
		t.Fatalf("auto-created topic on the next request: %+v", again)
	}
	if got[2].ErrorCode != kerr.InvalidTopicException.Code || b.TopicExists("bad name") {
		t.Fatalf("invalid name: %v", kerr.ErrorForCode(got[2].ErrorCode))
	}
	if got[3].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %v", kerr.ErrorForCode(got[3].ErrorCode))
	}
	if got[4].ErrorCode != 0 || deref(got[4].Topic) != "t" || got[4].TopicID != id || len(got[4].Partitions) != 3 {
		t.Fatalf("by id with an empty name: %+v", got[4])
	}
	// Not allowed by the client: no creation.
	req = kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt = kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("noauto")
	req.Topics = append(req.Topics, rt)
	if r := serve(t, b, req).(*kmsg.MetadataResponse); r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || b.TopicExists("noauto") {
		t.Fatalf("auto-create not allowed: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	// All topics (nil list), at v0 too (empty list): t, auto and the
	// internal __consumer_offsets, made by the first group lookup.
	findGroupCoordinator(t, b)
	req = kmsg.NewPtrMetadataRequest()
	req.Version = 13
	r := serve(t, b, req).(*kmsg.MetadataResponse)
	if len(r.Topics) != 3 {
		t.Fatalf("all topics: %d", len(r.Topics))
	}
	for _, st := range r.Topics {
		if st.IsInternal != (deref(st.Topic) == offsetsTopic) {
			t.Fatalf("%s: internal %v", deref(st.Topic), st.IsInternal)
		}
	}
	req.Version = 0
	req.Topics = []kmsg.MetadataRequestTopic{}
	if r := serve(t, b, req).(*kmsg.MetadataResponse); len(r.Topics) != 3 {
		t.Fatalf("v0 all topics: %d", len(r.Topics))
	}
}

// __consumer_offsets appears, as in Kafka, when groups are first used: a
// fresh broker lists no topics; the first group FindCoordinator creates it
// (one partition, compacted, internal), and so does a Metadata or
// CreateTopics naming it. It takes no produce and cannot be deleted.
func TestInternalTopic(t *testing.T) {
	b := newTestBroker(t)
	if b.TopicExists(offsetsTopic) {
		t.Fatal("__consumer_offsets before any group use")
	}
	all := kmsg.NewPtrMetadataRequest()
	all.Version = 12
	if r := serve(t, b, all).(*kmsg.MetadataResponse); len(r.Topics) != 0 {
		t.Fatalf("fresh broker lists %d topics", len(r.Topics))
	}
	// A transactional-id lookup does not create it.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 4
	fc.CoordinatorType = 1
	fc.CoordinatorKeys = []string{"txn"}
	if r := serve(t, b, fc).(*kmsg.FindCoordinatorResponse); r.Coordinators[0].ErrorCode != 0 || b.TopicExists(offsetsTopic) {
		t.Fatalf("txn coordinator lookup: %+v, exists %v", r.Coordinators[0], b.TopicExists(offsetsTopic))
	}
	findGroupCoordinator(t, b)
	r := serve(t, b, all).(*kmsg.MetadataResponse)
	if len(r.Topics) != 1 || deref(r.Topics[0].Topic) != offsetsTopic || !r.Topics[0].IsInternal || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("after the first group lookup: %+v", r.Topics)
	}
	if v, ok := describeTopicConfig(t, b, offsetsTopic, "cleanup.policy"); !ok || v != "compact" {
		t.Fatalf("cleanup.policy %q %v", v, ok)
	}
	if r := produce(t, b, offsetsTopic, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); r.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("produce to internal topic: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{offsetsTopic}
	if c := serve(t, b, req).(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode; c != kerr.InvalidRequest.Code || !b.TopicExists(offsetsTopic) {
		t.Fatalf("delete internal topic: %v", kerr.ErrorForCode(c))
	}

	// Named in Metadata with auto-creation allowed: made as the internal
	// topic, not with the auto-create defaults.
	b2 := newTestBroker(t, func(c *Config) { c.AutoCreateTopics = true; c.DefaultPartitions = 3 })
	mreq := kmsg.NewPtrMetadataRequest()
	mreq.Version = 12
	mreq.AllowAutoTopicCreation = true
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(offsetsTopic)
	mreq.Topics = append(mreq.Topics, mt)
	if r := serve(t, b2, mreq).(*kmsg.MetadataResponse); r.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || !r.Topics[0].IsInternal {
		t.Fatalf("metadata auto-create of %s: %+v", offsetsTopic, r.Topics[0])
	}
	if r := serve(t, b2, mreq).(*kmsg.MetadataResponse); r.Topics[0].ErrorCode != 0 || !r.Topics[0].IsInternal || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("metadata of auto-created %s: %+v", offsetsTopic, r.Topics[0])
	}

	// Named in CreateTopics: it exists, with Kafka's settings, never the
	// client's.
	b3 := newTestBroker(t)
	creq := kmsg.NewPtrCreateTopicsRequest()
	creq.Version = 7
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = offsetsTopic, 7, 1
	creq.Topics = append(creq.Topics, ct)
	if c := serve(t, b3, creq).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; c != kerr.TopicAlreadyExists.Code {
		t.Fatalf("create %s: %v", offsetsTopic, kerr.ErrorForCode(c))
	}
	if n, _ := b3.PartitionCount(offsetsTopic); n != 1 {
		t.Fatalf("%s has %d partitions", offsetsTopic, n)
	}
}

// findGroupCoordinator looks up a group's coordinator, as every group
// client does first.
func findGroupCoordinator(t *testing.T, b *Broker) {
	t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 4
	fc.CoordinatorKeys = []string{"g"}
	if r := serve(t, b, fc).(*kmsg.FindCoordinatorResponse); r.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("find coordinator: %v", kerr.ErrorForCode(r.Coordinators[0].ErrorCode))
	}
}

func TestListOffsets(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	base := time.Now().Add(-time.Hour).UnixMilli()
	for i, delta := range []int64{0, 1000, 500, 2000} {
		batch, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: base + delta, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]records.Record{{Value: []byte{byte(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		produce(t, b, "t", 0, batch)
	}
	list := func(version int16, ts int64, epoch int32) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = version
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = ts, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		name   string
		ts     int64
		offset int64
		tsOut  int64
	}{
		{"latest", -1, 4, -1},
		{"earliest", -2, 0, -1},
		{"max timestamp", -3, 3, base + 2000},
		{"earliest local", -4, 0, -1},
		{"by time exact", base + 500, 1, base + 1000},
		{"by time between", base + 1500, 3, base + 2000},
		{"by time before all", base - 10, 0, base},
		{"by time after all", base + 5000, -1, -1},
	} {
		p := list(9, tc.ts, -1)
		if p.ErrorCode != 0 || p.Offset != tc.offset || p.Timestamp != tc.tsOut {
			t.Errorf("%s: code %v offset %d ts %d, want %d %d", tc.name, kerr.ErrorForCode(p.ErrorCode), p.Offset, p.Timestamp, tc.offset, tc.tsOut)
		}
		if wantEpoch := int32(0); tc.offset < 0 && p.LeaderEpoch != -1 || tc.offset >= 0 && p.LeaderEpoch != wantEpoch {
			t.Errorf("%s: leader epoch %d", tc.name, p.LeaderEpoch)
		}
	}
	if p := list(9, -1, 4); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("future epoch: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 4
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "nope"
	rt.Partitions = append(rt.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	if p := serve(t, b, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}

func TestOffsetForLeaderEpochAndDeleteRecords(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	for i := 0; i < 4; i++ {
		produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	}
	ofle := func(epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version = 4
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.LeaderEpoch, rp.CurrentLeaderEpoch = epoch, 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	}
	if p := ofle(0); p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 4 {
		t.Fatalf("epoch 0: %+v", p)
	}
	if p := ofle(3); p.ErrorCode != 0 || p.LeaderEpoch != -1 || p.EndOffset != -1 {
		t.Fatalf("unknown epoch: %+v", p)
	}

	del := func(topic string, off int64) kmsg.DeleteRecordsResponseTopicPartition {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.Version = 2
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Offset = off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	}
	if p := del("t", 9); p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("past hw: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if p := del("nope", 1); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if p := del("t", 2); p.ErrorCode != 0 || p.LowWatermark != 2 {
		t.Fatalf("delete to 2: %+v", p)
	}
	f := serve(t, b, fetchReq(11, "t", [16]byte{}, 0, 0, 0, 1)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if f.ErrorCode != kerr.OffsetOutOfRange.Code || f.LogStartOffset != 2 {
		t.Fatalf("fetch below log start: %v start %d", kerr.ErrorForCode(f.ErrorCode), f.LogStartOffset)
	}
	if p := del("t", -1); p.ErrorCode != 0 || p.LowWatermark != 4 {
		t.Fatalf("delete to hw: %+v", p)
	}
}

func TestApiVersions(t *testing.T) {
	b := newTestBroker(t)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.22.0"
	resp := serve(t, b, req).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(apis) {
		t.Fatalf("keys %d code %d", len(resp.ApiKeys), resp.ErrorCode)
	}
	req.ClientSoftwareName = "-bad"
	if resp := serve(t, b, req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("bad software name: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	// Too new: v0 answer with UNSUPPORTED_VERSION and our ApiVersions range.
	req = kmsg.NewPtrApiVersionsRequest()
	req.Version = 99
	resp = serve(t, b, req).(*kmsg.ApiVersionsResponse)
	if resp.Version != 0 || resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != 4 {
		t.Fatalf("too new: %+v", resp)
	}
	// Any other API at an unsupported version closes the connection.
	mreq := kmsg.NewPtrProduceRequest()
	mreq.Version = 2
	if rep := serveReply(b, mreq); rep.Err == nil {
		t.Fatal("produce v2 must close the connection")
	}
}

func TestDescribeCluster(t *testing.T) {
	b := newTestBroker(t)
	b.SetAdvertised("example.test", 1234)
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 2
	req.EndpointType = 1
	resp := serve(t, b, req).(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 || resp.ClusterID == "" || len(resp.Brokers) != 1 || resp.Brokers[0].Host != "example.test" || resp.Brokers[0].Port != 1234 {
		t.Fatalf("%+v", resp)
	}
	req.EndpointType = 9
	if resp := serve(t, b, req).(*kmsg.DescribeClusterResponse); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("endpoint 9: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

func TestDescribeAndAlterConfigs(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1, "retention.ms", "1000")
	describe := func(typ kmsg.ConfigResourceType, name string, names ...string) kmsg.DescribeConfigsResponseResource {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = 4
		req.IncludeSynonyms, req.IncludeDocumentation = true, true
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
		req.Resources = append(req.Resources, rr)
		return serve(t, b, req).(*kmsg.DescribeConfigsResponse).Resources[0]
	}
	find := func(r kmsg.DescribeConfigsResponseResource, name string) *kmsg.DescribeConfigsResponseResourceConfig {
		for i := range r.Configs {
			if r.Configs[i].Name == name {
				return &r.Configs[i]
			}
		}
		return nil
	}
	r := describe(kmsg.ConfigResourceTypeTopic, "t")
	if r.ErrorCode != 0 || len(r.Configs) != len(topicconfig.Defs) {
		t.Fatalf("describe topic: %v %d configs", kerr.ErrorForCode(r.ErrorCode), len(r.Configs))
	}
	rc := find(r, "retention.ms")
	if deref(rc.Value) != "1000" || rc.Source != kmsg.ConfigSourceDynamicTopicConfig || len(rc.ConfigSynonyms) != 2 || rc.ConfigSynonyms[1].Name != "log.retention.ms" {
		t.Fatalf("retention.ms: %+v", rc)
	}
	if c := find(r, "max.message.bytes"); deref(c.Value) != "1048588" || c.Source != kmsg.ConfigSourceDefaultConfig || c.ConfigType != kmsg.ConfigTypeInt {
		t.Fatalf("max.message.bytes: %+v", c)
	}
	if r := describe(kmsg.ConfigResourceTypeTopic, "t", "segment.bytes", "nope"); len(r.Configs) != 1 {
		t.Fatalf("named configs: %d", len(r.Configs))
	}
	if r := describe(kmsg.ConfigResourceTypeTopic, "nope"); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := describe(kmsg.ConfigResourceTypeBroker, "1"); r.ErrorCode != 0 || find(r, "num.partitions") == nil || !find(r, "num.partitions").ReadOnly {
		t.Fatalf("broker: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := describe(kmsg.ConfigResourceTypeBroker, "2"); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("other broker: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// Incremental: set, delete, append; invalid values rejected.
	inc := func(ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) int16 {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = 1
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeTopic, "t", ops
		req.Resources = append(req.Resources, rr)
		return serve(t, b, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	op := func(name string, o kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: o, Value: v}
	}
	if c := inc(op("retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("x"))); c != kerr.InvalidConfig.Code {
		t.Fatalf("bad value: %v", kerr.ErrorForCode(c))
	}
	if c := inc(op("segment.bytes", kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr("1"))); c != kerr.InvalidConfig.Code {
		t.Fatalf("append to non-list: %v", kerr.ErrorForCode(c))
	}
	if c := inc(op("retention.ms", kmsg.IncrementalAlterConfigOpDelete, nil), op("max.message.bytes", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("10")),
		op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr("compact"))); c != 0 {
		t.Fatalf("valid ops: %v", kerr.ErrorForCode(c))
	}
	r = describe(kmsg.ConfigResourceTypeTopic, "t")
	if deref(find(r, "retention.ms").Value) != "604800000" || deref(find(r, "max.message.bytes").Value) != "10" || deref(find(r, "cleanup.policy").Value) != "delete,compact" {
		t.Fatalf("after incremental alter: %s %s %s", deref(find(r, "retention.ms").Value), deref(find(r, "max.message.bytes").Value), deref(find(r, "cleanup.policy").Value))
	}
	// The new max.message.bytes applies at once.
	if p := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); p.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("after max.message.bytes=10: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	// Non-incremental alter replaces the whole set.
	areq := kmsg.NewPtrAlterConfigsRequest()
	areq.Version = 2
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	ar.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "segment.ms", Value: kmsg.StringPtr("60000")}}
	areq.Resources = append(areq.Resources, ar)
	if c := serve(t, b, areq).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode; c != 0 {
		t.Fatalf("alter: %v", kerr.ErrorForCode(c))
	}
	r = describe(kmsg.ConfigResourceTypeTopic, "t")
	if deref(find(r, "max.message.bytes").Value) != "1048588" || deref(find(r, "segment.ms").Value) != "60000" {
		t.Fatal("alter configs did not replace the set")
	}
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeBroker, "2"
	areq.Resources = []kmsg.AlterConfigsRequestResource{ar}
	if c := serve(t, b, areq).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode; c != kerr.InvalidRequest.Code {
		t.Fatalf("broker alter: %v", kerr.ErrorForCode(c))
	}
}

// describeTopicConfig returns one config value of a topic, as
// DescribeConfigs reports it.
func describeTopicConfig(t *testing.T, b *Broker, topic, name string) (string, bool) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{name}
	req.Resources = append(req.Resources, rr)
	r := serve(t, b, req).(*kmsg.DescribeConfigsResponse)
	if len(r.Resources) != 1 || r.Resources[0].ErrorCode != 0 || len(r.Resources[0].Configs) != 1 {
		return "", false
	}
	return deref(r.Resources[0].Configs[0].Value), true
}
