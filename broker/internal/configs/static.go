package configs

import (
	"sort"
	"strconv"
	"time"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

// InterBrokerProtocolVersion is the Kafka release whose API versions the
// broker matches (see the broker's apis.go).
const InterBrokerProtocolVersion = "4.1-IV1"

// Static is one read-only broker setting reported by DescribeConfigs.
type Static struct {
	Name, Value  string
	Type, Source int8
	Doc          string
}

// Settings is what the broker runs with, as the BROKER resource reports
// it.
type Settings struct {
	Advertised                 string // advertised.listeners' value
	NodeID                     int32
	AutoCreateTopics           bool
	DefaultReplicationFactor   int16
	DefaultPartitions          int32
	GroupInitialRebalanceDelay time.Duration
	RetentionCheckInterval     time.Duration
	DataDir                    string
	// Groups are the group coordinator's settings.
	Groups []Static
}

// staticUnless is the source of a setting the broker was started with:
// DEFAULT_CONFIG when it holds Kafka's default, as Kafka reports an unset
// key, else STATIC_BROKER_CONFIG.
func staticUnless[T comparable](v, kafkaDefault T) int8 {
	if v == kafkaDefault {
		return topicconfig.SrcDefault
	}
	return topicconfig.SrcStaticBroker
}

// StaticConfigs lists the broker-level settings, static (from s) or
// Kafka defaults the broker behaves by, by name.
func StaticConfigs(s Settings) []Static {
	node := strconv.Itoa(int(s.NodeID))
	cs := []Static{
		{"advertised.listeners", s.Advertised, topicconfig.TypeString, topicconfig.SrcStaticBroker, "address handed to clients"},
		{"auto.create.topics.enable", strconv.FormatBool(s.AutoCreateTopics), topicconfig.TypeBoolean, staticUnless(s.AutoCreateTopics, true), "create topics on metadata requests"},
		{"broker.id", node, topicconfig.TypeInt, topicconfig.SrcStaticBroker, "this node's ID"},
		{"compression.type", "producer", topicconfig.TypeString, topicconfig.SrcDefault, ""},
		{"connections.max.idle.ms", "600000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"default.replication.factor", strconv.Itoa(max(1, int(s.DefaultReplicationFactor))), topicconfig.TypeInt, staticUnless(s.DefaultReplicationFactor <= 1, true), "replication factor of topics created without one"},
		{"delete.topic.enable", "true", topicconfig.TypeBoolean, topicconfig.SrcDefault, ""},
		// Kafka 4 dropped it for metadata.version, but consoles such as
		// kafka-ui still read it to decide which features to offer.
		{"inter.broker.protocol.version", InterBrokerProtocolVersion, topicconfig.TypeString, topicconfig.SrcDefault, "the Kafka version whose protocol this broker speaks"},
		{"group.initial.rebalance.delay.ms", strconv.FormatInt(s.GroupInitialRebalanceDelay.Milliseconds(), 10), topicconfig.TypeInt, staticUnless(s.GroupInitialRebalanceDelay, 3*time.Second), ""},
		{"log.cleanup.policy", "delete", topicconfig.TypeList, topicconfig.SrcDefault, ""},
		{"log.dirs", s.DataDir, topicconfig.TypeString, topicconfig.SrcStaticBroker, "data directory"},
		{"log.index.interval.bytes", "4096", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"log.message.timestamp.type", "CreateTime", topicconfig.TypeString, topicconfig.SrcDefault, ""},
		{"log.retention.bytes", "-1", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.retention.check.interval.ms", strconv.FormatInt(s.RetentionCheckInterval.Milliseconds(), 10), topicconfig.TypeLong, topicconfig.SrcStaticBroker, ""},
		{"log.retention.hours", "168", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"log.retention.ms", "604800000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.roll.ms", "604800000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.segment.bytes", "1073741824", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"message.max.bytes", "1048588", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"min.insync.replicas", "1", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"node.id", node, topicconfig.TypeInt, topicconfig.SrcStaticBroker, "this node's ID"},
		{"num.partitions", strconv.Itoa(int(s.DefaultPartitions)), topicconfig.TypeInt, staticUnless(s.DefaultPartitions, 1), "partitions of auto-created topics and of CreateTopics with -1"},
		{"offsets.topic.replication.factor", "1", topicconfig.TypeShort, topicconfig.SrcDefault, ""},
		{"process.roles", "broker,controller", topicconfig.TypeList, topicconfig.SrcStaticBroker, ""},
		{"socket.request.max.bytes", "104857600", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"transaction.state.log.min.isr", "1", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"transaction.state.log.replication.factor", "1", topicconfig.TypeShort, topicconfig.SrcDefault, ""},
		// The transaction coordinator's fixed bound (txn.maxTimeout).
		{"transaction.max.timeout.ms", "900000", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
	}
	cs = append(cs, s.Groups...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}
