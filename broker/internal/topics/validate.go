package topics

// CreateTopics' validation follows Kafka's controller: duplicate names in
// one request (INVALID_REQUEST for each), illegal names
// (INVALID_TOPIC_EXCEPTION: empty, "." or "..", over 249 characters,
// characters outside [a-zA-Z0-9._-]), an existing topic
// (TOPIC_ALREADY_EXISTS), partitions (-1 = num.partitions; 0 or below -1:
// INVALID_PARTITIONS), replication factor (-1 for the default; 0, below -1
// or more replicas than nodes: INVALID_REPLICATION_FACTOR), manual
// assignments (only together with -1/-1, else INVALID_REQUEST; partitions
// 0..n-1, each on as many distinct nodes of the cluster as the first,
// else INVALID_REPLICA_ASSIGNMENT), configs (unknown names, null or
// illegal values: INVALID_CONFIG). Each refusal carries its reason, in
// Kafka's (KRaft controller's) words where Kafka has them, so clients
// show it.
//
// CreatePartitions: a topic named twice is INVALID_REQUEST, an unknown one
// UNKNOWN_TOPIC_OR_PARTITION; a count not above the current one
// INVALID_PARTITIONS; an assignment that is not one replica list per new
// partition, with the topic's replication factor, on distinct nodes of the
// cluster, INVALID_REPLICA_ASSIGNMENT.

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/topicname"
)

// MaxPartitions bounds what one request can make us open; each partition
// is a directory and open files.
const MaxPartitions = 10000

// OffsetsTopic is Kafka's internal topic of committed offsets.
const OffsetsTopic = "__consumer_offsets"

// IsInternal reports whether name is one of Kafka's internal topics.
func IsInternal(name string) bool {
	return name == OffsetsTopic || name == "__transaction_state"
}

// Admin is what validation asks of the broker, under its adminMu.
type Admin interface {
	// Exists reports whether a topic of that name exists.
	Exists(name string) bool
	// ParseConfigs parses a new topic's configs over the dynamic
	// cluster defaults.
	ParseConfigs(set map[string]string) (*topicconfig.Config, error)
	// EnsureOffsetsTopic creates __consumer_offsets with Kafka's
	// settings if it does not exist yet.
	EnsureOffsetsTopic() error
}

// Settings are the broker's defaults for a new topic and its cluster.
type Settings struct {
	Cluster                  *cluster.State
	DefaultPartitions        int32
	DefaultReplicationFactor int16
}

// ReplicationFactor is the replication factor of a topic created without
// one: default.replication.factor, and for the internal topics Kafka's
// 3 (offsets.topic.replication.factor), as far as there are nodes.
func (s Settings) ReplicationFactor(topic string) int {
	rf := int(s.DefaultReplicationFactor)
	if IsInternal(topic) || topic == "_schemas" {
		rf = 3
	}
	return max(1, min(rf, len(s.Cluster.Nodes())))
}

// Create is a validated CreateTopics topic.
type Create struct {
	Partitions int32
	Configs    map[string]string // as set
	Cfg        *topicconfig.Config
	Replicas   [][]int32 // each partition's
}

// ValidateCreate checks one topic of a CreateTopics request (dup: its name
// is in the request more than once) and places its partitions; a refusal
// is its code and reason.
func ValidateCreate(rt *kmsg.CreateTopicsRequestTopic, dup bool, s Settings, a Admin) (Create, int16, error) {
	c, code, err := validateCreate(rt, dup, s, a)
	if code == 0 && c.Replicas == nil {
		rf := int(rt.ReplicationFactor)
		if rf == -1 {
			rf = s.ReplicationFactor(rt.Topic)
		}
		c.Replicas = s.Cluster.AssignReplicas(rt.Topic, 0, c.Partitions, rf)
	}
	return c, code, err
}

func validateCreate(rt *kmsg.CreateTopicsRequestTopic, dup bool, s Settings, a Admin) (Create, int16, error) {
	if dup {
		return Create{}, kerr.InvalidRequest.Code, errors.New("Duplicate topic name.")
	}
	if err := topicname.Validate(rt.Topic); err != nil {
		return Create{}, kerr.InvalidTopicException.Code, err
	}
	if rt.Topic == OffsetsTopic {
		// Kafka's internal topic is made with Kafka's settings, never a
		// client's: create it on first mention, then it exists. Its
		// files could not be written: a storage error, which clients
		// retry.
		if err := a.EnsureOffsetsTopic(); err != nil {
			return Create{}, kerr.KafkaStorageError.Code, err
		}
	}
	if a.Exists(rt.Topic) {
		return Create{}, kerr.TopicAlreadyExists.Code, fmt.Errorf("Topic '%s' already exists.", rt.Topic)
	}
	nparts := rt.NumPartitions
	var place [][]int32
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return Create{}, kerr.InvalidRequest.Code, errors.New("Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		as := append([]kmsg.CreateTopicsRequestTopicReplicaAssignment(nil), rt.ReplicaAssignment...)
		sort.Slice(as, func(i, j int) bool { return as[i].Partition < as[j].Partition })
		for i, a := range as {
			if a.Partition != int32(i) {
				return Create{}, kerr.InvalidReplicaAssignment.Code, errors.New("Partitions should be a consecutive 0-based integer sequence")
			}
			if err := CheckReplicas(s.Cluster, a.Replicas, len(as[0].Replicas)); err != nil {
				return Create{}, kerr.InvalidReplicaAssignment.Code, fmt.Errorf("partition %d: %w", a.Partition, err)
			}
			place = append(place, a.Replicas)
		}
		nparts = int32(len(as))
	} else {
		switch {
		case nparts == -1:
			nparts = s.DefaultPartitions
		case nparts <= 0:
			return Create{}, kerr.InvalidPartitions.Code, errors.New("Number of partitions was set to an invalid non-positive value.")
		}
		rf := int(rt.ReplicationFactor)
		if rf == -1 {
			rf = s.ReplicationFactor(rt.Topic)
		}
		if code, err := checkReplicationFactor(s.Cluster, rf); code != 0 {
			return Create{}, code, err
		}
	}
	if nparts > MaxPartitions {
		return Create{}, kerr.InvalidPartitions.Code, fmt.Errorf("%d partitions: at most %d per topic are supported", nparts, MaxPartitions)
	}
	names := make([]string, len(rt.Configs))
	values := make([]*string, len(rt.Configs))
	for i, c := range rt.Configs {
		names[i], values[i] = c.Name, c.Value
	}
	configs, err := topicconfig.FromPairs(names, values)
	if err != nil {
		return Create{}, kerr.InvalidConfig.Code, err
	}
	cfg, err := a.ParseConfigs(configs)
	if err != nil {
		return Create{}, kerr.InvalidConfig.Code, err
	}
	return Create{Partitions: nparts, Configs: cfg.Set, Cfg: cfg, Replicas: place}, 0, nil
}

// checkReplicationFactor refuses a replication factor the cluster cannot
// give, in Kafka's words.
func checkReplicationFactor(cl *cluster.State, rf int) (int16, error) {
	switch n := len(cl.Nodes()); {
	case rf <= 0:
		return kerr.InvalidReplicationFactor.Code, errors.New("Replication factor must be larger than 0, or -1 to use the default value.")
	case rf > n:
		return kerr.InvalidReplicationFactor.Code, fmt.Errorf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", rf, rf, n)
	}
	return 0, nil
}

// CheckReplicas refuses a manual assignment that names unknown nodes,
// a node twice, or a replica count unlike the first partition's.
func CheckReplicas(cl *cluster.State, rs []int32, want int) error {
	if len(rs) == 0 || len(rs) != want {
		return fmt.Errorf("replicas %v: every partition must have the same number of replicas (%d)", rs, want)
	}
	for i, r := range rs {
		if cl.Index(r) < 0 {
			return fmt.Errorf("replicas %v: node %d is not a broker of this cluster (nodes %v)", rs, r, cl.NodeIDs())
		}
		if slices.Contains(rs[:i], r) {
			return fmt.Errorf("replicas %v: node %d appears twice", rs, r)
		}
	}
	return nil
}

// CheckGrow checks growing a topic of cur partitions, replicated rf
// times, as rt asks (cur -1: no such topic; dup: named twice in the
// request), and places the new partitions (nil: the broker places them).
func CheckGrow(cl *cluster.State, rt *kmsg.CreatePartitionsRequestTopic, dup bool, cur int32, rf int) ([][]int32, int16, error) {
	switch {
	case dup:
		return nil, kerr.InvalidRequest.Code, errors.New("Duplicate topic name.")
	case cur < 0:
		return nil, kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", rt.Topic)
	case rt.Count < cur:
		return nil, kerr.InvalidPartitions.Code, fmt.Errorf("The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, cur, rt.Count)
	case rt.Count == cur:
		return nil, kerr.InvalidPartitions.Code, fmt.Errorf("Topic already has %d partition(s).", cur)
	case rt.Count > MaxPartitions:
		return nil, kerr.InvalidPartitions.Code, fmt.Errorf("%d partitions: at most %d per topic are supported", rt.Count, MaxPartitions)
	}
	var place [][]int32
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != rt.Count-cur {
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Errorf("increasing the number of partitions by %d but %d assignments provided", rt.Count-cur, len(rt.Assignment))
		}
		for _, a := range rt.Assignment {
			if err := CheckReplicas(cl, a.Replicas, rf); err != nil {
				return nil, kerr.InvalidReplicaAssignment.Code, err
			}
			place = append(place, a.Replicas)
		}
	}
	return place, 0, nil
}

// CreatedConfigs is every topic config as CreateTopics v5+ answers it.
func CreatedConfigs(cfg *topicconfig.Config) []kmsg.CreateTopicsResponseTopicConfig {
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

// DeleteRequested is a DeleteTopics request's topics, in v6's form
// whatever its version.
func DeleteRequested(r *kmsg.DeleteTopicsRequest, version int16) []kmsg.DeleteTopicsRequestTopic {
	if version >= 6 {
		return r.Topics
	}
	reqs := make([]kmsg.DeleteTopicsRequestTopic, len(r.TopicNames))
	for i := range r.TopicNames {
		reqs[i] = kmsg.NewDeleteTopicsRequestTopic()
		reqs[i].Topic = &r.TopicNames[i]
	}
	return reqs
}

// Deleting is the broker as DeleteTopics' resolution sees it, under its
// adminMu.
type Deleting interface {
	// NameOf is the name of the topic with that ID, "" for none.
	NameOf(id [16]byte) string
	Exists(name string) bool
	// MayDelete is nil when the client may delete the topic, else the
	// refusal (TOPIC_AUTHORIZATION_FAILED); MayDescribe whether it may
	// learn the topic's name.
	MayDelete(name string) error
	MayDescribe(name string) bool
}

// ResolveDelete is the topic one DeleteTopics entry deletes, or why not:
// exactly one of name and ID (else INVALID_REQUEST); for a name, DELETE
// before existence (TOPIC_AUTHORIZATION_FAILED, then
// UNKNOWN_TOPIC_OR_PARTITION); for an ID, UNKNOWN_TOPIC_ID, then DELETE,
// with the name revealed (shown) only to a client that may describe it,
// as Kafka; an internal topic is INVALID_REQUEST.
func ResolveDelete(rt *kmsg.DeleteTopicsRequestTopic, d Deleting) (name string, shown *string, code int16, err error) {
	hasName, hasID := rt.Topic != nil && *rt.Topic != "", rt.TopicID != ([16]byte{})
	switch {
	case hasName && hasID, !hasName && !hasID:
		return "", nil, kerr.InvalidRequest.Code, fmt.Errorf("give exactly one of topic name and topic ID")
	case hasName:
		if err := d.MayDelete(*rt.Topic); err != nil {
			return "", nil, kerr.TopicAuthorizationFailed.Code, err
		}
		if name = *rt.Topic; !d.Exists(name) {
			return "", nil, kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", name)
		}
	default:
		if name = d.NameOf(rt.TopicID); name == "" {
			return "", nil, kerr.UnknownTopicID.Code, fmt.Errorf("unknown topic ID %s", UUIDString(rt.TopicID))
		}
		if err := d.MayDelete(name); err != nil {
			if d.MayDescribe(name) {
				shown = &name
			}
			return "", shown, kerr.TopicAuthorizationFailed.Code, err
		}
	}
	if IsInternal(name) {
		return "", nil, kerr.InvalidRequest.Code, fmt.Errorf("internal topic %s cannot be deleted", name)
	}
	return name, nil, 0, nil
}
