package broker

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// Config types and sources as DescribeConfigs v1+/v3+ report them.
const (
	cfgTypeBoolean int8 = 1
	cfgTypeString  int8 = 2
	cfgTypeInt     int8 = 3
	cfgTypeShort   int8 = 4
	cfgTypeLong    int8 = 5
	cfgTypeDouble  int8 = 6
	cfgTypeList    int8 = 7

	srcDynamicTopic int8 = 1
	srcStaticBroker int8 = 4
	srcDefault      int8 = 5
)

// topicConfigDef describes one topic config: its type, Kafka's default,
// the broker config it falls back to (its synonym) and which values are
// legal here.
type topicConfigDef struct {
	name     string
	typ      int8
	def      string
	synonym  string
	min, max float64 // numeric bounds, inclusive
	enum     []string
	doc      string
}

const maxLong = "9223372036854775807"

// topicConfigDefs are the topic configs Kafka 4.x users expect to see.
// The ones this broker acts on are marked "applied"; the rest are accepted
// and reported (clients such as schema registries set and check them) but
// have no effect on a single node without compaction or tiered storage.
var topicConfigDefs = []topicConfigDef{
	{name: "cleanup.policy", typ: cfgTypeList, def: "delete", synonym: "log.cleanup.policy", enum: []string{"delete", "compact"},
		doc: "delete: retention applies; compact: the log cleaner keeps the latest record per key (both applied)"},
	{name: "compression.gzip.level", typ: cfgTypeInt, def: "-1", synonym: "compression.gzip.level", min: -1, max: records.GzipLevelMax,
		doc: "gzip level when compression.type is gzip: 1..9, or -1 for the codec's default (applied)"},
	{name: "compression.lz4.level", typ: cfgTypeInt, def: "9", synonym: "compression.lz4.level", min: records.LZ4LevelMin, max: records.LZ4LevelMax,
		doc: "lz4 level when compression.type is lz4, 1..17 (applied; levels above 9 compress as 9)"},
	{name: "compression.type", typ: cfgTypeString, def: "producer", synonym: "compression.type", enum: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"},
		doc: "producer stores batches as the producer compressed them; a codec (or uncompressed) recompresses every batch that arrives in another codec (applied)"},
	{name: "compression.zstd.level", typ: cfgTypeInt, def: "3", synonym: "compression.zstd.level", min: records.ZstdLevelMin, max: records.ZstdLevelMax,
		doc: "zstd level when compression.type is zstd, -131072..22 (applied)"},
	{name: "delete.retention.ms", typ: cfgTypeLong, def: "86400000", synonym: "log.cleaner.delete.retention.ms", min: 0, max: math.MaxInt64},
	{name: "file.delete.delay.ms", typ: cfgTypeLong, def: "60000", synonym: "log.segment.delete.delay.ms", min: 0, max: math.MaxInt64},
	{name: "flush.messages", typ: cfgTypeLong, def: maxLong, synonym: "log.flush.interval.messages", min: 1, max: math.MaxInt64},
	{name: "flush.ms", typ: cfgTypeLong, def: maxLong, synonym: "log.flush.interval.ms", min: 0, max: math.MaxInt64},
	{name: "follower.replication.throttled.replicas", typ: cfgTypeList, def: "", synonym: "follower.replication.throttled.replicas"},
	{name: "index.interval.bytes", typ: cfgTypeInt, def: "4096", synonym: "log.index.interval.bytes", min: 0, max: math.MaxInt32,
		doc: "bytes between offset index entries (applied)"},
	{name: "leader.replication.throttled.replicas", typ: cfgTypeList, def: "", synonym: "leader.replication.throttled.replicas"},
	{name: "local.retention.bytes", typ: cfgTypeLong, def: "-2", synonym: "log.local.retention.bytes", min: -2, max: math.MaxInt64},
	{name: "local.retention.ms", typ: cfgTypeLong, def: "-2", synonym: "log.local.retention.ms", min: -2, max: math.MaxInt64},
	{name: "max.compaction.lag.ms", typ: cfgTypeLong, def: maxLong, synonym: "log.cleaner.max.compaction.lag.ms", min: 1, max: math.MaxInt64},
	{name: "max.message.bytes", typ: cfgTypeInt, def: "1048588", synonym: "message.max.bytes", min: 0, max: math.MaxInt32,
		doc: "largest record batch accepted (applied)"},
	{name: "message.timestamp.after.max.ms", typ: cfgTypeLong, def: "3600000", synonym: "log.message.timestamp.after.max.ms", min: 0, max: math.MaxInt64,
		doc: "how far in the future a CreateTime timestamp may be (applied)"},
	{name: "message.timestamp.before.max.ms", typ: cfgTypeLong, def: maxLong, synonym: "log.message.timestamp.before.max.ms", min: 0, max: math.MaxInt64,
		doc: "how far in the past a CreateTime timestamp may be (applied)"},
	{name: "message.timestamp.type", typ: cfgTypeString, def: "CreateTime", synonym: "log.message.timestamp.type", enum: []string{"CreateTime", "LogAppendTime"},
		doc: "CreateTime or LogAppendTime (applied)"},
	{name: "min.cleanable.dirty.ratio", typ: cfgTypeDouble, def: "0.5", synonym: "log.cleaner.min.cleanable.ratio", min: 0, max: 1},
	{name: "min.compaction.lag.ms", typ: cfgTypeLong, def: "0", synonym: "log.cleaner.min.compaction.lag.ms", min: 0, max: math.MaxInt64},
	{name: "min.insync.replicas", typ: cfgTypeInt, def: "1", synonym: "min.insync.replicas", min: 1, max: math.MaxInt32,
		doc: "above 1, acks=all produce fails with NOT_ENOUGH_REPLICAS on this single node (applied)"},
	{name: "preallocate", typ: cfgTypeBoolean, def: "false", synonym: "log.preallocate"},
	{name: "remote.storage.enable", typ: cfgTypeBoolean, def: "false", synonym: "remote.log.storage.system.enable", enum: []string{"false"},
		doc: "tiered storage is not supported"},
	{name: "retention.bytes", typ: cfgTypeLong, def: "-1", synonym: "log.retention.bytes", min: -1, max: math.MaxInt64,
		doc: "size bound per partition, -1 unlimited (applied)"},
	{name: "retention.ms", typ: cfgTypeLong, def: "604800000", synonym: "log.retention.ms", min: -1, max: math.MaxInt64,
		doc: "age bound, -1 unlimited (applied)"},
	{name: "segment.bytes", typ: cfgTypeInt, def: "1073741824", synonym: "log.segment.bytes", min: 14, max: math.MaxInt32,
		doc: "segment file size (applied)"},
	{name: "segment.index.bytes", typ: cfgTypeInt, def: "10485760", synonym: "log.index.size.max.bytes", min: 4, max: math.MaxInt32},
	{name: "segment.jitter.ms", typ: cfgTypeLong, def: "0", synonym: "log.roll.jitter.ms", min: 0, max: math.MaxInt64},
	{name: "segment.ms", typ: cfgTypeLong, def: "604800000", synonym: "log.roll.ms", min: 1, max: math.MaxInt64,
		doc: "segment age before rolling (applied)"},
	{name: "unclean.leader.election.enable", typ: cfgTypeBoolean, def: "false", synonym: "unclean.leader.election.enable"},
}

var topicConfigIndex = func() map[string]*topicConfigDef {
	m := make(map[string]*topicConfigDef, len(topicConfigDefs))
	for i := range topicConfigDefs {
		m[topicConfigDefs[i].name] = &topicConfigDefs[i]
	}
	return m
}()

// topicConfig is a topic's effective configuration.
type topicConfig struct {
	set map[string]string // explicitly set values (persisted)

	// inherit holds, per topic config name, the dynamic broker configs
	// it defaults to (dynconfig.go), in precedence order.
	inherit map[string]inherited

	log                 logstore.Config
	maxMessageBytes     int32
	minInsync           int32
	tsAfterMax          int64 // ms; MaxInt64 disables
	tsBeforeMax         int64
	logAppendTimestamps bool

	// compression.type other than producer: batches in another codec are
	// rebuilt in codec (at codecLevel, records.LevelDefault when the
	// level config is not set) before they are stored.
	recompress bool
	codec      records.Codec
	codecLevel int
}

// inherited is the chain of dynamic broker configs a topic config falls
// back to: per-broker, then the cluster default.
type inherited struct {
	chain []inheritedValue
}

type inheritedValue struct {
	name, value string // the broker config (log.retention.ms) and its value
	src         int8
}

// value returns the effective value of name and whether it was set on the
// topic.
func (c *topicConfig) value(name string) (string, bool) {
	v, src := c.source(name)
	return v, src == srcDynamicTopic
}

// source returns the effective value of name and where it comes from: the
// topic, a dynamic broker config, or Kafka's default.
func (c *topicConfig) source(name string) (string, int8) {
	if v, ok := c.set[name]; ok {
		return v, srcDynamicTopic
	}
	if in, ok := c.inherit[name]; ok && len(in.chain) > 0 {
		return in.chain[0].value, in.chain[0].src
	}
	return topicConfigIndex[name].def, srcDefault
}

// compacts reports whether cleanup.policy lists compact (the cleaner
// compacts the topic and every record needs a key); deletes whether it lists
// delete (retention applies). This is the one place that reads the policy.
func (c *topicConfig) compacts() bool { return c.policyLists("compact") }
func (c *topicConfig) deletes() bool  { return c.policyLists("delete") }

// policyLists reads cleanup.policy as Kafka's list type: comma-separated,
// items trimmed and compared without case.
func (c *topicConfig) policyLists(policy string) bool {
	pol, _ := c.value("cleanup.policy")
	for pol != "" {
		item, rest, _ := strings.Cut(pol, ",")
		if strings.EqualFold(strings.TrimSpace(item), policy) {
			return true
		}
		pol = rest
	}
	return false
}

func (c *topicConfig) int64(name string) int64 {
	v, _ := c.value(name)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// validateTopicConfig checks one name=value pair as Kafka's LogConfig does.
func validateTopicConfig(name string, value *string) error {
	d := topicConfigIndex[name]
	if d == nil {
		return fmt.Errorf("unknown topic config name: %s", name)
	}
	if value == nil {
		return fmt.Errorf("null value not supported for topic config %s", name)
	}
	return validateConfigValue(d, *value)
}

// validateConfigValue checks v against d's type, bounds and choices; the
// messages name d.name (a topic config, or the broker config standing for
// it).
func validateConfigValue(d *topicConfigDef, v string) error {
	name := d.name
	switch d.typ {
	case cfgTypeLong, cfgTypeInt, cfgTypeShort:
		bits := 64
		if d.typ == cfgTypeInt {
			bits = 32
		} else if d.typ == cfgTypeShort {
			bits = 16
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if err != nil {
			return fmt.Errorf("invalid value %s for configuration %s: not a number of type %s", v, name, map[int8]string{cfgTypeLong: "LONG", cfgTypeInt: "INT", cfgTypeShort: "SHORT"}[d.typ])
		}
		if float64(n) < d.min {
			return fmt.Errorf("invalid value %s for configuration %s: value must be at least %.0f", v, name, d.min)
		}
		if float64(n) > d.max {
			return fmt.Errorf("invalid value %s for configuration %s: value must be at most %.0f", v, name, d.max)
		}
		if name == "compression.gzip.level" && n == 0 {
			return fmt.Errorf("invalid value %s for configuration %s: value must be between %d and %d, or -1 for the default", v, name, records.GzipLevelMin, records.GzipLevelMax)
		}
	case cfgTypeDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < d.min || f > d.max {
			return fmt.Errorf("invalid value %s for configuration %s", v, name)
		}
	case cfgTypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("invalid value %s for configuration %s: expected value to be either true or false", v, name)
		}
	}
	if d.enum != nil {
		items := []string{v}
		if d.typ == cfgTypeList {
			items = strings.Split(v, ",")
		}
		for _, it := range items {
			it = strings.TrimSpace(it)
			ok := false
			for _, e := range d.enum {
				if strings.EqualFold(it, e) {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("invalid value %s for configuration %s: supported values are %s", v, name, strings.Join(d.enum, ", "))
			}
		}
	}
	return nil
}

// parseTopicConfigs validates set and derives the effective configuration
// over Kafka's defaults (a broker's own dynamic defaults: its
// parseTopicConfigs method, dynconfig.go).
func parseTopicConfigs(set map[string]string) (*topicConfig, error) {
	return parseTopicConfigsWith(set, nil)
}

// parseTopicConfigsWith is parseTopicConfigs over the dynamic broker
// defaults in inherit.
func parseTopicConfigsWith(set map[string]string, inherit map[string]inherited) (*topicConfig, error) {
	c := &topicConfig{set: map[string]string{}, inherit: inherit}
	for k, v := range set {
		if err := validateTopicConfig(k, &v); err != nil {
			return nil, err
		}
		c.set[k] = v
	}
	if len(c.set) == 0 {
		c.set = nil
	}
	l := logstore.DefaultConfig()
	l.SegmentBytes = c.int64("segment.bytes")
	l.SegmentMs = compactionSegmentMs(c, time.Duration(c.int64("segment.ms"))*time.Millisecond) // cleaner.go
	l.IndexIntervalBytes = int(c.int64("index.interval.bytes"))
	l.RetentionMs = msDuration(c.int64("retention.ms"))
	l.RetentionBytes = c.int64("retention.bytes")
	if !c.deletes() {
		// compact-only topics are never deleted by retention in Kafka.
		l.RetentionMs, l.RetentionBytes = -1, -1
	}
	tt, _ := c.value("message.timestamp.type")
	l.LogAppendTime = strings.EqualFold(tt, "LogAppendTime")
	c.logAppendTimestamps = l.LogAppendTime
	c.log = l
	c.maxMessageBytes = int32(c.int64("max.message.bytes"))
	c.minInsync = int32(c.int64("min.insync.replicas"))
	c.tsAfterMax = c.int64("message.timestamp.after.max.ms")
	c.tsBeforeMax = c.int64("message.timestamp.before.max.ms")
	c.setCompression()
	return c, nil
}

// setCompression derives recompress, codec and codecLevel from
// compression.type and its level configs.
func (c *topicConfig) setCompression() {
	ct, _ := c.value("compression.type")
	levelName := ""
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "producer":
		return
	case "uncompressed":
		c.codec = records.CodecNone
	case "gzip":
		c.codec, levelName = records.CodecGzip, "compression.gzip.level"
	case "snappy":
		c.codec = records.CodecSnappy
	case "lz4":
		c.codec, levelName = records.CodecLZ4, "compression.lz4.level"
	case "zstd":
		c.codec, levelName = records.CodecZstd, "compression.zstd.level"
	}
	c.recompress = true
	if levelName == "" {
		return
	}
	if _, src := c.source(levelName); src != srcDefault {
		if l := int(c.int64(levelName)); l != -1 { // gzip's -1 is its default
			c.codecLevel = l
		}
	}
}

// msDuration converts a Kafka millisecond setting; negative means unlimited
// and values too large for a Duration are unlimited too.
func msDuration(ms int64) time.Duration {
	if ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// configsFromPairs turns CreateTopics/AlterConfigs name/value pairs into
// a map, rejecting duplicates and unknown or invalid values.
func configsFromPairs(names []string, values []*string) (map[string]string, error) {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if err := validateTopicConfig(n, values[i]); err != nil {
			return nil, err
		}
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("duplicate config %s", n)
		}
		m[n] = *values[i]
	}
	return m, nil
}

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
		{"advertised.listeners", advertised, cfgTypeString, srcStaticBroker, "address handed to clients"},
		{"auto.create.topics.enable", strconv.FormatBool(b.cfg.AutoCreateTopics), cfgTypeBoolean, srcStaticBroker, "create topics on metadata requests"},
		{"broker.id", node, cfgTypeInt, srcStaticBroker, "this node's ID"},
		{"compression.type", "producer", cfgTypeString, srcDefault, ""},
		{"connections.max.idle.ms", "600000", cfgTypeLong, srcDefault, ""},
		{"default.replication.factor", "1", cfgTypeInt, srcDefault, "single node"},
		{"delete.topic.enable", "true", cfgTypeBoolean, srcDefault, ""},
		// Kafka 4 dropped it for metadata.version, but consoles such as
		// kafka-ui still read it to decide which features to offer.
		{"inter.broker.protocol.version", interBrokerProtocolVersion, cfgTypeString, srcDefault, "the Kafka version whose protocol this broker speaks"},
		{"group.initial.rebalance.delay.ms", strconv.FormatInt(b.cfg.GroupInitialRebalanceDelay.Milliseconds(), 10), cfgTypeInt, srcStaticBroker, ""},
		{"log.cleanup.policy", "delete", cfgTypeList, srcDefault, ""},
		{"log.dirs", b.cfg.DataDir, cfgTypeString, srcStaticBroker, "data directory"},
		{"log.index.interval.bytes", "4096", cfgTypeInt, srcDefault, ""},
		{"log.message.timestamp.type", "CreateTime", cfgTypeString, srcDefault, ""},
		{"log.retention.bytes", "-1", cfgTypeLong, srcDefault, ""},
		{"log.retention.check.interval.ms", strconv.FormatInt(b.cfg.RetentionCheckInterval.Milliseconds(), 10), cfgTypeLong, srcStaticBroker, ""},
		{"log.retention.hours", "168", cfgTypeInt, srcDefault, ""},
		{"log.retention.ms", "604800000", cfgTypeLong, srcDefault, ""},
		{"log.roll.ms", "604800000", cfgTypeLong, srcDefault, ""},
		{"log.segment.bytes", "1073741824", cfgTypeInt, srcDefault, ""},
		{"message.max.bytes", "1048588", cfgTypeInt, srcDefault, ""},
		{"min.insync.replicas", "1", cfgTypeInt, srcDefault, ""},
		{"node.id", node, cfgTypeInt, srcStaticBroker, "this node's ID"},
		{"num.partitions", strconv.Itoa(int(b.cfg.DefaultPartitions)), cfgTypeInt, srcStaticBroker, "partitions of auto-created topics and of CreateTopics with -1"},
		{"offsets.topic.replication.factor", "1", cfgTypeShort, srcDefault, ""},
		{"process.roles", "broker,controller", cfgTypeList, srcStaticBroker, ""},
		{"socket.request.max.bytes", "104857600", cfgTypeInt, srcDefault, ""},
		{"transaction.state.log.min.isr", "1", cfgTypeInt, srcDefault, ""},
		{"transaction.state.log.replication.factor", "1", cfgTypeShort, srcDefault, ""},
	}
	cs = append(cs, b.cfg.Groups.brokerConfigs()...) // group.go
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}
