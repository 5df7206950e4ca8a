package broker

// Metadata v0–v13.
//
// One broker (this node) leads every partition at epoch 0 with itself as
// the only replica and ISR. A nil topic list (v1+; an empty one in v0) asks
// for every topic. Topics are named or, from v10, identified by ID
// (UNKNOWN_TOPIC_ID when unknown). An unknown topic is created with the
// default partition count when auto.create.topics.enable is on and the
// client allows it (always before v4, AllowAutoTopicCreation from v4).
// Creation here is synchronous, but the request that creates the topic is
// answered as Kafka answers it, LEADER_NOT_AVAILABLE and no partitions,
// and the next request sees them: clients retry on it, and some tests
// rely on it (kafka-go's delete-topics cases read a deleted topic's
// partitions through a v1 Metadata request, which re-creates it, and
// expect none). Illegal names get INVALID_TOPIC_EXCEPTION and are never
// created. Authorized operations (v8+) are reported only when asked: with
// no authorizer every operation is allowed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// Operation bit sets as Kafka's AclOperation codes (KIP-430).
const (
	topicOps   int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	clusterOps int32 = 1<<4 | 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
)

func (b *Broker) handleMetadata(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	resp.Version = req.Version
	host, port := b.AdvertisedFor(req)
	br := kmsg.NewMetadataResponseBroker()
	br.NodeID, br.Host, br.Port = b.cfg.NodeID, host, port
	resp.Brokers = []kmsg.MetadataResponseBroker{br}
	cid := b.clusterID
	resp.ClusterID = &cid
	resp.ControllerID = b.cfg.NodeID
	if r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterOps
	}

	all := r.Topics == nil || (req.Version == 0 && len(r.Topics) == 0)
	if all {
		tt := b.topics.Load()
		for _, t := range tt.byName {
			resp.Topics = append(resp.Topics, b.metadataTopic(t, r.IncludeTopicAuthorizedOperations))
		}
		return protocol.Reply{Response: resp}
	}
	autoCreate := b.cfg.AutoCreateTopics && (req.Version < 4 || r.AllowAutoTopicCreation)
	for _, rt := range r.Topics {
		var t *topic
		if rt.Topic != nil {
			t = b.lookupTopic(*rt.Topic, [16]byte{})
		} else if rt.TopicID != ([16]byte{}) {
			t = b.lookupTopic("", rt.TopicID)
		}
		if t != nil {
			resp.Topics = append(resp.Topics, b.metadataTopic(t, r.IncludeTopicAuthorizedOperations))
			continue
		}
		st := kmsg.NewMetadataResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		switch {
		case rt.Topic == nil:
			st.ErrorCode = kerr.UnknownTopicID.Code
		case validateTopicName(*rt.Topic) != nil:
			st.ErrorCode = kerr.InvalidTopicException.Code
			b.logBad(req, "metadata: invalid topic name", "topic", *rt.Topic, "err", validateTopicName(*rt.Topic))
		case autoCreate:
			if _, err := b.autoCreate(*rt.Topic); err != nil {
				st.ErrorCode = createErrCode(err)
				b.log.Error("auto-creating topic", "topic", *rt.Topic, "err", err)
				break
			}
			// As Kafka: the request that creates the topic is told the
			// leader is not there yet; the next one sees the partitions.
			st.ErrorCode = kerr.LeaderNotAvailable.Code
			st.IsInternal = isInternalTopic(*rt.Topic)
		default:
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}

func (b *Broker) metadataTopic(t *topic, ops bool) kmsg.MetadataResponseTopic {
	st := kmsg.NewMetadataResponseTopic()
	name := t.name
	st.Topic, st.TopicID = &name, t.id
	st.IsInternal = isInternalTopic(t.name)
	if ops {
		st.AuthorizedOperations = topicOps
	}
	ps := t.partitions()
	st.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(ps))
	for i := range ps {
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = int32(i)
		sp.Leader = b.cfg.NodeID
		sp.LeaderEpoch = leaderEpoch
		sp.Replicas = []int32{b.cfg.NodeID}
		sp.ISR = []int32{b.cfg.NodeID}
		sp.OfflineReplicas = []int32{}
		st.Partitions[i] = sp
	}
	return st
}

// autoCreate creates a topic with the broker defaults unless it appeared
// meanwhile.
func (b *Broker) autoCreate(name string) (*topic, error) {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	if t := b.lookupTopic(name, [16]byte{}); t != nil {
		return t, nil
	}
	if name == offsetsTopic {
		// Kafka creates its internal topic with its own settings.
		if err := b.ensureOffsetsTopicLocked(); err != nil {
			return nil, err
		}
		return b.lookupTopic(name, [16]byte{}), nil
	}
	cfg, err := parseTopicConfigs(nil)
	if err != nil {
		return nil, err
	}
	t, err := b.createTopic(name, b.cfg.DefaultPartitions, nil, cfg)
	if err == nil {
		b.log.Info("auto-created topic", "topic", name, "partitions", b.cfg.DefaultPartitions)
	}
	return t, err
}
