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
	"slices"
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
			place   [][]int32
		)
		if seen[rt.Topic] == 1 && !clusterCreate && !az.topic(opCreate, rt.Topic) {
			code, err = errTopicAuth, errAuthorizationFailed
		} else {
			code, err, nparts, configs, cfg, place = b.validateCreateTopic(&rt, seen[rt.Topic] > 1)
		}
		if code == 0 && !r.ValidateOnly && !b.mutationAllowed(req, nparts, req.Version >= 6) {
			code, err = kerr.ThrottlingQuotaExceeded.Code, errThrottlingQuota
		}
		if code == 0 && !r.ValidateOnly {
			t, cerr := b.createTopic(rt.Topic, nparts, configs, cfg, place)
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
			st.ReplicationFactor = int16(len(place[0]))
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

func (b *Broker) validateCreateTopic(rt *kmsg.CreateTopicsRequestTopic, dup bool) (code int16, err error, nparts int32, configs map[string]string, cfg *topicconfig.Config, place [][]int32) {
	code, err, nparts, configs, cfg, place = b.validateCreateTopicConfig(rt, dup)
	if code == 0 && place == nil {
		rf := int(rt.ReplicationFactor)
		if rf == -1 {
			rf = b.replicationFactor(rt.Topic)
		}
		place = b.cl.AssignReplicas(rt.Topic, 0, nparts, rf)
	}
	return
}

func (b *Broker) validateCreateTopicConfig(rt *kmsg.CreateTopicsRequestTopic, dup bool) (int16, error, int32, map[string]string, *topicconfig.Config, [][]int32) {
	if dup {
		return kerr.InvalidRequest.Code, errors.New("Duplicate topic name."), 0, nil, nil, nil
	}
	if err := validateTopicName(rt.Topic); err != nil {
		return kerr.InvalidTopicException.Code, err, 0, nil, nil, nil
	}
	if rt.Topic == offsetsTopic {
		// Kafka's internal topic is made with Kafka's settings, never a
		// client's: create it on first mention, then it exists.
		if err := b.ensureOffsetsTopicLocked(); err != nil {
			return createErrCode(err), err, 0, nil, nil, nil
		}
	}
	if b.lookupTopic(rt.Topic, [16]byte{}) != nil {
		return kerr.TopicAlreadyExists.Code, fmt.Errorf("Topic '%s' already exists.", rt.Topic), 0, nil, nil, nil
	}
	nparts := rt.NumPartitions
	var place [][]int32
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return kerr.InvalidRequest.Code, errors.New("Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."), 0, nil, nil, nil
		}
		as := append([]kmsg.CreateTopicsRequestTopicReplicaAssignment(nil), rt.ReplicaAssignment...)
		sort.Slice(as, func(i, j int) bool { return as[i].Partition < as[j].Partition })
		for i, a := range as {
			if a.Partition != int32(i) {
				return kerr.InvalidReplicaAssignment.Code, errors.New("Partitions should be a consecutive 0-based integer sequence"), 0, nil, nil, nil
			}
			if err := b.checkReplicas(a.Replicas, len(as[0].Replicas)); err != nil {
				return kerr.InvalidReplicaAssignment.Code, fmt.Errorf("partition %d: %w", a.Partition, err), 0, nil, nil, nil
			}
			place = append(place, a.Replicas)
		}
		nparts = int32(len(as))
	} else {
		switch {
		case nparts == -1:
			nparts = b.cfg.DefaultPartitions
		case nparts <= 0:
			return kerr.InvalidPartitions.Code, errors.New("Number of partitions was set to an invalid non-positive value."), 0, nil, nil, nil
		}
		rf := int(rt.ReplicationFactor)
		if rf == -1 {
			rf = b.replicationFactor(rt.Topic)
		}
		if code, err := b.checkReplicationFactor(rf); code != 0 {
			return code, err, 0, nil, nil, nil
		}
	}
	if nparts > maxPartitionsPerTopic {
		return kerr.InvalidPartitions.Code, fmt.Errorf("%d partitions: at most %d per topic are supported", nparts, maxPartitionsPerTopic), 0, nil, nil, nil
	}
	names := make([]string, len(rt.Configs))
	values := make([]*string, len(rt.Configs))
	for i, c := range rt.Configs {
		names[i], values[i] = c.Name, c.Value
	}
	configs, err := topicconfig.FromPairs(names, values)
	if err != nil {
		return kerr.InvalidConfig.Code, err, 0, nil, nil, nil
	}
	cfg, err := b.parseTopicConfigs(configs)
	if err != nil {
		return kerr.InvalidConfig.Code, err, 0, nil, nil, nil
	}
	return 0, nil, nparts, cfg.Set, cfg, place
}

// replicationFactor is the replication factor of a topic created without
// one: default.replication.factor, and for the internal topics Kafka's
// 3 (offsets.topic.replication.factor), as far as there are nodes.
func (b *Broker) replicationFactor(topic string) int {
	rf := int(b.cfg.DefaultReplicationFactor)
	if isInternalTopic(topic) || topic == "_schemas" {
		rf = 3
	}
	return max(1, min(rf, len(b.cl.Nodes())))
}

// checkReplicationFactor refuses a replication factor the cluster cannot
// give, in Kafka's words.
func (b *Broker) checkReplicationFactor(rf int) (int16, error) {
	switch n := len(b.cl.Nodes()); {
	case rf <= 0:
		return kerr.InvalidReplicationFactor.Code, errors.New("Replication factor must be larger than 0, or -1 to use the default value.")
	case rf > n:
		return kerr.InvalidReplicationFactor.Code, fmt.Errorf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", rf, rf, n)
	}
	return 0, nil
}

// checkReplicas refuses a manual assignment that names unknown nodes,
// a node twice, or a replica count unlike the first partition's.
func (b *Broker) checkReplicas(rs []int32, want int) error {
	if len(rs) == 0 || len(rs) != want {
		return fmt.Errorf("replicas %v: every partition must have the same number of replicas (%d)", rs, want)
	}
	for i, r := range rs {
		if b.cl.Index(r) < 0 {
			return fmt.Errorf("replicas %v: node %d is not a broker of this cluster (nodes %v)", rs, r, b.cl.NodeIDs())
		}
		if slices.Contains(rs[:i], r) {
			return fmt.Errorf("replicas %v: node %d appears twice", rs, r)
		}
	}
	return nil
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
