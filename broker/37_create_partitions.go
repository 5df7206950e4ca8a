package broker

// CreatePartitions v0–v3.
//
// Grows a topic to Count partitions. Unknown topic:
// UNKNOWN_TOPIC_OR_PARTITION; a topic named twice: INVALID_REQUEST; Count
// not above the current count: INVALID_PARTITIONS; an assignment that is
// not one [this node] list per new partition: INVALID_REPLICA_ASSIGNMENT.
// ValidateOnly answers without creating. With the authorizer on a topic
// needs ALTER (TOPIC_AUTHORIZATION_FAILED). Partitions that cannot be
// written (a full disk) are KAFKA_STORAGE_ERROR and leave the topic as it
// was. error_message says why, in the KRaft controller's words where
// Kafka has them.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleCreatePartitions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.CreatePartitionsRequest)
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	resp.Version = req.Version
	seen := map[string]int{}
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rt := range r.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var code int16
		var err error
		if seen[rt.Topic] == 1 && !az.topic(opAlter, rt.Topic) {
			code, err = errTopicAuth, errAuthorizationFailed
		} else {
			code, err = b.createPartitions(req, &rt, seen[rt.Topic] > 1, r.ValidateOnly)
		}
		if code != 0 {
			st.ErrorCode, st.ErrorMessage = code, errMessage(err)
			b.logBad(req, "create partitions rejected", "topic", rt.Topic, "error", kerr.ErrorForCode(code), "reason", err)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}

func (b *Broker) createPartitions(req *protocol.Request, rt *kmsg.CreatePartitionsRequestTopic, dup, validateOnly bool) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, errors.New("Duplicate topic name.")
	}
	t := b.lookupTopic(rt.Topic, [16]byte{})
	if t == nil {
		return kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", rt.Topic)
	}
	cur := int32(len(t.partitions()))
	switch {
	case rt.Count < cur:
		return kerr.InvalidPartitions.Code, fmt.Errorf("The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, cur, rt.Count)
	case rt.Count == cur:
		return kerr.InvalidPartitions.Code, fmt.Errorf("Topic already has %d partition(s).", cur)
	case rt.Count > maxPartitionsPerTopic:
		return kerr.InvalidPartitions.Code, fmt.Errorf("%d partitions: at most %d per topic are supported", rt.Count, maxPartitionsPerTopic)
	}
	var place [][]int32
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != rt.Count-cur {
			return kerr.InvalidReplicaAssignment.Code, fmt.Errorf("increasing the number of partitions by %d but %d assignments provided", rt.Count-cur, len(rt.Assignment))
		}
		rf := len(t.partitions()[0].place.Load().Replicas)
		for _, a := range rt.Assignment {
			if err := b.checkReplicas(a.Replicas, rf); err != nil {
				return kerr.InvalidReplicaAssignment.Code, err
			}
			place = append(place, a.Replicas)
		}
	}
	if validateOnly {
		return 0, nil
	}
	if !b.mutationAllowed(req, rt.Count-cur, req.Version >= 3) {
		return kerr.ThrottlingQuotaExceeded.Code, errThrottlingQuota
	}
	if err := b.addPartitions(t, rt.Count, place); err != nil {
		b.log.Error("creating partitions", "topic", t.name, "err", err)
		return createErrCode(err), err
	}
	b.log.Info("created partitions", "topic", t.name, "count", rt.Count)
	return 0, nil
}
