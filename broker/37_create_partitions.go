package broker

// CreatePartitions v0–v3.
//
// Grows a topic to Count partitions; what may be asked is checked by
// broker/internal/topics (CheckGrow, whose doc has Kafka's rules).
// ValidateOnly answers without creating. With the authorizer on a topic
// needs ALTER (TOPIC_AUTHORIZATION_FAILED). Partitions that cannot be
// written (a full disk) are KAFKA_STORAGE_ERROR and leave the topic as it
// was. error_message says why, in the KRaft controller's words where
// Kafka has them.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topics"
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
	t := b.lookupTopic(rt.Topic, [16]byte{})
	cur, rf := int32(-1), 0
	if t != nil && !dup {
		cur, rf = int32(len(t.partitions())), len(t.partitions()[0].place.Load().Replicas)
	}
	place, code, err := topics.CheckGrow(b.cl, rt, dup, cur, rf)
	if code != 0 {
		return code, err
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
