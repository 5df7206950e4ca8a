package broker

// CreateTopics v0–v7.
//
// Validation follows Kafka's controller: duplicate names in one request
// (INVALID_REQUEST for each), illegal names (INVALID_TOPIC_EXCEPTION:
// empty, "." or "..", over 249 characters, characters outside
// [a-zA-Z0-9._-]), an existing topic (TOPIC_ALREADY_EXISTS), partitions
// (-1 = num.partitions; 0 or below -1: INVALID_PARTITIONS), replication
// factor (-1 or 1; 0, below -1 or more replicas than this one broker:
// INVALID_REPLICATION_FACTOR), manual assignments (only together with -1/-1,
// else INVALID_REQUEST; partitions 0..n-1 each on this node only, else
// INVALID_REPLICA_ASSIGNMENT), configs (unknown names, null or illegal
// values: INVALID_CONFIG). ValidateOnly (v1+) answers as if created. v5+
// reports the partition count, replication factor and every config; v7 the
// topic ID. With the authorizer on, a topic needs CREATE on the cluster or
// on itself (TOPIC_AUTHORIZATION_FAILED), and its configs are answered only
// with DESCRIBE_CONFIGS (else the config error code is
// TOPIC_AUTHORIZATION_FAILED), as in Kafka. A topic whose files cannot be
// written (a full disk) is KAFKA_STORAGE_ERROR, which clients retry, and
// leaves nothing behind; auto-creation (Metadata) answers the same.
// Each error carries its reason in error_message, in Kafka's (KRaft
// controller's) words where Kafka has them, so clients show it.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/protocol"
)

// maxPartitionsPerTopic bounds what one request can make us open; each
// partition is a directory and open files.
const maxPartitionsPerTopic = 10000

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
			code    int16
			err     error
			nparts  int32
			configs map[string]string
			cfg     *topicconfig.Config
		)
		if seen[rt.Topic] == 1 && !clusterCreate && !az.topic(opCreate, rt.Topic) {
			code, err = errTopicAuth, errAuthorizationFailed
		} else {
			code, err, nparts, configs, cfg = b.validateCreateTopic(&rt, seen[rt.Topic] > 1)
		}
		if code == 0 && !r.ValidateOnly && !b.mutationAllowed(req, nparts, req.Version >= 6) {
			code, err = kerr.ThrottlingQuotaExceeded.Code, errThrottlingQuota
		}
		if code == 0 && !r.ValidateOnly {
			t, cerr := b.createTopic(rt.Topic, nparts, configs, cfg)
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
			st.ReplicationFactor = 1
			if az.topicVisible(opDescribeConfigs, rt.Topic) {
				st.Configs = describeTopicConfigsForCreate(cfg)
			} else {
				st.ConfigErrorCode = errTopicAuth
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Reply{Response: resp}
}

func (b *Broker) validateCreateTopic(rt *kmsg.CreateTopicsRequestTopic, dup bool) (int16, error, int32, map[string]string, *topicconfig.Config) {
	if dup {
		return kerr.InvalidRequest.Code, errors.New("Duplicate topic name."), 0, nil, nil
	}
	if err := validateTopicName(rt.Topic); err != nil {
		return kerr.InvalidTopicException.Code, err, 0, nil, nil
	}
	if rt.Topic == offsetsTopic {
		// Kafka's internal topic is made with Kafka's settings, never a
		// client's: create it on first mention, then it exists.
		if err := b.ensureOffsetsTopicLocked(); err != nil {
			return createErrCode(err), err, 0, nil, nil
		}
	}
	if b.lookupTopic(rt.Topic, [16]byte{}) != nil {
		return kerr.TopicAlreadyExists.Code, fmt.Errorf("Topic '%s' already exists.", rt.Topic), 0, nil, nil
	}
	nparts := rt.NumPartitions
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return kerr.InvalidRequest.Code, errors.New("Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."), 0, nil, nil
		}
		as := append([]kmsg.CreateTopicsRequestTopicReplicaAssignment(nil), rt.ReplicaAssignment...)
		sort.Slice(as, func(i, j int) bool { return as[i].Partition < as[j].Partition })
		for i, a := range as {
			if a.Partition != int32(i) {
				return kerr.InvalidReplicaAssignment.Code, errors.New("Partitions should be a consecutive 0-based integer sequence"), 0, nil, nil
			}
			if len(a.Replicas) != 1 || a.Replicas[0] != b.cfg.NodeID {
				return kerr.InvalidReplicaAssignment.Code, fmt.Errorf("partition %d: replicas %v: node %d is the only broker", a.Partition, a.Replicas, b.cfg.NodeID), 0, nil, nil
			}
		}
		nparts = int32(len(as))
	} else {
		switch {
		case nparts == -1:
			nparts = b.cfg.DefaultPartitions
		case nparts <= 0:
			return kerr.InvalidPartitions.Code, errors.New("Number of partitions was set to an invalid non-positive value."), 0, nil, nil
		}
		switch rf := rt.ReplicationFactor; {
		case rf == -1 || rf == 1:
		case rf <= 0:
			return kerr.InvalidReplicationFactor.Code, errors.New("Replication factor must be larger than 0, or -1 to use the default value."), 0, nil, nil
		default:
			return kerr.InvalidReplicationFactor.Code, fmt.Errorf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only 1 broker(s) are registered.", rf, rf), 0, nil, nil
		}
	}
	if nparts > maxPartitionsPerTopic {
		return kerr.InvalidPartitions.Code, fmt.Errorf("%d partitions: at most %d per topic are supported", nparts, maxPartitionsPerTopic), 0, nil, nil
	}
	names := make([]string, len(rt.Configs))
	values := make([]*string, len(rt.Configs))
	for i, c := range rt.Configs {
		names[i], values[i] = c.Name, c.Value
	}
	configs, err := topicconfig.FromPairs(names, values)
	if err != nil {
		return kerr.InvalidConfig.Code, err, 0, nil, nil
	}
	cfg, err := b.parseTopicConfigs(configs)
	if err != nil {
		return kerr.InvalidConfig.Code, err, 0, nil, nil
	}
	return 0, nil, nparts, cfg.Set, cfg
}

func describeTopicConfigsForCreate(cfg *topicconfig.Config) []kmsg.CreateTopicsResponseTopicConfig {
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(topicconfig.Defs))
	for _, d := range topicconfig.Defs {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = d.Name
		v, set := cfg.Value(d.Name)
		c.Value = &v
		c.Source = topicconfig.SrcDefault
		if set {
			c.Source = topicconfig.SrcDynamicTopic
		}
		out = append(out, c)
	}
	return out
}
