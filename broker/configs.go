package broker

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

// brokerConfig is one read-only broker setting reported by DescribeConfigs.
type brokerConfig struct {
	name   string
	value  string
	typ    int8
	source int8
	doc    string
}

// interBrokerProtocolVersion is the Kafka release whose API versions this
// broker matches (see apis.go).
const interBrokerProtocolVersion = "4.1-IV1"

// staticUnless is the source of a setting the broker was started with:
// DEFAULT_CONFIG when it holds Kafka's default, as Kafka reports an unset
// key, else STATIC_BROKER_CONFIG.
func staticUnless[T comparable](v, kafkaDefault T) int8 {
	if v == kafkaDefault {
		return topicconfig.SrcDefault
	}
	return topicconfig.SrcStaticBroker
}

// brokerConfigs lists the broker-level settings, static (from Config) or
// Kafka defaults the broker behaves by.
func (b *Broker) brokerConfigs() []brokerConfig {
	host, port := b.Advertised()
	advertised := fmt.Sprintf("PLAINTEXT://%s:%d", host, port)
	if ls := b.Listeners(); ls != nil {
		var eps []string
		for _, l := range ls {
			eps = append(eps, fmt.Sprintf("%s://%s", l.Name, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))))
		}
		advertised = strings.Join(eps, ",")
	}
	node := strconv.Itoa(int(b.cfg.NodeID))
	cs := []brokerConfig{
		{"advertised.listeners", advertised, topicconfig.TypeString, topicconfig.SrcStaticBroker, "address handed to clients"},
		{"auto.create.topics.enable", strconv.FormatBool(b.cfg.AutoCreateTopics), topicconfig.TypeBoolean, staticUnless(b.cfg.AutoCreateTopics, true), "create topics on metadata requests"},
		{"broker.id", node, topicconfig.TypeInt, topicconfig.SrcStaticBroker, "this node's ID"},
		{"compression.type", "producer", topicconfig.TypeString, topicconfig.SrcDefault, ""},
		{"connections.max.idle.ms", "600000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"default.replication.factor", strconv.Itoa(max(1, int(b.cfg.DefaultReplicationFactor))), topicconfig.TypeInt, staticUnless(b.cfg.DefaultReplicationFactor <= 1, true), "replication factor of topics created without one"},
		{"delete.topic.enable", "true", topicconfig.TypeBoolean, topicconfig.SrcDefault, ""},
		// Kafka 4 dropped it for metadata.version, but consoles such as
		// kafka-ui still read it to decide which features to offer.
		{"inter.broker.protocol.version", interBrokerProtocolVersion, topicconfig.TypeString, topicconfig.SrcDefault, "the Kafka version whose protocol this broker speaks"},
		{"group.initial.rebalance.delay.ms", strconv.FormatInt(b.cfg.GroupInitialRebalanceDelay.Milliseconds(), 10), topicconfig.TypeInt, staticUnless(b.cfg.GroupInitialRebalanceDelay, 3*time.Second), ""},
		{"log.cleanup.policy", "delete", topicconfig.TypeList, topicconfig.SrcDefault, ""},
		{"log.dirs", b.cfg.DataDir, topicconfig.TypeString, topicconfig.SrcStaticBroker, "data directory"},
		{"log.index.interval.bytes", "4096", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"log.message.timestamp.type", "CreateTime", topicconfig.TypeString, topicconfig.SrcDefault, ""},
		{"log.retention.bytes", "-1", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.retention.check.interval.ms", strconv.FormatInt(b.cfg.RetentionCheckInterval.Milliseconds(), 10), topicconfig.TypeLong, topicconfig.SrcStaticBroker, ""},
		{"log.retention.hours", "168", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"log.retention.ms", "604800000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.roll.ms", "604800000", topicconfig.TypeLong, topicconfig.SrcDefault, ""},
		{"log.segment.bytes", "1073741824", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"message.max.bytes", "1048588", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"min.insync.replicas", "1", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"node.id", node, topicconfig.TypeInt, topicconfig.SrcStaticBroker, "this node's ID"},
		{"num.partitions", strconv.Itoa(int(b.cfg.DefaultPartitions)), topicconfig.TypeInt, staticUnless(b.cfg.DefaultPartitions, 1), "partitions of auto-created topics and of CreateTopics with -1"},
		{"offsets.topic.replication.factor", "1", topicconfig.TypeShort, topicconfig.SrcDefault, ""},
		{"process.roles", "broker,controller", topicconfig.TypeList, topicconfig.SrcStaticBroker, ""},
		{"socket.request.max.bytes", "104857600", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"transaction.state.log.min.isr", "1", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
		{"transaction.state.log.replication.factor", "1", topicconfig.TypeShort, topicconfig.SrcDefault, ""},
		// The transaction coordinator's fixed bound (txn.maxTimeout).
		{"transaction.max.timeout.ms", "900000", topicconfig.TypeInt, topicconfig.SrcDefault, ""},
	}
	cs = append(cs, b.cfg.Groups.brokerConfigs()...) // group.go
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}
