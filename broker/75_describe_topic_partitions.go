package broker

// DescribeTopicPartitions v0 (KIP-966), which the Java admin client's
// describeTopics uses since 3.8.
//
// As Kafka's DescribeTopicPartitionsRequestHandler: the named topics (all
// topics when none are named) in name order, starting at the cursor's
// topic and partition, at most ResponsePartitionLimit partitions (capped
// at 2000, Kafka's max.request.partition.size.limit) in all; where that
// cuts the list, NextCursor names the first partition left out. An unknown
// named topic is UNKNOWN_TOPIC_OR_PARTITION with no partitions; a cursor
// topic that is not among the named ones is INVALID_REQUEST. Every
// partition has this node as its one replica, leader and ISR, no
// eligible leader replicas beyond it (ELR empty) and nothing offline.
// With the authorizer on, a listing shows only topics the principal may
// DESCRIBE and a named one it may not is TOPIC_AUTHORIZATION_FAILED.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// maxDescribePartitions is Kafka's max.request.partition.size.limit.
const maxDescribePartitions = 2000

func (b *Broker) handleDescribeTopicPartitions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeTopicPartitionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	resp.Version = req.Version
	tt := b.topics.Load()
	az := b.authorizer(req)
	var names []string
	if len(r.Topics) == 0 {
		for n := range tt.byName {
			if az.topicVisible(opDescribe, n) {
				names = append(names, n)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, rt := range r.Topics {
			if !seen[rt.Topic] {
				seen[rt.Topic] = true
				names = append(names, rt.Topic)
			}
		}
		if r.Cursor != nil && !seen[r.Cursor.Topic] {
			b.logBad(req, "describe topic partitions: cursor topic not requested", "cursor", r.Cursor.Topic)
			for _, n := range names {
				st := kmsg.NewDescribeTopicPartitionsResponseTopic()
				st.Topic, st.ErrorCode = kmsg.StringPtr(n), kerr.InvalidRequest.Code
				resp.Topics = append(resp.Topics, st)
			}
			return protocol.Reply{Response: resp}
		}
	}
	sort.Strings(names)
	limit := int(r.ResponsePartitionLimit)
	if limit <= 0 || limit > maxDescribePartitions {
		limit = maxDescribePartitions
	}
	firstPart := int32(0)
	if r.Cursor != nil {
		i := sort.SearchStrings(names, r.Cursor.Topic)
		names = names[i:]
		firstPart = max(r.Cursor.Partition, 0)
	}
	left := limit
	for i, n := range names {
		st := kmsg.NewDescribeTopicPartitionsResponseTopic()
		st.Topic = kmsg.StringPtr(n)
		t := tt.byName[n]
		if !az.topic(opDescribe, n) {
			st.ErrorCode = errTopicAuth
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if t == nil {
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.TopicID, st.IsInternal, st.AuthorizedOperations = t.id, isInternalTopic(n), az.authorizedOps(true, kmsg.ACLResourceTypeTopic, n)
		start := int32(0)
		if i == 0 {
			start = firstPart
		}
		ps := t.partitions()
		st.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		for p := start; p < int32(len(ps)); p++ {
			if left == 0 {
				resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: n, Partition: p}
				break
			}
			sp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			pl := ps[p].place.Load()
			sp.Partition, sp.LeaderID, sp.LeaderEpoch = p, pl.Leader, pl.Epoch
			sp.Replicas, sp.ISR = pl.Replicas, pl.ISR
			sp.EligibleLeaderReplicas, sp.LastKnownELR, sp.OfflineReplicas = []int32{}, []int32{}, b.offlineReplicas(pl)
			if pl.Leader < 0 {
				sp.ErrorCode = kerr.LeaderNotAvailable.Code
			}
			st.Partitions = append(st.Partitions, sp)
			left--
		}
		resp.Topics = append(resp.Topics, st)
		if resp.NextCursor != nil {
			break
		}
		if left == 0 && i+1 < len(names) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: names[i+1], Partition: 0}
			break
		}
	}
	return protocol.Reply{Response: resp}
}
