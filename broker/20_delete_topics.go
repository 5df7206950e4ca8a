package broker

// DeleteTopics v0–v6.
//
// Deletes by name (v0–v5 TopicNames, v6 Topics[].Name) or by ID (v6
// Topics[].TopicID); which topic an entry names and the refusals before
// deletion are broker/internal/topics' ResolveDelete (its doc has Kafka's
// rules). Deletion closes the partition logs (waking long-polling
// fetches), removes the data and calls the OnTopicDeleted hooks before
// answering. On a full disk the deletion still works (it frees space; if
// the directory cannot be renamed, its topic.json is unlinked instead);
// only one that might not survive a restart is answered
// KAFKA_STORAGE_ERROR.

import (
	"context"
	"errors"

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
		name, shown, code, err := topics.ResolveDelete(&rt, topicsDeleting{b, az})
		if shown != nil {
			st.Topic = shown
		}
		st.ErrorCode = code
		var t *topic
		if code == 0 {
			t = b.lookupTopic(name, [16]byte{})
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

// topicsDeleting is the broker and a request's authorizer as
// DeleteTopics' resolution sees them (topics.Deleting).
type topicsDeleting struct {
	b  *Broker
	az *authz
}

func (d topicsDeleting) Exists(name string) bool      { return d.b.lookupTopic(name, [16]byte{}) != nil }
func (d topicsDeleting) MayDescribe(name string) bool { return d.az.topicVisible(opDescribe, name) }
func (d topicsDeleting) NameOf(id [16]byte) string {
	if t := d.b.lookupTopic("", id); t != nil {
		return t.name
	}
	return ""
}
func (d topicsDeleting) MayDelete(name string) error {
	if !d.az.topic(opDelete, name) {
		return errAuthorizationFailed
	}
	return nil
}
