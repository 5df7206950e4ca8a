package broker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// shareSetup makes a topic with n records in one partition and a group
// that reads from the earliest offset.
func shareSetup(t *testing.T, b *Broker, topic, group string, n int) [16]byte {
	t.Helper()
	id := createTopic(t, b, topic, 1)
	recs := make([]testRec, n)
	for i := range recs {
		recs[i] = testRec{value: []byte{byte(i)}}
	}
	if p := produce(t, b, topic, 0, makeBatch(t, records.CodecNone, -1, 0, 0, recs...)); p.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	setGroupConfig(t, b, group, "share.auto.offset.reset", "earliest")
	return id
}

func setGroupConfig(t *testing.T, b *Broker, group, name, value string) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	return serve(t, b, req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
}

func shareHB(t *testing.T, b *Broker, v int16, group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version, req.GroupID, req.MemberID, req.MemberEpoch = v, group, member, epoch
	if topics != nil {
		req.SubscribedTopicNames = topics
	}
	return serve(t, b, req).(*kmsg.ShareGroupHeartbeatResponse)
}

type ack struct {
	first, last int64
	typ         int8
}

func shareFetch(t *testing.T, b *Broker, v int16, group, member string, epoch int32, id [16]byte, acks ...ack) *kmsg.ShareFetchResponse {
	t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = v, kmsg.StringPtr(group), kmsg.StringPtr(member), epoch
	req.MaxBytes, req.MaxRecords = 1<<20, 100
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewShareFetchRequestTopicPartition()
	for _, a := range acks {
		ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = a.first, a.last, []int8{a.typ}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return shareFetchResp(serve(t, b, req))
}

func shareAck(t *testing.T, b *Broker, v int16, group, member string, epoch int32, id [16]byte, acks ...ack) *kmsg.ShareAcknowledgeResponse {
	t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = v, kmsg.StringPtr(group), kmsg.StringPtr(member), epoch
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	for _, a := range acks {
		ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = a.first, a.last, []int8{a.typ}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return serve(t, b, req).(*kmsg.ShareAcknowledgeResponse)
}

func acquired(r *kmsg.ShareFetchResponse) []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord {
	var out []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.AcquiredRecords...)
		}
	}
	return out
}

func wantShareCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var w int16
	if want != nil {
		w = want.Code
	}
	if got != w {
		t.Errorf("%s: got %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

const member1 = "m1aaaaaaaaaaaaaaaaaaaaaa"

// The whole cycle at every version offered: join, fetch, ack in the next
// fetch and with ShareAcknowledge, describe, leave.
func TestShareAPIsEveryVersion(t *testing.T) {
	for v := lookupAPI(76).min; v <= lookupAPI(76).max; v++ {
		for fv := lookupAPI(78).min; fv <= lookupAPI(78).max; fv++ {
			b := newTestBroker(t)
			id := shareSetup(t, b, "t", "g", 10)
			hb := shareHB(t, b, v, "g", member1, 0, "t")
			wantShareCode(t, "join", hb.ErrorCode, nil)
			if hb.Assignment == nil || len(hb.Assignment.TopicPartitions) != 1 || hb.MemberEpoch <= 0 {
				t.Fatalf("join v%d: assignment %+v epoch %d", v, hb.Assignment, hb.MemberEpoch)
			}
			f := shareFetch(t, b, fv, "g", member1, 0, id)
			wantShareCode(t, "fetch", f.ErrorCode, nil)
			ar := acquired(f)
			if len(ar) != 1 || ar[0].FirstOffset != 0 || ar[0].LastOffset != 9 || ar[0].DeliveryCount != 1 {
				t.Fatalf("fetch v%d: acquired %+v", fv, ar)
			}
			if len(f.Topics[0].Partitions[0].Records) == 0 {
				t.Fatalf("fetch v%d: no record bytes", fv)
			}
			if f.AcquisitionLockTimeoutMillis != 30000 {
				t.Errorf("lock timeout %d", f.AcquisitionLockTimeoutMillis)
			}
			// Accept 0-4 piggy-backed; release 5-9 with ShareAcknowledge.
			f = shareFetch(t, b, fv, "g", member1, 1, id, ack{0, 4, 1})
			wantShareCode(t, "fetch with acks", f.ErrorCode, nil)
			wantShareCode(t, "piggy-backed ack", f.Topics[0].Partitions[0].AcknowledgeErrorCode, nil)
			av := min(fv, lookupAPI(79).max)
			a := shareAck(t, b, av, "g", member1, 2, id, ack{5, 9, 2})
			wantShareCode(t, "ack", a.ErrorCode, nil)
			wantShareCode(t, "ack partition", a.Topics[0].Partitions[0].ErrorCode, nil)
			// Released records come back with delivery count 2.
			f = shareFetch(t, b, fv, "g", member1, 3, id)
			ar = acquired(f)
			if len(ar) != 1 || ar[0].FirstOffset != 5 || ar[0].LastOffset != 9 || ar[0].DeliveryCount != 2 {
				t.Fatalf("refetch: acquired %+v", ar)
			}
			d := kmsg.NewPtrShareGroupDescribeRequest()
			d.Version, d.GroupIDs = lookupAPI(77).max, []string{"g", "nope"}
			dr := serve(t, b, d).(*kmsg.ShareGroupDescribeResponse)
			if g := dr.Groups[0]; g.ErrorCode != 0 || g.GroupState != "Stable" || len(g.Members) != 1 || g.Assignor != "simple" {
				t.Errorf("describe: %+v", g)
			}
			wantShareCode(t, "describe unknown", dr.Groups[1].ErrorCode, kerr.GroupIDNotFound)
			hb = shareHB(t, b, v, "g", member1, -1)
			wantShareCode(t, "leave", hb.ErrorCode, nil)
			if hb.MemberEpoch != -1 {
				t.Errorf("leave epoch %d", hb.MemberEpoch)
			}
		}
	}
}

func TestShareGroupHeartbeatErrors(t *testing.T) {
	b := newTestBroker(t)
	shareSetup(t, b, "t", "g", 1)
	wantShareCode(t, "empty group", shareHB(t, b, 1, "", member1, 0, "t").ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "empty member", shareHB(t, b, 1, "g", "", 0, "t").ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "epoch -2", shareHB(t, b, 1, "g", member1, -2, "t").ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "join without topics", shareHB(t, b, 1, "g", member1, 0).ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "unknown member", shareHB(t, b, 1, "g", member1, 3).ErrorCode, kerr.UnknownMemberID)
	hb := shareHB(t, b, 1, "g", member1, 0, "t")
	wantShareCode(t, "join", hb.ErrorCode, nil)
	wantShareCode(t, "fenced", shareHB(t, b, 1, "g", member1, hb.MemberEpoch+5).ErrorCode, kerr.FencedMemberEpoch)
	wantShareCode(t, "leave unknown", shareHB(t, b, 1, "g", "other", -1).ErrorCode, kerr.UnknownMemberID)

	// A classic group's ID is not a share group's.
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, "classic", -1
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "t"
	op := kmsg.NewOffsetCommitRequestTopicPartition()
	op.Offset = 1
	ot.Partitions = append(ot.Partitions, op)
	oc.Topics = append(oc.Topics, ot)
	serve(t, b, oc)
	wantShareCode(t, "classic group id", shareHB(t, b, 1, "classic", member1, 0, "t").ErrorCode, kerr.GroupIDNotFound)
}

func TestShareFetchErrors(t *testing.T) {
	b := newTestBroker(t)
	id := shareSetup(t, b, "t", "g", 5)
	wantShareCode(t, "empty member", shareFetch(t, b, 2, "g", "", 0, id).ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "no session", shareFetch(t, b, 2, "g", member1, 4, id).ErrorCode, kerr.ShareSessionNotFound)
	wantShareCode(t, "acks at epoch 0", shareFetch(t, b, 2, "g", member1, 0, id, ack{0, 0, 1}).ErrorCode, kerr.InvalidRequest)
	wantShareCode(t, "open", shareFetch(t, b, 2, "g", member1, 0, id).ErrorCode, nil)
	wantShareCode(t, "wrong epoch", shareFetch(t, b, 2, "g", member1, 7, id).ErrorCode, kerr.InvalidShareSessionEpoch)
	// A record another member holds, or outside the window.
	f := shareFetch(t, b, 2, "g", member1, 1, id, ack{10, 12, 1})
	wantShareCode(t, "ack outside window", f.Topics[0].Partitions[0].AcknowledgeErrorCode, kerr.InvalidRecordState)
	wantShareCode(t, "other opens", shareFetch(t, b, 2, "g", "m2", 0, id).ErrorCode, nil)
	f = shareFetch(t, b, 2, "g", "m2", 1, id, ack{0, 0, 1})
	wantShareCode(t, "ack of another member's record", f.Topics[0].Partitions[0].AcknowledgeErrorCode, kerr.InvalidRecordState)
	f = shareFetch(t, b, 2, "g", member1, 2, id, ack{0, 0, 9})
	wantShareCode(t, "unknown ack type", f.Topics[0].Partitions[0].AcknowledgeErrorCode, kerr.InvalidRequest)
	f = shareFetch(t, b, 2, "g", member1, 3, id, ack{0, 0, 4})
	wantShareCode(t, "renew without IsRenewAck", f.Topics[0].Partitions[0].AcknowledgeErrorCode, kerr.InvalidRequest)
	// Renew (v2): no fetch parameters allowed.
	req := kmsg.NewPtrShareFetchRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch, req.IsRenewAck, req.MaxRecords = 2, kmsg.StringPtr("g"), kmsg.StringPtr(member1), 4, true, 5
	req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 0, 0, 0
	wantShareCode(t, "renew with MaxRecords", shareFetchResp(serve(t, b, req)).ErrorCode, kerr.InvalidRequest)
	req.MaxRecords, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 0, 0, 0, 0
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewShareFetchRequestTopicPartition()
	ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = 0, 4, []int8{4}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	r := shareFetchResp(serve(t, b, req))
	wantShareCode(t, "renew", r.ErrorCode, nil)
	wantShareCode(t, "renew ack", r.Topics[0].Partitions[0].AcknowledgeErrorCode, nil)
	if len(acquired(r)) != 0 {
		t.Errorf("a renewal fetched records")
	}
	// Unknown topic ID in the session.
	f = shareFetch(t, b, 2, "g", "m3", 0, [16]byte{9})
	wantShareCode(t, "unknown topic id", f.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicID)
	// Close: what member1 holds is released at once (count stays 1, +1 on the next delivery).
	wantShareCode(t, "close", shareFetch(t, b, 2, "g", member1, 5, id).ErrorCode, nil)
	wantShareCode(t, "close", shareFetch(t, b, 2, "g", member1, -1, id).ErrorCode, nil)
	f = shareFetch(t, b, 2, "g", "m2", 2, id)
	if ar := acquired(f); len(ar) != 1 || ar[0].FirstOffset != 0 || ar[0].LastOffset != 4 || ar[0].DeliveryCount != 2 {
		t.Errorf("after close: %+v", ar)
	}
	wantShareCode(t, "closed session", shareFetch(t, b, 2, "g", member1, 6, id).ErrorCode, kerr.ShareSessionNotFound)
}

func TestShareAcknowledgeErrors(t *testing.T) {
	b := newTestBroker(t)
	id := shareSetup(t, b, "t", "g", 5)
	for v := lookupAPI(79).min; v <= lookupAPI(79).max; v++ {
		wantShareCode(t, "epoch 0", shareAck(t, b, v, "g", member1, 0, id, ack{0, 0, 1}).ErrorCode, kerr.InvalidShareSessionEpoch)
		wantShareCode(t, "no session", shareAck(t, b, v, "g", member1, 1, id, ack{0, 0, 1}).ErrorCode, kerr.ShareSessionNotFound)
		wantShareCode(t, "empty group", shareAck(t, b, v, "", member1, 1, id).ErrorCode, kerr.InvalidRequest)
	}
	shareFetch(t, b, 2, "g", member1, 0, id)
	a := shareAck(t, b, 2, "g", member1, 1, id, ack{3, 1, 1})
	wantShareCode(t, "last before first", a.Topics[0].Partitions[0].ErrorCode, kerr.InvalidRequest)
	a = shareAck(t, b, 2, "g", member1, 2, id, ack{0, 4, 3})
	wantShareCode(t, "reject", a.Topics[0].Partitions[0].ErrorCode, nil)
	a = shareAck(t, b, 2, "g", member1, 3, id, ack{0, 0, 1})
	wantShareCode(t, "ack of archived", a.Topics[0].Partitions[0].ErrorCode, kerr.InvalidRecordState)
	wantShareCode(t, "stale epoch", shareAck(t, b, 2, "g", member1, 3, id).ErrorCode, kerr.InvalidShareSessionEpoch)
}

// The delivery count limit: a record released that often is archived.
func TestShareDeliveryLimit(t *testing.T) {
	b := newTestBroker(t)
	id := shareSetup(t, b, "t", "g", 1)
	wantShareCode(t, "limit", setGroupConfig(t, b, "g", "share.delivery.count.limit", "2"), nil)
	wantShareCode(t, "bad limit", setGroupConfig(t, b, "g", "share.delivery.count.limit", "x"), kerr.InvalidConfig)
	wantShareCode(t, "bad reset", setGroupConfig(t, b, "g", "share.auto.offset.reset", "middle"), kerr.InvalidConfig)
	wantShareCode(t, "unknown", setGroupConfig(t, b, "g", "share.nope", "1"), kerr.InvalidConfig)
	shareFetch(t, b, 2, "g", member1, 0, id)
	shareFetch(t, b, 2, "g", member1, 1, id, ack{0, 0, 2})
	f := shareFetch(t, b, 2, "g", member1, 2, id, ack{0, 0, 2})
	// Delivered twice and released: archived, nothing left.
	if ar := acquired(f); len(ar) != 0 {
		t.Errorf("record past the delivery limit acquired again: %+v", ar)
	}
	if spso := describeSPSO(t, b, "g", "t"); spso != 1 {
		t.Errorf("SPSO %d, want 1", spso)
	}
}

func describeSPSO(t *testing.T, b *Broker, group, topic string) int64 {
	t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := serve(t, b, req).(*kmsg.DescribeShareGroupOffsetsResponse)
	if c := resp.Groups[0].ErrorCode; c != 0 {
		t.Fatalf("describe offsets: %v", kerr.ErrorForCode(c))
	}
	return resp.Groups[0].Topics[0].Partitions[0].StartOffset
}

func TestShareGroupOffsetsAPIs(t *testing.T) {
	b := newTestBroker(t)
	shareSetup(t, b, "t", "g", 10)
	alter := func(group string, off int64) *kmsg.AlterShareGroupOffsetsResponse {
		req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		req.GroupID = group
		rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
		rp.StartOffset = off
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.AlterShareGroupOffsetsResponse)
	}
	a := alter("g", 4)
	wantShareCode(t, "alter", a.ErrorCode, nil)
	wantShareCode(t, "alter partition", a.Topics[0].Partitions[0].ErrorCode, nil)
	wantShareCode(t, "alter past the end", alter("g", 11).Topics[0].Partitions[0].ErrorCode, kerr.InvalidRequest)
	for v := lookupAPI(90).min; v <= lookupAPI(90).max; v++ {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		req.Version = v
		rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		rg.GroupID = "g"
		req.Groups = append(req.Groups, rg, kmsg.DescribeShareGroupOffsetsRequestGroup{GroupID: "none"})
		resp := serve(t, b, req).(*kmsg.DescribeShareGroupOffsetsResponse)
		if g := resp.Groups[0]; g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Partitions[0].StartOffset != 4 {
			t.Errorf("describe v%d: %+v", v, g)
		}
		if v >= 1 && resp.Groups[0].Topics[0].Partitions[0].Lag != 6 {
			t.Errorf("lag %d, want 6", resp.Groups[0].Topics[0].Partitions[0].Lag)
		}
		wantShareCode(t, "describe unknown group", resp.Groups[1].ErrorCode, kerr.GroupIDNotFound)
	}
	// A member makes the group non-empty.
	wantShareCode(t, "join", shareHB(t, b, 1, "g", member1, 0, "t").ErrorCode, nil)
	wantShareCode(t, "alter non-empty", alter("g", 5).ErrorCode, kerr.NonEmptyGroup)
	del := func(group string) *kmsg.DeleteShareGroupOffsetsResponse {
		req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		req.GroupID = group
		req.Topics = append(req.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: "t"})
		return serve(t, b, req).(*kmsg.DeleteShareGroupOffsetsResponse)
	}
	wantShareCode(t, "delete non-empty", del("g").ErrorCode, kerr.NonEmptyGroup)
	wantShareCode(t, "delete unknown", del("zzz").ErrorCode, kerr.GroupIDNotFound)

	// ListGroups reports the share group; DeleteGroups refuses it while
	// it has members, then deletes it.
	lg := serve(t, b, &kmsg.ListGroupsRequest{Version: 5}).(*kmsg.ListGroupsResponse)
	found := false
	for _, g := range lg.Groups {
		if g.Group == "g" {
			found = g.GroupType == "share" && g.GroupState == "Stable"
		}
	}
	if !found {
		t.Errorf("ListGroups: share group missing or wrong: %+v", lg.Groups)
	}
	dg := &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"g"}}
	wantShareCode(t, "delete group with members", serve(t, b, dg).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantShareCode(t, "leave", shareHB(t, b, 1, "g", member1, -1).ErrorCode, nil)
	d := del("g")
	wantShareCode(t, "delete offsets", d.ErrorCode, nil)
	wantShareCode(t, "delete offsets topic", d.Topics[0].ErrorCode, nil)
	wantShareCode(t, "delete group", serve(t, b, dg).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, nil)
	wantShareCode(t, "deleted", serve(t, b, dg).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, kerr.GroupIDNotFound)
}

// Restart: accepted records stay done, acquired ones come back with their
// delivery count, configs survive.
func TestShareStateSurvivesRestart(t *testing.T) {
	fs := vfs.NewMem()
	b := newTestBroker(t, func(c *Config) { c.FS = fs })
	id := shareSetup(t, b, "t", "g", 10)
	shareFetch(t, b, 2, "g", member1, 0, id)
	shareAck(t, b, 2, "g", member1, 1, id, ack{0, 2, 1}, ack{3, 3, 3}, ack{4, 4, 2})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2 := newTestBroker(t, func(c *Config) { c.FS = fs })
	if spso := describeSPSO(t, b2, "g", "t"); spso != 4 {
		t.Errorf("SPSO after restart %d, want 4", spso)
	}
	f := shareFetch(t, b2, 2, "g", member1, 0, id)
	ar := acquired(f)
	if len(ar) != 1 || ar[0].FirstOffset != 4 || ar[0].LastOffset != 9 || ar[0].DeliveryCount != 2 {
		t.Errorf("after restart acquired %+v, want 4-9 at delivery count 2", ar)
	}
}

// A share group's ID is not a classic or consumer group's.
func TestShareGroupIDNamespace(t *testing.T) {
	b := newTestBroker(t)
	shareSetup(t, b, "t", "sg", 1)
	shareSetupJoin := shareHB(t, b, 1, "sg", member1, 0, "t")
	wantShareCode(t, "join share", shareSetupJoin.ErrorCode, nil)

	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = 9, "sg", 10000, 10000, "consumer"
	jg.MemberID = ""
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	wantShareCode(t, "JoinGroup", serve(t, b, jg).(*kmsg.JoinGroupResponse).ErrorCode, kerr.GroupIDNotFound)

	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Version, cg.Group, cg.MemberID, cg.MemberEpoch, cg.RebalanceTimeoutMillis, cg.SubscribedTopicNames = 1, "sg", member1, 0, 10000, []string{"t"}
	wantShareCode(t, "ConsumerGroupHeartbeat", serve(t, b, cg).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode, kerr.GroupIDNotFound)

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, "sg", -1
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "t"
	ot.Partitions = append(ot.Partitions, kmsg.OffsetCommitRequestTopicPartition{Offset: 1})
	oc.Topics = append(oc.Topics, ot)
	wantShareCode(t, "OffsetCommit", serve(t, b, oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, kerr.GroupIDNotFound)

	// DescribeConfigs on the GROUP resource reports the share configs.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "sg"
	dc.Resources = append(dc.Resources, dr)
	got := map[string]string{}
	for _, c := range serve(t, b, dc).(*kmsg.DescribeConfigsResponse).Resources[0].Configs {
		got[c.Name] = deref(c.Value)
	}
	if got["share.auto.offset.reset"] != "earliest" || got["share.record.lock.duration.ms"] != "30000" {
		t.Errorf("group configs %v", got)
	}
}

// Group configs are bounded as Kafka bounds them.
func TestShareGroupConfigBounds(t *testing.T) {
	b := newTestBroker(t)
	for _, c := range []struct {
		name, value string
		want        *kerr.Error
	}{
		{"share.record.lock.duration.ms", "15000", nil},
		{"share.record.lock.duration.ms", "14999", kerr.InvalidConfig},
		{"share.record.lock.duration.ms", "60001", kerr.InvalidConfig},
		{"share.session.timeout.ms", "45000", nil},
		{"share.session.timeout.ms", "1000", kerr.InvalidConfig},
		{"share.heartbeat.interval.ms", "16000", kerr.InvalidConfig},
		{"share.isolation.level", "read_uncommitted", nil},
		{"share.isolation.level", "read_committed", nil},
		{"share.isolation.level", "READ_COMMITTED", kerr.InvalidConfig},
		{"share.delivery.count.limit", "11", kerr.InvalidConfig},
	} {
		wantShareCode(t, c.name+"="+c.value, setGroupConfig(t, b, "g", c.name, c.value), c.want)
	}
	lowered := newTestBroker(t, func(cfg *Config) { cfg.Groups.ShareMinRecordLockDuration = time.Second })
	wantShareCode(t, "lowered minimum", setGroupConfig(t, lowered, "g", "share.record.lock.duration.ms", "1000"), nil)
}

// With a test clock: a lock past share.record.lock.duration.ms releases
// its records (the sweeper runs on a real 200 ms ticker and reads the
// clock), and a member silent past share.session.timeout.ms is removed.
func TestShareLockAndSessionExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	b := newTestBroker(t, func(c *Config) { c.Now = clock })
	id := shareSetup(t, b, "t", "g", 3)
	wantShareCode(t, "join", shareHB(t, b, 1, "g", member1, 0, "t").ErrorCode, nil)
	if ar := acquired(shareFetch(t, b, 2, "g", member1, 0, id)); len(ar) != 1 {
		t.Fatalf("acquired %+v", ar)
	}
	advance(31 * time.Second) // past the 30 s lock
	// A waiting fetch by another member gets the expired records once
	// the sweeper has released them.
	req := kmsg.NewPtrShareFetchRequest()
	req.Version, req.GroupID, req.MemberID, req.MaxWaitMillis, req.MaxRecords, req.MaxBytes = 2, kmsg.StringPtr("g"), kmsg.StringPtr("m2"), 10000, 10, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = id
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	ar := acquired(shareFetchResp(serve(t, b, req)))
	if len(ar) != 1 || ar[0].FirstOffset != 0 || ar[0].LastOffset != 2 || ar[0].DeliveryCount != 2 {
		t.Fatalf("after lock expiry: %+v", ar)
	}
	advance(46 * time.Second) // past the 45 s session timeout, no heartbeat
	deadline := time.Now().Add(10 * time.Second)
	// A fenced heartbeat (wrong epoch) does not keep the member alive.
	for shareHB(t, b, 1, "g", member1, 999).ErrorCode != kerr.UnknownMemberID.Code {
		if time.Now().After(deadline) {
			t.Fatal("member not removed after its session timeout")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shareWire sends share requests over one real TCP connection (the share
// session is tied to it), through a kgo client's broker handle.
type shareWire struct {
	t  *testing.T
	br *kgo.Broker
}

func newShareWire(t *testing.T, addr string) *shareWire {
	t.Helper()
	cl := newClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil || len(md.Brokers) == 0 {
		t.Fatalf("metadata: %v", err)
	}
	return &shareWire{t, cl.Broker(int(md.Brokers[0].NodeID))}
}

// fetch sends a ShareFetch v1 (librdkafka's version) for the given
// partitions of topic id.
func (w *shareWire) fetch(group, member string, epoch int32, id [16]byte, parts []int32, maxBytes, maxRecords int32) *kmsg.ShareFetchResponse {
	w.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version, req.GroupID, req.MemberID, req.ShareSessionEpoch = 1, kmsg.StringPtr(group), kmsg.StringPtr(member), epoch
	req.MaxBytes, req.MaxRecords, req.BatchSize, req.MinBytes = maxBytes, maxRecords, maxRecords, 1
	if epoch == 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		for _, p := range parts {
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := w.br.Request(ctx, req)
	if err != nil {
		w.t.Fatalf("share fetch: %v", err)
	}
	r := shareFetchResp(resp)
	if r.ErrorCode != 0 {
		w.t.Fatalf("share fetch: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	return r
}

func sharePartOut(r *kmsg.ShareFetchResponse, p int32) *kmsg.ShareFetchResponseTopicPartition {
	for _, t := range r.Topics {
		for i := range t.Partitions {
			if t.Partitions[i].Partition == p {
				return &t.Partitions[i]
			}
		}
	}
	return nil
}

// Over the wire: a partition with nothing to deliver carries empty, not
// null, records (librdkafka drops a whole response with a null one);
// MaxBytes bounds the record bytes as Kafka's log read does (the first
// batch always, then whole batches that fit), the records past it are
// not acquired and keep their delivery count; MaxBytes 0 acquires none.
func TestShareFetchRecordsAndMaxBytes(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	id := createTopic(t, b, "t", 2)
	for i := range 10 {
		if p := produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte{byte(i), 1, 2, 3}})); p.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
		}
	}
	setGroupConfig(t, b, "g", "share.auto.offset.reset", "earliest")
	wantShareCode(t, "join", shareHB(t, b, 1, "g", member1, 0, "t").ErrorCode, nil)
	w := newShareWire(t, addr)

	r := w.fetch("g", member1, 0, id, []int32{0, 1}, 1, 500)
	p0, p1 := sharePartOut(r, 0), sharePartOut(r, 1)
	if p0 == nil || p1 == nil {
		t.Fatalf("partitions missing: %+v", r.Topics)
	}
	if p1.Records == nil || len(p1.Records) != 0 || len(p1.AcquiredRecords) != 0 {
		t.Fatalf("empty partition: records %v (nil %v), acquired %+v", p1.Records, p1.Records == nil, p1.AcquiredRecords)
	}
	if got := p0.AcquiredRecords; len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 0 || got[0].DeliveryCount != 1 {
		t.Fatalf("MaxBytes=1: acquired %+v, want offset 0 only", got)
	}
	if end := share.BatchesEnd(p0.Records); end != 1 {
		t.Fatalf("MaxBytes=1: records end at %d, want one batch", end)
	}
	one := len(p0.Records)

	// Room for two batches and a bit: two.
	r = w.fetch("g", member1, 1, id, nil, int32(2*one+one/2), 500)
	if got := sharePartOut(r, 0).AcquiredRecords; len(got) != 1 || got[0].FirstOffset != 1 || got[0].LastOffset != 2 || got[0].DeliveryCount != 1 {
		t.Fatalf("MaxBytes=2.5 batches: acquired %+v, want 1..2 first delivery", got)
	}
	r = w.fetch("g", member1, 2, id, nil, 0, 500)
	if got := acquired(r); len(got) != 0 {
		t.Fatalf("MaxBytes=0: acquired %+v", got)
	}
	r = w.fetch("g", member1, 3, id, nil, 1<<20, 500)
	if got := sharePartOut(r, 0).AcquiredRecords; len(got) != 1 || got[0].FirstOffset != 3 || got[0].LastOffset != 9 || got[0].DeliveryCount != 1 {
		t.Fatalf("rest: acquired %+v, want 3..9 first delivery", got)
	}
}

// share.isolation.level=read_committed: records up to the last stable
// offset only, and those of an aborted transaction are archived, never
// delivered; read_uncommitted gets everything up to the high watermark.
func TestShareReadCommitted(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	id := createTopic(t, b, "t", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tx := newClient(t, addr, kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("t"))
	txn := func(vals []string, commit kgo.TransactionEndTry, end bool) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if end {
			if err := tx.EndTransaction(ctx, commit); err != nil {
				t.Fatal(err)
			}
		}
	}
	txn([]string{"a0", "a1", "a2"}, kgo.TryAbort, true)   // 0..2, abort marker 3
	txn([]string{"c0", "c1"}, kgo.TryCommit, true)        // 4..5, commit marker 6
	txn([]string{"open0", "open1"}, kgo.TryCommit, false) // 7..8, open: LSO 7

	for _, g := range []string{"rc", "ru"} {
		setGroupConfig(t, b, g, "share.auto.offset.reset", "earliest")
		wantShareCode(t, "join "+g, shareHB(t, b, 1, g, member1, 0, "t").ErrorCode, nil)
	}
	wantShareCode(t, "isolation", setGroupConfig(t, b, "rc", "share.isolation.level", "read_committed"), nil)
	wantShareCode(t, "bad isolation", setGroupConfig(t, b, "rc", "share.isolation.level", "snapshot"), kerr.InvalidConfig)
	w := newShareWire(t, addr)

	offsets := func(r *kmsg.ShareFetchResponse) []int64 {
		var out []int64
		for _, a := range acquired(r) {
			for o := a.FirstOffset; o <= a.LastOffset; o++ {
				out = append(out, o)
			}
		}
		return out
	}
	got := offsets(w.fetch("rc", member1, 0, id, []int32{0}, 1<<20, 500))
	for _, o := range got {
		if o <= 2 || o >= 7 {
			t.Fatalf("read_committed acquired %v: offsets 0..2 are aborted, 7.. past the LSO", got)
		}
	}
	if !slices.Contains(got, 4) || !slices.Contains(got, 5) {
		t.Fatalf("read_committed acquired %v, want the committed 4 and 5", got)
	}
	if got := describeSPSO(t, b, "rc", "t"); got != 0 && got < 3 {
		t.Fatalf("SPSO %d", got)
	}
	if got := offsets(w.fetch("ru", member1, 0, id, []int32{0}, 1<<20, 500)); len(got) != 9 || got[0] != 0 || got[8] != 8 {
		t.Fatalf("read_uncommitted acquired %v, want 0..8", got)
	}
	// Once the open transaction commits, read_committed gets it; the
	// aborted records never come back.
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var more []int64
	for epoch := int32(1); len(more) == 0 && time.Now().Before(deadline); epoch++ {
		more = offsets(w.fetch("rc", member1, epoch, id, nil, 1<<20, 500))
	}
	if !slices.Contains(more, 7) || !slices.Contains(more, 8) || slices.ContainsFunc(more, func(o int64) bool { return o <= 2 }) {
		t.Fatalf("after commit, read_committed acquired %v", more)
	}
}

// A closing consumer sends its last acknowledgements (epoch -1) and its
// leave at once; a leave that arrives first keeps the session, so those
// acknowledgements still apply (as with Kafka, whose coordinator releases
// the session only once the leave is written). Meanwhile the session
// takes nothing but its close.
func TestShareAcksAfterLeave(t *testing.T) {
	b := newTestBroker(t)
	id := shareSetup(t, b, "t", "g", 4)
	wantShareCode(t, "join", shareHB(t, b, 1, "g", member1, 0, "t").ErrorCode, nil)
	if ar := acquired(shareFetch(t, b, 1, "g", member1, 0, id)); len(ar) != 1 || ar[0].LastOffset != 3 {
		t.Fatalf("acquired %+v", ar)
	}
	wantShareCode(t, "leave", shareHB(t, b, 1, "g", member1, -1).ErrorCode, nil)
	wantShareCode(t, "fetch after leave", shareFetch(t, b, 1, "g", member1, 1, id).ErrorCode, kerr.ShareSessionNotFound)
	r := shareAck(t, b, 1, "g", member1, -1, id, ack{0, 3, 1})
	wantShareCode(t, "closing ack", r.ErrorCode, nil)
	wantShareCode(t, "closing ack partition", r.Topics[0].Partitions[0].ErrorCode, nil)
	if spso := describeSPSO(t, b, "g", "t"); spso != 4 {
		t.Fatalf("SPSO %d after the closing acks, want 4", spso)
	}
	wantShareCode(t, "session closed", shareAck(t, b, 1, "g", member1, -1, id, ack{0, 0, 1}).ErrorCode, kerr.ShareSessionNotFound)
}
