package broker

// Metadata v0–v13.
//
// One broker (this node) leads every partition at epoch 0 with itself as
// the only replica and ISR. A nil topic list (v1+; an empty one in v0) asks
// for every topic. Topics are named or, from v10, identified by ID
// (UNKNOWN_TOPIC_ID when unknown; the Java client sends
// the name empty rather than null). An unknown topic is created with the
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
//
// With the authorizer on, as Kafka: a listing of every topic shows only
// those the principal may DESCRIBE; a named topic it may not describe is
// TOPIC_AUTHORIZATION_FAILED (one asked for by ID, UNKNOWN_TOPIC_ID, so IDs
// reveal nothing); auto-creation needs CREATE on the cluster or the topic,
// else TOPIC_AUTHORIZATION_FAILED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleMetadata(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	resp.Version = req.Version
	resp.Brokers = b.metadataBrokers(req)
	cid := b.clusterID
	resp.ClusterID = &cid
	resp.ControllerID = b.cl.Controller()
	az := b.authorizer(req)
	if req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = az.authorizedOps(r.IncludeClusterAuthorizedOperations, kmsg.ACLResourceTypeCluster, clusterName)
	}

	all := r.Topics == nil || (req.Version == 0 && len(r.Topics) == 0)
	if all {
		tt := b.topics.Load()
		for _, t := range tt.byName {
			if az.topicVisible(opDescribe, t.name) {
				resp.Topics = append(resp.Topics, b.metadataTopic(az, t, r.IncludeTopicAuthorizedOperations))
			}
		}
		return protocol.Reply{Response: resp}
	}
	autoCreate := b.cfg.AutoCreateTopics && (req.Version < 4 || r.AllowAutoTopicCreation)
	for _, rt := range r.Topics {
		// Asked by ID: a null name or, as the Java client sends it, an
		// empty one with a non-zero ID.
		byID := rt.Topic == nil || (*rt.Topic == "" && rt.TopicID != [16]byte{})
		var t *topic
		if byID {
			t = b.lookupTopic("", rt.TopicID)
		} else {
			t = b.lookupTopic(*rt.Topic, [16]byte{})
		}
		st := kmsg.NewMetadataResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		switch {
		case byID && (t == nil || !az.topic(opDescribe, t.name)):
			st.ErrorCode = kerr.UnknownTopicID.Code
		case !byID && !az.topic(opDescribe, *rt.Topic):
			st.ErrorCode = errTopicAuth
		case t != nil:
			st = b.metadataTopic(az, t, r.IncludeTopicAuthorizedOperations)
		case validateTopicName(*rt.Topic) != nil:
			st.ErrorCode = kerr.InvalidTopicException.Code
			b.logBad(req, "metadata: invalid topic name", "topic", *rt.Topic, "err", validateTopicName(*rt.Topic))
		case autoCreate && !az.cluster(opCreate) && !az.topic(opCreate, *rt.Topic):
			st.ErrorCode = errTopicAuth
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

func (b *Broker) metadataTopic(az *authz, t *topic, ops bool) kmsg.MetadataResponseTopic {
	st := kmsg.NewMetadataResponseTopic()
	name := t.name
	st.Topic, st.TopicID = &name, t.id
	st.IsInternal = isInternalTopic(t.name)
	st.AuthorizedOperations = az.authorizedOps(ops, kmsg.ACLResourceTypeTopic, t.name)
	ps := t.partitions()
	st.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(ps))
	for i, p := range ps {
		pl := p.place.Load()
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = int32(i)
		sp.Leader = pl.Leader
		sp.LeaderEpoch = pl.Epoch
		sp.Replicas = pl.Replicas
		sp.ISR = pl.ISR
		sp.OfflineReplicas = b.offlineReplicas(pl)
		if pl.Leader < 0 {
			sp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		st.Partitions[i] = sp
	}
	return st
}

// metadataBrokers lists the running nodes with their address on req's
// listener.
func (b *Broker) metadataBrokers(req *protocol.Request) []kmsg.MetadataResponseBroker {
	if !b.cl.Multi() {
		host, port := b.AdvertisedFor(req)
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = b.cl.Nodes()[0].ID, host, port, b.rackPtr(b.cl.Nodes()[0].ID)
		return []kmsg.MetadataResponseBroker{br}
	}
	var out []kmsg.MetadataResponseBroker
	for _, n := range b.cl.UpNodes() {
		host, port, ok := b.addrFor(req, n.ID)
		if !ok {
			continue
		}
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = n.ID, host, port, b.rackPtr(n.ID)
		out = append(out, br)
	}
	return out
}

// offlineReplicas are a placement's replicas on stopped nodes.
func (b *Broker) offlineReplicas(pl *placement) []int32 {
	out := []int32{}
	if b.cl.Multi() {
		out = cluster.InOrder(pl.Replicas, func(r int32) bool { return !b.cl.IsUp(r) })
	}
	return out
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
	cfg, err := b.parseTopicConfigs(nil)
	if err != nil {
		return nil, err
	}
	t, err := b.createTopic(name, b.cfg.DefaultPartitions, nil, cfg, nil)
	if err == nil {
		b.log.Info("auto-created topic", "topic", name, "partitions", b.cfg.DefaultPartitions)
	}
	return t, err
}
