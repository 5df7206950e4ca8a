package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/configs"
)

// ElectLeaders, partition reassignments and DescribeQuorum through kadm
// and raw kmsg requests over TCP, at every version offered: the honest
// answers of a one-node cluster, and Kafka's errors for what cannot be.
func TestSingleNodeAdminKeys(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, b, "t", 2)

	t.Run("elect-leaders", func(t *testing.T) {
		for _, how := range []kadm.ElectLeadersHow{kadm.ElectPreferredReplica, kadm.ElectLiveReplica} {
			res, err := adm.ElectLeaders(ctx, how, kadm.TopicsSet{"t": {0: {}, 1: {}}, "missing": {0: {}}})
			if err != nil {
				t.Fatal(err)
			}
			for p := range int32(2) {
				if err := res["t"][p].Err; !errors.Is(err, kerr.ElectionNotNeeded) {
					t.Fatalf("how %v partition %d: %v, want ELECTION_NOT_NEEDED", how, p, err)
				}
			}
			if err := res["missing"][0].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
				t.Fatalf("unknown topic: %v", err)
			}
		}
		for v := int16(0); v <= 2; v++ {
			r := kmsg.NewPtrElectLeadersRequest()
			r.Version, r.ElectionType, r.Topics = v, 0, nil // every partition
			resp := serve(t, b, r).(*kmsg.ElectLeadersResponse)
			if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
				t.Fatalf("v%d all partitions: code %d, %d topics; want nothing elected, nothing failed", v, resp.ErrorCode, len(resp.Topics))
			}
		}
		r := kmsg.NewPtrElectLeadersRequest()
		r.Version, r.ElectionType = 2, 7
		if c := serve(t, b, r).(*kmsg.ElectLeadersResponse).ErrorCode; c != kerr.InvalidRequest.Code {
			t.Fatalf("election type 7: code %d, want INVALID_REQUEST", c)
		}
	})

	t.Run("reassignments", func(t *testing.T) {
		var req kadm.AlterPartitionAssignmentsReq
		req.Assign("t", 0, []int32{1})    // this node: done at once
		req.Assign("t", 1, []int32{1, 2}) // a broker that does not exist
		req.CancelAssign("missing", 0)    // unknown partition
		res, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := res["t"][0].Err; err != nil {
			t.Fatalf("reassigning to this node: %v", err)
		}
		if err := res["t"][1].Err; !errors.Is(err, kerr.InvalidReplicaAssignment) {
			t.Fatalf("reassigning to broker 2: %v, want INVALID_REPLICA_ASSIGNMENT", err)
		}
		if err := res["missing"][0].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("unknown partition: %v", err)
		}
		for _, tc := range []struct {
			name     string
			version  int16
			replicas []int32
			allowRF  bool
			want     error
		}{
			{"cancel", 0, nil, false, kerr.NoReassignmentInProgress},
			{"empty", 0, []int32{}, false, kerr.InvalidReplicaAssignment},
			{"duplicate", 1, []int32{1, 1}, true, kerr.InvalidReplicaAssignment},
			{"rf change refused", 1, []int32{1, 2}, false, kerr.InvalidReplicationFactor},
			{"same", 1, []int32{1}, false, nil},
		} {
			r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			r.Version, r.AllowReplicationFactorChange = tc.version, tc.allowRF
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = "t"
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Partition, rp.Replicas = 0, tc.replicas
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			got := kerr.ErrorForCode(serve(t, b, r).(*kmsg.AlterPartitionAssignmentsResponse).Topics[0].Partitions[0].ErrorCode)
			if !errors.Is(got, tc.want) && !(got == nil && tc.want == nil) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
		list, err := adm.ListPartitionReassignments(ctx, nil)
		if err != nil || len(list) != 0 {
			t.Fatalf("list: %v, %v; want none in progress", list, err)
		}
	})

	t.Run("describe-quorum", func(t *testing.T) {
		before := int64(-1)
		for v := int16(0); v <= 2; v++ {
			r := kmsg.NewPtrDescribeQuorumRequest()
			r.Version = v
			rt := kmsg.NewDescribeQuorumRequestTopic()
			rt.Topic = "__cluster_metadata"
			rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
			other := kmsg.NewDescribeQuorumRequestTopic()
			other.Topic = "t"
			other.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
			r.Topics = []kmsg.DescribeQuorumRequestTopic{rt, other}
			kr, err := newClient(t, addr).Request(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			resp := kr.(*kmsg.DescribeQuorumResponse)
			p := resp.Topics[0].Partitions[0]
			if resp.ErrorCode != 0 || p.ErrorCode != 0 || p.LeaderID != 1 || len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 1 || len(p.Observers) != 0 {
				t.Fatalf("v%d: %+v", v, resp)
			}
			if p.HighWatermark < before || p.CurrentVoters[0].LogEndOffset != p.HighWatermark {
				t.Fatalf("v%d: high watermark %d after %d, voter at %d", v, p.HighWatermark, before, p.CurrentVoters[0].LogEndOffset)
			}
			before = p.HighWatermark
			if c := resp.Topics[1].Partitions[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("v%d: a quorum for topic t: code %d", v, c)
			}
			if v >= 2 && (len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 || len(resp.Nodes[0].Listeners) != 1 || resp.Nodes[0].Listeners[0].Port == 0) {
				t.Fatalf("v2 nodes: %+v", resp.Nodes)
			}
		}
		// A topic change moves the quorum's high watermark.
		createTopic(t, b, "u", 1)
		r := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = "__cluster_metadata"
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		r.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
		if hw := serve(t, b, r).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0].HighWatermark; hw <= before {
			t.Fatalf("high watermark %d after a topic creation, was %d", hw, before)
		}
	})
}

// ListConfigResources lists topics, the broker and groups by type, and
// AlterReplicaLogDirs accepts only the data dir, at every version offered.
func TestListConfigResourcesAndLogDirs(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, b, "a", 1)
	createTopic(t, b, "b", 2)
	cl := newClient(t, addr)
	// A group with a commit, so ListGroups knows it.
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 8, "g1", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "a"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	serve(t, b, commit)

	list := func(v int16, types ...int8) *kmsg.ListConfigResourcesResponse {
		r := kmsg.NewPtrListConfigResourcesRequest()
		r.Version, r.ResourceTypes = v, types
		if v == 1 { // through kgo over TCP (it sends the newest, v1)
			kr, err := cl.Request(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			return kr.(*kmsg.ListConfigResourcesResponse)
		}
		return serve(t, b, r).(*kmsg.ListConfigResourcesResponse)
	}
	names := func(resp *kmsg.ListConfigResourcesResponse, typ int8) []string {
		var out []string
		for _, cr := range resp.ConfigResources {
			if cr.Type == typ {
				out = append(out, cr.Name)
			}
		}
		return out
	}
	if got := list(0); got.ErrorCode != 0 || len(got.ConfigResources) != 0 {
		t.Fatalf("v0 (client metrics): %+v, want none", got)
	}
	all := list(1)
	if fmt.Sprint(names(all, 2)) != "[a b]" || fmt.Sprint(names(all, 4)) != "[1]" || fmt.Sprint(names(all, 32)) != "[g1]" {
		t.Fatalf("v1 default types: topics %v brokers %v groups %v", names(all, 2), names(all, 4), names(all, 32))
	}
	if got := list(1, 2); len(got.ConfigResources) != 2 {
		t.Fatalf("topics only: %+v", got.ConfigResources)
	}
	if got := list(1, 99); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("type 99: code %d, want INVALID_REQUEST", got.ErrorCode)
	}

	for v := int16(1); v <= 2; v++ {
		r := kmsg.NewPtrAlterReplicaLogDirsRequest()
		r.Version = v
		for _, dir := range []string{b.cfg.DataDir, "/elsewhere"} {
			d := kmsg.NewAlterReplicaLogDirsRequestDir()
			d.Dir = dir
			dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
			dt.Topic, dt.Partitions = "b", []int32{1, 5}
			d.Topics = append(d.Topics, dt)
			r.Dirs = append(r.Dirs, d)
		}
		ps := serve(t, b, r).(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions
		want := []int16{0, kerr.ReplicaNotAvailable.Code, kerr.LogDirNotFound.Code, kerr.LogDirNotFound.Code}
		for i, p := range ps {
			if p.ErrorCode != want[i] {
				t.Fatalf("v%d result %d (partition %d): code %d, want %d", v, i, p.Partition, p.ErrorCode, want[i])
			}
		}
	}
}

// DescribeTopicPartitions pages through partitions with its cursor as the
// Java admin client does, over TCP.
func TestDescribeTopicPartitionsPaging(t *testing.T) {
	b := newTestBroker(t)
	cl := newClient(t, listen(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTopic(t, b, "a", 3)
	createTopic(t, b, "b", 2)
	createTopic(t, b, "c", 1)
	page := func(topics []string, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor) *kmsg.DescribeTopicPartitionsResponse {
		r := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, n := range topics {
			r.Topics = append(r.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: n})
		}
		r.ResponsePartitionLimit, r.Cursor = limit, cursor
		kr, err := cl.Request(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.DescribeTopicPartitionsResponse)
	}
	// All topics, two partitions a page: every partition once, in order.
	var got []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		resp := page(nil, 2, cursor)
		n := 0
		for _, st := range resp.Topics {
			for _, p := range st.Partitions {
				if p.LeaderID != 1 || len(p.ISR) != 1 || st.TopicID == [16]byte{} {
					t.Fatalf("%s-%d: %+v", *st.Topic, p.Partition, p)
				}
				got = append(got, fmt.Sprintf("%s-%d", *st.Topic, p.Partition))
				n++
			}
		}
		if n > 2 {
			t.Fatalf("a page of limit 2 held %d partitions", n)
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	if fmt.Sprint(got) != "[a-0 a-1 a-2 b-0 b-1 c-0]" {
		t.Fatalf("paged through %v", got)
	}
	// Named topics, one unknown.
	resp := page([]string{"c", "nope"}, 0, nil)
	if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "c" || resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code || resp.NextCursor != nil {
		t.Fatalf("named topics: %+v", resp.Topics)
	}
	// A cursor on a topic that was not asked for.
	resp = page([]string{"a"}, 0, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b"})
	if resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("cursor outside the topics: %+v", resp.Topics)
	}
}

// ApiVersions v3+ lists the features; UpdateFeatures accepts a no-op and
// refuses a change or an unknown feature with INVALID_UPDATE_VERSION.
func TestFeatures(t *testing.T) {
	b := newTestBroker(t)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 4, "t", "1"
	resp := serve(t, b, av).(*kmsg.ApiVersionsResponse)
	fin := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		fin[f.Name] = f.MaxVersionLevel
	}
	if fin["group.version"] != 1 || fin["share.version"] != 1 || resp.FinalizedFeaturesEpoch != 1 {
		t.Fatalf("finalized %v epoch %d", fin, resp.FinalizedFeaturesEpoch)
	}
	if fin["transaction.version"] != 2 {
		t.Fatalf("transaction.version finalized at %d, want 2 (a new Kafka 4.x cluster's)", fin["transaction.version"])
	}
	for v := int16(0); v <= 2; v++ {
		r := kmsg.NewPtrUpdateFeaturesRequest()
		r.Version = v
		for _, u := range []struct {
			name  string
			level int16
		}{{"group.version", 1}, {"group.version", 0}, {"no.such.feature", 1}} {
			fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			fu.Feature, fu.MaxVersionLevel = u.name, u.level
			r.FeatureUpdates = append(r.FeatureUpdates, fu)
		}
		got := serve(t, b, r).(*kmsg.UpdateFeaturesResponse)
		if v < 2 {
			codes := []int16{got.Results[0].ErrorCode, got.Results[1].ErrorCode, got.Results[2].ErrorCode}
			if codes[0] != 0 || codes[1] != kerr.InvalidUpdateVersion.Code || codes[2] != kerr.InvalidUpdateVersion.Code {
				t.Fatalf("v%d: codes %v", v, codes)
			}
		} else if got.ErrorCode != kerr.InvalidUpdateVersion.Code || got.ErrorMessage == nil {
			t.Fatalf("v2: code %d", got.ErrorCode)
		}
	}
}

// Broker configs include inter.broker.protocol.version (web consoles read
// it) with documentation when asked.
func TestBrokerConfigInterBrokerProtocolVersion(t *testing.T) {
	b := newTestBroker(t)
	r := kmsg.NewPtrDescribeConfigsRequest()
	r.Version, r.IncludeDocumentation = 4, true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	res.ConfigNames = []string{"inter.broker.protocol.version"}
	r.Resources = append(r.Resources, res)
	got := serve(t, b, r).(*kmsg.DescribeConfigsResponse).Resources[0]
	if got.ErrorCode != 0 || len(got.Configs) != 1 || got.Configs[0].Value == nil || *got.Configs[0].Value != configs.InterBrokerProtocolVersion || got.Configs[0].Documentation == nil {
		t.Fatalf("%+v", got)
	}
}
