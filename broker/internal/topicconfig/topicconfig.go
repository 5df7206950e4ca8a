// Package topicconfig is the topic configuration: the configs Kafka 4.x
// defines for a topic (Defs: type, default, the broker config standing
// for it, legal values), their validation as Kafka's LogConfig checks
// them, and Config, a topic's effective configuration (explicitly set
// values over the dynamic broker defaults it inherits over Kafka's
// defaults) with what the broker derives from it: the logstore settings,
// size and timestamp bounds, the codec to recompress into, the cleaner's
// settings. It imports neither broker nor protocol (internal/lint checks
// that); broker/internal/configs describes and alters configs.
package topicconfig

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

// Config types and sources as DescribeConfigs v1+/v3+ report them.
const (
	TypeBoolean int8 = 1
	TypeString  int8 = 2
	TypeInt     int8 = 3
	TypeShort   int8 = 4
	TypeLong    int8 = 5
	TypeDouble  int8 = 6
	TypeList    int8 = 7

	SrcDynamicTopic int8 = 1
	SrcStaticBroker int8 = 4
	SrcDefault      int8 = 5
)

// Def describes one topic config: its type, Kafka's default,
// the broker config it falls back to (its synonym) and which values are
// legal here.
type Def struct {
	Name     string
	Type     int8
	Default  string
	Synonym  string
	Min, Max float64 // numeric bounds, inclusive
	Enum     []string
	Doc      string
}

const MaxLong = "9223372036854775807"

// Defs are the topic configs Kafka 4.x users expect to see.
// The ones this broker acts on are marked "applied"; the rest are accepted
// and reported (clients such as schema registries set and check them) but
// have no effect on a single node without compaction or tiered storage.
var Defs = []Def{
	{Name: "cleanup.policy", Type: TypeList, Default: "delete", Synonym: "log.cleanup.policy", Enum: []string{"compact", "delete"},
		Doc: "delete: retention applies; compact: the log cleaner keeps the latest record per key (both applied)"},
	{Name: "compression.gzip.level", Type: TypeInt, Default: "-1", Synonym: "compression.gzip.level", Min: -1, Max: records.GzipLevelMax,
		Doc: "gzip level when compression.type is gzip: 1..9, or -1 for the codec's default (applied)"},
	{Name: "compression.lz4.level", Type: TypeInt, Default: "9", Synonym: "compression.lz4.level", Min: records.LZ4LevelMin, Max: records.LZ4LevelMax,
		Doc: "lz4 level when compression.type is lz4, 1..17 (applied; levels above 9 compress as 9)"},
	{Name: "compression.type", Type: TypeString, Default: "producer", Synonym: "compression.type", Enum: []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"},
		Doc: "producer stores batches as the producer compressed them; a codec (or uncompressed) recompresses every batch that arrives in another codec (applied)"},
	{Name: "compression.zstd.level", Type: TypeInt, Default: "3", Synonym: "compression.zstd.level", Min: records.ZstdLevelMin, Max: records.ZstdLevelMax,
		Doc: "zstd level when compression.type is zstd, -131072..22 (applied)"},
	{Name: "delete.retention.ms", Type: TypeLong, Default: "86400000", Synonym: "log.cleaner.delete.retention.ms", Min: 0, Max: math.MaxInt64},
	{Name: "file.delete.delay.ms", Type: TypeLong, Default: "60000", Synonym: "log.segment.delete.delay.ms", Min: 0, Max: math.MaxInt64},
	{Name: "flush.messages", Type: TypeLong, Default: MaxLong, Synonym: "log.flush.interval.messages", Min: 1, Max: math.MaxInt64},
	{Name: "flush.ms", Type: TypeLong, Default: MaxLong, Synonym: "log.flush.interval.ms", Min: 0, Max: math.MaxInt64},
	{Name: "follower.replication.throttled.replicas", Type: TypeList, Default: "", Synonym: "follower.replication.throttled.replicas"},
	{Name: "index.interval.bytes", Type: TypeInt, Default: "4096", Synonym: "log.index.interval.bytes", Min: 0, Max: math.MaxInt32,
		Doc: "bytes between offset index entries (applied)"},
	{Name: "leader.replication.throttled.replicas", Type: TypeList, Default: "", Synonym: "leader.replication.throttled.replicas"},
	{Name: "local.retention.bytes", Type: TypeLong, Default: "-2", Synonym: "log.local.retention.bytes", Min: -2, Max: math.MaxInt64},
	{Name: "local.retention.ms", Type: TypeLong, Default: "-2", Synonym: "log.local.retention.ms", Min: -2, Max: math.MaxInt64},
	{Name: "max.compaction.lag.ms", Type: TypeLong, Default: MaxLong, Synonym: "log.cleaner.max.compaction.lag.ms", Min: 1, Max: math.MaxInt64},
	{Name: "max.message.bytes", Type: TypeInt, Default: "1048588", Synonym: "message.max.bytes", Min: 0, Max: math.MaxInt32,
		Doc: "largest record batch accepted (applied)"},
	{Name: "message.timestamp.after.max.ms", Type: TypeLong, Default: "3600000", Synonym: "log.message.timestamp.after.max.ms", Min: 0, Max: math.MaxInt64,
		Doc: "how far in the future a CreateTime timestamp may be (applied)"},
	{Name: "message.timestamp.before.max.ms", Type: TypeLong, Default: MaxLong, Synonym: "log.message.timestamp.before.max.ms", Min: 0, Max: math.MaxInt64,
		Doc: "how far in the past a CreateTime timestamp may be (applied)"},
	{Name: "message.timestamp.type", Type: TypeString, Default: "CreateTime", Synonym: "log.message.timestamp.type", Enum: []string{"CreateTime", "LogAppendTime"},
		Doc: "CreateTime or LogAppendTime (applied)"},
	{Name: "min.cleanable.dirty.ratio", Type: TypeDouble, Default: "0.5", Synonym: "log.cleaner.min.cleanable.ratio", Min: 0, Max: 1},
	{Name: "min.compaction.lag.ms", Type: TypeLong, Default: "0", Synonym: "log.cleaner.min.compaction.lag.ms", Min: 0, Max: math.MaxInt64},
	{Name: "min.insync.replicas", Type: TypeInt, Default: "1", Synonym: "min.insync.replicas", Min: 1, Max: math.MaxInt32,
		Doc: "above 1, acks=all produce fails with NOT_ENOUGH_REPLICAS on this single node (applied)"},
	{Name: "preallocate", Type: TypeBoolean, Default: "false", Synonym: "log.preallocate"},
	{Name: "remote.storage.enable", Type: TypeBoolean, Default: "false", Synonym: "remote.log.storage.system.enable", Enum: []string{"false"},
		Doc: "tiered storage is not supported"},
	{Name: "retention.bytes", Type: TypeLong, Default: "-1", Synonym: "log.retention.bytes", Min: -1, Max: math.MaxInt64,
		Doc: "size bound per partition, -1 unlimited (applied)"},
	{Name: "retention.ms", Type: TypeLong, Default: "604800000", Synonym: "log.retention.ms", Min: -1, Max: math.MaxInt64,
		Doc: "age bound, -1 unlimited (applied)"},
	{Name: "segment.bytes", Type: TypeInt, Default: "1073741824", Synonym: "log.segment.bytes", Min: 14, Max: math.MaxInt32,
		Doc: "segment file size (applied)"},
	{Name: "segment.index.bytes", Type: TypeInt, Default: "10485760", Synonym: "log.index.size.max.bytes", Min: 4, Max: math.MaxInt32},
	{Name: "segment.jitter.ms", Type: TypeLong, Default: "0", Synonym: "log.roll.jitter.ms", Min: 0, Max: math.MaxInt64},
	{Name: "segment.ms", Type: TypeLong, Default: "604800000", Synonym: "log.roll.ms", Min: 1, Max: math.MaxInt64,
		Doc: "segment age before rolling (applied)"},
	{Name: "unclean.leader.election.enable", Type: TypeBoolean, Default: "false", Synonym: "unclean.leader.election.enable"},
}

var Index = func() map[string]*Def {
	m := make(map[string]*Def, len(Defs))
	for i := range Defs {
		m[Defs[i].Name] = &Defs[i]
	}
	return m
}()

// Config is a topic's effective configuration.
type Config struct {
	Set map[string]string // explicitly set values (persisted)

	// inherit holds, per topic config name, the dynamic broker configs
	// it defaults to (broker/internal/configs), in precedence order.
	Inherit map[string]Inherited

	Log                 logstore.Config
	MaxMessageBytes     int32
	MinInsync           int32
	TsAfterMax          int64 // ms; MaxInt64 disables
	TsBeforeMax         int64
	LogAppendTimestamps bool

	// compression.type other than producer: batches in another codec are
	// rebuilt in codec (at codecLevel, records.LevelDefault when the
	// level config is not set) before they are stored.
	Recompress bool
	Codec      records.Codec
	CodecLevel int
}

// Inherited is the chain of dynamic broker configs a topic config falls
// back to: per-broker, then the cluster default.
type Inherited struct {
	Chain []InheritedValue
}

type InheritedValue struct {
	Name, Value string // the broker config (log.retention.ms) and its value
	Src         int8
}

// value returns the effective value of name and whether it was set on the
// topic.
func (c *Config) Value(name string) (string, bool) {
	v, src := c.Source(name)
	return v, src == SrcDynamicTopic
}

// source returns the effective value of name and where it comes from: the
// topic, a dynamic broker config, or Kafka's default.
func (c *Config) Source(name string) (string, int8) {
	if v, ok := c.Set[name]; ok {
		return v, SrcDynamicTopic
	}
	if in, ok := c.Inherit[name]; ok && len(in.Chain) > 0 {
		return in.Chain[0].Value, in.Chain[0].Src
	}
	return Index[name].Default, SrcDefault
}

// compacts reports whether cleanup.policy lists compact (the cleaner
// compacts the topic and every record needs a key); deletes whether it lists
// delete (retention applies). This is the one place that reads the policy.
func (c *Config) Compacts() bool { return c.policyLists("compact") }
func (c *Config) Deletes() bool  { return c.policyLists("delete") }

// policyLists reads cleanup.policy as Kafka's list type: comma-separated,
// items trimmed and compared without case.
func (c *Config) policyLists(policy string) bool {
	pol, _ := c.Value("cleanup.policy")
	for pol != "" {
		item, rest, _ := strings.Cut(pol, ",")
		if strings.EqualFold(strings.TrimSpace(item), policy) {
			return true
		}
		pol = rest
	}
	return false
}

func (c *Config) Int64(name string) int64 {
	v, _ := c.Value(name)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// Validate checks one name=value pair as Kafka's LogConfig does.
func Validate(name string, value *string) error {
	d := Index[name]
	if d == nil {
		return fmt.Errorf("Unknown topic config name: %s", name)
	}
	if value == nil {
		return fmt.Errorf("null value not supported for topic config %s", name)
	}
	return ValidateValue(d, *value)
}

// ValidateValue checks v against d's type, bounds and choices; the
// messages name d.Name (a topic config, or the broker config standing for
// it).
func ValidateValue(d *Def, v string) error {
	name := d.Name
	switch d.Type {
	case TypeLong, TypeInt, TypeShort:
		bits := 64
		if d.Type == TypeInt {
			bits = 32
		} else if d.Type == TypeShort {
			bits = 16
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if err != nil {
			return fmt.Errorf("Invalid value %s for configuration %s: Not a number of type %s", v, name, map[int8]string{TypeLong: "LONG", TypeInt: "INT", TypeShort: "SHORT"}[d.Type])
		}
		if float64(n) < d.Min {
			return fmt.Errorf("Invalid value %s for configuration %s: Value must be at least %.0f", v, name, d.Min)
		}
		if float64(n) > d.Max {
			return fmt.Errorf("Invalid value %s for configuration %s: Value must be no more than %.0f", v, name, d.Max)
		}
		if name == "compression.gzip.level" && n == 0 {
			return fmt.Errorf("Invalid value %s for configuration %s: Value must be between %d and %d, or -1 for the default", v, name, records.GzipLevelMin, records.GzipLevelMax)
		}
	case TypeDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < d.Min || f > d.Max {
			return fmt.Errorf("Invalid value %s for configuration %s", v, name)
		}
	case TypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("Invalid value %s for configuration %s: Expected value to be either true or false", v, name)
		}
	}
	if d.Enum != nil {
		items := []string{v}
		if d.Type == TypeList {
			items = strings.Split(v, ",")
		}
		for _, it := range items {
			it = strings.TrimSpace(it)
			ok := false
			for _, e := range d.Enum {
				if strings.EqualFold(it, e) {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("Invalid value %s for configuration %s: String must be one of: %s", v, name, strings.Join(d.Enum, ", "))
			}
		}
	}
	return nil
}

// Parse validates set and derives the effective configuration over
// Kafka's defaults (over a broker's own dynamic defaults:
// configs.Manager.ParseTopic).
func Parse(set map[string]string) (*Config, error) {
	return ParseWith(set, nil)
}

// ParseWith is Parse over the dynamic broker defaults in inherit.
func ParseWith(set map[string]string, inherit map[string]Inherited) (*Config, error) {
	c := &Config{Set: map[string]string{}, Inherit: inherit}
	for k, v := range set {
		if err := Validate(k, &v); err != nil {
			return nil, err
		}
		c.Set[k] = v
	}
	if len(c.Set) == 0 {
		c.Set = nil
	}
	l := logstore.DefaultConfig()
	l.SegmentBytes = c.Int64("segment.bytes")
	l.SegmentMs = compactionSegmentMs(c, time.Duration(c.Int64("segment.ms"))*time.Millisecond)
	l.IndexIntervalBytes = int(c.Int64("index.interval.bytes"))
	l.RetentionMs = MsDuration(c.Int64("retention.ms"))
	l.RetentionBytes = c.Int64("retention.bytes")
	if !c.Deletes() {
		// compact-only topics are never deleted by retention in Kafka.
		l.RetentionMs, l.RetentionBytes = -1, -1
	}
	tt, _ := c.Value("message.timestamp.type")
	l.LogAppendTime = strings.EqualFold(tt, "LogAppendTime")
	c.LogAppendTimestamps = l.LogAppendTime
	c.Log = l
	c.MaxMessageBytes = int32(c.Int64("max.message.bytes"))
	c.MinInsync = int32(c.Int64("min.insync.replicas"))
	c.TsAfterMax = c.Int64("message.timestamp.after.max.ms")
	c.TsBeforeMax = c.Int64("message.timestamp.before.max.ms")
	c.setCompression()
	return c, nil
}

// setCompression derives recompress, codec and codecLevel from
// compression.type and its level configs.
func (c *Config) setCompression() {
	ct, _ := c.Value("compression.type")
	levelName := ""
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "producer":
		return
	case "uncompressed":
		c.Codec = records.CodecNone
	case "gzip":
		c.Codec, levelName = records.CodecGzip, "compression.gzip.level"
	case "snappy":
		c.Codec = records.CodecSnappy
	case "lz4":
		c.Codec, levelName = records.CodecLZ4, "compression.lz4.level"
	case "zstd":
		c.Codec, levelName = records.CodecZstd, "compression.zstd.level"
	}
	c.Recompress = true
	if levelName == "" {
		return
	}
	if _, src := c.Source(levelName); src != SrcDefault {
		if l := int(c.Int64(levelName)); l != -1 { // gzip's -1 is its default
			c.CodecLevel = l
		}
	}
}

// MsDuration converts a Kafka millisecond setting; negative means unlimited
// and values too large for a Duration are unlimited too.
func MsDuration(ms int64) time.Duration {
	if ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// FromPairs turns CreateTopics/AlterConfigs name/value pairs into
// a map, rejecting duplicates and unknown or invalid values.
func FromPairs(names []string, values []*string) (map[string]string, error) {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if err := Validate(n, values[i]); err != nil {
			return nil, err
		}
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("duplicate config %s", n)
		}
		m[n] = *values[i]
	}
	return m, nil
}

// Cleaner is the compaction part of a topic's configuration.
type Cleaner struct {
	Compact         bool
	MinDirtyRatio   float64
	MinLag          time.Duration
	MaxLag          time.Duration // <0: none
	DeleteRetention time.Duration
}

// Cleaner is the compaction part of the configuration.
func (c *Config) Cleaner() Cleaner {
	cc := Cleaner{Compact: c.Compacts()}
	if !cc.Compact {
		return cc
	}
	r, _ := c.Value("min.cleanable.dirty.ratio")
	cc.MinDirtyRatio, _ = strconv.ParseFloat(strings.TrimSpace(r), 64)
	cc.MinLag = MsDuration(c.Int64("min.compaction.lag.ms"))
	cc.MaxLag = MsDuration(c.Int64("max.compaction.lag.ms"))
	cc.DeleteRetention = MsDuration(c.Int64("delete.retention.ms"))
	if cc.DeleteRetention < 0 {
		cc.DeleteRetention = math.MaxInt64
	}
	return cc
}

// compactionSegmentMs is the roll time of a compacted topic's active
// segment: Kafka rolls it by max.compaction.lag.ms too, since the active
// segment is never cleaned.
func compactionSegmentMs(c *Config, segmentMs time.Duration) time.Duration {
	cc := c.Cleaner()
	if cc.Compact && cc.MaxLag > 0 && (segmentMs <= 0 || cc.MaxLag < segmentMs) {
		return cc.MaxLag
	}
	return segmentMs
}
