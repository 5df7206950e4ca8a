package broker

// DeleteTopics v0–v6.
//
// Deletes by name (v0–v5 TopicNames, v6 Topics[].Name) or by ID (v6
// Topics[].TopicID). Unknown names: UNKNOWN_TOPIC_OR_PARTITION; unknown IDs:
// UNKNOWN_TOPIC_ID; both or neither given, or an internal topic:
// INVALID_REQUEST. With the authorizer on a topic needs DELETE
// (TOPIC_AUTHORIZATION_FAILED, before existence for a name). Deletion closes
// the partition logs (waking long-polling fetches), removes the data and
// calls the OnTopicDeleted hooks before answering. On a full disk the
// deletion still works (it frees space; if the directory cannot be renamed,
// its topic.json is unlinked instead); only one that might not survive a
// restart is answered KAFKA_STORAGE_ERROR.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topics"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteTopics(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteTopicsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	resp.Version = req.Version
	reqs := topics.DeleteRequested(r, req.Version)
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rt := range reqs {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var err error
		hasName, hasID := rt.Topic != nil && *rt.Topic != "", rt.TopicID != ([16]byte{})
		var t *topic
		switch {
		case hasName && hasID, !hasName && !hasID:
			st.ErrorCode, err = kerr.InvalidRequest.Code, fmt.Errorf("give exactly one of topic name and topic ID")
		case hasName && !az.topic(opDelete, *rt.Topic):
			st.ErrorCode, err = errTopicAuth, errAuthorizationFailed
		case hasName:
			if t = b.lookupTopic(*rt.Topic, [16]byte{}); t == nil {
				st.ErrorCode, err = kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", *rt.Topic)
			}
		default:
			if t = b.lookupTopic("", rt.TopicID); t == nil {
				st.ErrorCode, err = kerr.UnknownTopicID.Code, fmt.Errorf("unknown topic ID %s", uuidString(rt.TopicID))
			} else if !az.topic(opDelete, t.name) {
				// Without DESCRIBE the name is not revealed, as Kafka.
				if az.topicVisible(opDescribe, t.name) {
					name := t.name
					st.Topic = &name
				}
				st.ErrorCode, err, t = errTopicAuth, errAuthorizationFailed, nil
			}
		}
		if t != nil && isInternalTopic(t.name) {
			st.ErrorCode, err = kerr.InvalidRequest.Code, fmt.Errorf("internal topic %s cannot be deleted", t.name)
			t = nil
		}
		if t != nil && !b.mutationAllowed(req, int32(len(t.partitions())), req.Version >= 5) {
			st.ErrorCode, err = kerr.ThrottlingQuotaExceeded.Code, errThrottlingQuota
			t = nil
		}
		if t != nil {
			name := t.name
			st.Topic, st.TopicID = &name, t.id
			if derr := b.deleteTopic(t); errors.Is(derr, topics.ErrNotDeleted) {
				// Gone from the table, but it may be back after a
				// restart: not acknowledged.
				st.ErrorCode, err = kerr.KafkaStorageError.Code, derr
				b.log.Error("deleting topic", "topic", t.name, "err", derr)
			} else if derr != nil {
				// Leftover files are swept on the next start.
				b.log.Error("deleting topic data", "topic", t.name, "err", derr)
			} else {
				b.log.Info("deleted topic", "topic", t.name)
			}
		}
		if st.ErrorCode != 0 {
			if req.Version >= 5 {
				st.ErrorMessage = errMessage(err)
			}
			b.logBad(req, "delete topics rejected", "error", kerr.ErrorForCode(st.ErrorCode), "reason", err)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}
