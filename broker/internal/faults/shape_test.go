package faults

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Injected errors sit where Kafka puts them: per partition (topic IDs
// kept) for Fetch and Produce with no top-level code, per key for
// FindCoordinator v4+, per group for OffsetFetch v8+, top level elsewhere.
func TestFaultResponseShapes(t *testing.T) {
	id := [16]byte{1, 2, 3}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 13
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = id
	for _, p := range []int32{0, 3} {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = p
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft)
	fr := Response(fetch, 6).(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 || fr.Version != 13 || len(fr.Topics) != 1 || fr.Topics[0].TopicID != id || len(fr.Topics[0].Partitions) != 2 {
		t.Fatalf("fetch: %+v", fr)
	}
	for i, p := range fr.Topics[0].Partitions {
		if p.Partition != []int32{0, 3}[i] || p.ErrorCode != 6 || p.HighWatermark != -1 {
			t.Fatalf("fetch partition %d: %+v", i, p)
		}
	}
	if fr := Response(fetch, 70).(*kmsg.FetchResponse); fr.ErrorCode != 70 || len(fr.Topics) != 0 {
		t.Fatalf("fetch session error: %+v", fr)
	}

	prod := kmsg.NewPtrProduceRequest()
	prod.Version = 9
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition = 2
	pt.Partitions = append(pt.Partitions, pp)
	prod.Topics = append(prod.Topics, pt)
	pr := Response(prod, 56).(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || pr.Topics[0].Topic != "t" || pr.Topics[0].Partitions[0].Partition != 2 || pr.Topics[0].Partitions[0].ErrorCode != 56 {
		t.Fatalf("produce: %+v", pr)
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 4
	fc.CoordinatorKeys = []string{"a", "b"}
	fcr := Response(fc, 15).(*kmsg.FindCoordinatorResponse)
	if len(fcr.Coordinators) != 2 || fcr.Coordinators[1].Key != "b" || fcr.Coordinators[1].ErrorCode != 15 || fcr.Coordinators[1].NodeID != -1 {
		t.Fatalf("find coordinator v4: %+v", fcr)
	}

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = "g"
	of.Groups = append(of.Groups, g)
	ofr := Response(of, 14).(*kmsg.OffsetFetchResponse)
	if ofr.ErrorCode != 0 || len(ofr.Groups) != 1 || ofr.Groups[0].Group != "g" || ofr.Groups[0].ErrorCode != 14 {
		t.Fatalf("offset fetch v8: %+v", ofr)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	if r := Response(hb, 27).(*kmsg.HeartbeatResponse); r.ErrorCode != 27 {
		t.Fatalf("heartbeat: %+v", r)
	}

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	md.Topics = append(md.Topics, mt)
	if r := Response(md, 3).(*kmsg.MetadataResponse); len(r.Topics) != 1 || r.Topics[0].ErrorCode != 3 || *r.Topics[0].Topic != "t" {
		t.Fatalf("metadata: %+v", r)
	}
}

func TestKafkaErrorNames(t *testing.T) {
	for name, code := range map[string]int16{"NOT_LEADER_OR_FOLLOWER": 6, "NOT_LEADER_FOR_PARTITION": 6, "KAFKA_STORAGE_ERROR": 56, "UNKNOWN_SERVER_ERROR": -1} {
		if c, ok := ErrorCode(name); !ok || c != code {
			t.Errorf("%s: %d %v, want %d", name, c, ok, code)
		}
	}
	if _, ok := ErrorCode("NOPE"); ok {
		t.Error("NOPE parsed")
	}
	if ErrorName(6) != "NOT_LEADER_OR_FOLLOWER" {
		t.Errorf("name of 6: %s", ErrorName(6))
	}
}
