package broker

// CreateTopics v0–v7.
//
// Validation is broker/internal/topics' (ValidateCreate, whose doc has
// Kafka's rules); here the authorizer, quotas and the answer.
// ValidateOnly (v1+) answers as if created. v5+ reports the partition
// count, replication factor and every config; v7 the topic ID. With the
// authorizer on, a topic needs CREATE on the cluster or on itself
// (TOPIC_AUTHORIZATION_FAILED), and its configs are answered only with
// DESCRIBE_CONFIGS (else the config error code is
// TOPIC_AUTHORIZATION_FAILED), as in Kafka. A topic whose files cannot be
// written (a full disk) is KAFKA_STORAGE_ERROR, which clients retry, and
// leaves nothing behind; auto-creation (Metadata) answers the same.
// Each error carries its reason in error_message.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/broker/internal/topics"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleCreateTopics(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.CreateTopicsRequest)
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	resp.Version = req.Version

	seen := map[string]int{}
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	az := b.authorizer(req)
	clusterCreate := az.cluster(opCreate)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rt := range r.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		var (
			code int16
			err  error
			c    topics.Create
		)
		if seen[rt.Topic] == 1 && !clusterCreate && !az.topic(opCreate, rt.Topic) {
			code, err = errTopicAuth, errAuthorizationFailed
		} else {
			c, code, err = topics.ValidateCreate(&rt, seen[rt.Topic] > 1, b.topicSettings(), topicsAdmin{b})
		}
		nparts := c.Partitions
		if code == 0 && !r.ValidateOnly && !b.mutationAllowed(req, nparts, req.Version >= 6) {
			code, err = kerr.ThrottlingQuotaExceeded.Code, errThrottlingQuota
		}
		if code == 0 && !r.ValidateOnly {
			t, cerr := b.createTopic(rt.Topic, nparts, c.Configs, c.Cfg, c.Replicas)
			if cerr != nil {
				code, err = createErrCode(cerr), cerr
				b.log.Error("creating topic", "topic", rt.Topic, "err", cerr)
			} else {
				st.TopicID = t.id
				b.log.Info("created topic", "topic", rt.Topic, "partitions", nparts)
			}
		}
		if code != 0 {
			st.ErrorCode = code
			st.ErrorMessage = errMessage(err)
			b.logBad(req, "create topics rejected", "topic", rt.Topic, "error", kerr.ErrorForCode(code), "reason", err)
		} else if req.Version >= 5 {
			st.NumPartitions = nparts
			st.ReplicationFactor = int16(len(c.Replicas[0]))
			if az.topicVisible(opDescribeConfigs, rt.Topic) {
				st.Configs = topics.CreatedConfigs(c.Cfg)
			} else {
				st.ConfigErrorCode = errTopicAuth
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}

// topicSettings are the defaults of a new topic.
func (b *Broker) topicSettings() topics.Settings {
	return topics.Settings{Cluster: b.cl, DefaultPartitions: b.cfg.DefaultPartitions, DefaultReplicationFactor: b.cfg.DefaultReplicationFactor}
}

// topicsAdmin is the broker as CreateTopics' validation sees it
// (topics.Admin), under adminMu.
type topicsAdmin struct{ b *Broker }

func (a topicsAdmin) Exists(name string) bool   { return a.b.lookupTopic(name, [16]byte{}) != nil }
func (a topicsAdmin) EnsureOffsetsTopic() error { return a.b.ensureOffsetsTopicLocked() }
func (a topicsAdmin) ParseConfigs(set map[string]string) (*topicconfig.Config, error) {
	return a.b.parseTopicConfigs(set)
}
