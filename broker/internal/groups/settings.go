package groups

import (
	"math"
	"strconv"
	"time"

	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

// Settings is the group coordinator's settings as the embedder gives them
// (broker.GroupConfig), named as Kafka names them; a zero field means
// Kafka's default (WithDefaults).
type Settings struct {
	// OffsetsRetention is offsets.retention.minutes: committed offsets of
	// a group without members are dropped this long after it became empty
	// (an explicit v2–v4 commit retention overrides it). Default 7 days.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms,
	// how often expired offsets are looked for. Default 10 minutes.
	OffsetsRetentionCheckInterval time.Duration
	// MinSessionTimeout and MaxSessionTimeout are group.min.session.timeout.ms
	// and group.max.session.timeout.ms: a classic JoinGroup whose session
	// timeout lies outside them is refused with INVALID_SESSION_TIMEOUT.
	// Defaults 6 s and 30 minutes.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms: a KIP-848
	// member that has not heartbeated for that long is removed. Default 45 s.
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms, the
	// interval KIP-848 members are told to heartbeat at. Default 5 s.
	ConsumerHeartbeatInterval time.Duration
	// ConsumerMinSessionTimeout and ConsumerMaxSessionTimeout are
	// group.consumer.min/max.session.timeout.ms, and
	// ConsumerMinHeartbeatInterval and ConsumerMaxHeartbeatInterval
	// group.consumer.min/max.heartbeat.interval.ms: the range a group's own
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms may
	// take (IncrementalAlterConfigs on the GROUP resource). Defaults 45 s
	// to 60 s and 5 s to 15 s; an unset bound stretches to take in the
	// broker's own ConsumerSessionTimeout or ConsumerHeartbeatInterval.
	ConsumerMinSessionTimeout, ConsumerMaxSessionTimeout       time.Duration
	ConsumerMinHeartbeatInterval, ConsumerMaxHeartbeatInterval time.Duration
	// ConsumerMaxSize is group.consumer.max.size: a KIP-848 consumer group
	// this many members strong refuses another with
	// GROUP_MAX_SIZE_REACHED. Default Kafka's, 2^31-1 (no limit).
	ConsumerMaxSize int
	// ShareMinRecordLockDuration is group.share.min.record.lock.duration.ms,
	// the shortest share.record.lock.duration.ms a share group may set.
	// Default 15 s (the share coordinator's).
	ShareMinRecordLockDuration time.Duration
}

// DefaultSettings is Kafka's defaults.
func DefaultSettings() Settings {
	return Settings{
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
		ConsumerMinSessionTimeout:     45 * time.Second,
		ConsumerMaxSessionTimeout:     60 * time.Second,
		ConsumerMinHeartbeatInterval:  5 * time.Second,
		ConsumerMaxHeartbeatInterval:  15 * time.Second,
		ShareMinRecordLockDuration:    15 * time.Second,
		ConsumerMaxSize:               math.MaxInt32,
	}
}

// WithDefaults fills zero fields with Kafka's defaults.
func (s Settings) WithDefaults() Settings {
	d := DefaultSettings()
	for _, f := range []struct{ v, def *time.Duration }{
		{&s.OffsetsRetention, &d.OffsetsRetention},
		{&s.OffsetsRetentionCheckInterval, &d.OffsetsRetentionCheckInterval},
		{&s.MinSessionTimeout, &d.MinSessionTimeout},
		{&s.MaxSessionTimeout, &d.MaxSessionTimeout},
		{&s.ConsumerSessionTimeout, &d.ConsumerSessionTimeout},
		{&s.ConsumerHeartbeatInterval, &d.ConsumerHeartbeatInterval},
		{&s.ShareMinRecordLockDuration, &d.ShareMinRecordLockDuration},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if s.ConsumerMaxSize <= 0 {
		s.ConsumerMaxSize = d.ConsumerMaxSize
	}
	// An unset bound takes in the broker's own value (a test broker's
	// short heartbeat interval, say), so that the group may set it too.
	for _, b := range []struct {
		v        time.Duration
		lo, hi   *time.Duration
		def      [2]time.Duration
		loS, hiS bool
	}{
		{s.ConsumerSessionTimeout, &s.ConsumerMinSessionTimeout, &s.ConsumerMaxSessionTimeout,
			[2]time.Duration{d.ConsumerMinSessionTimeout, d.ConsumerMaxSessionTimeout}, s.ConsumerMinSessionTimeout > 0, s.ConsumerMaxSessionTimeout > 0},
		{s.ConsumerHeartbeatInterval, &s.ConsumerMinHeartbeatInterval, &s.ConsumerMaxHeartbeatInterval,
			[2]time.Duration{d.ConsumerMinHeartbeatInterval, d.ConsumerMaxHeartbeatInterval}, s.ConsumerMinHeartbeatInterval > 0, s.ConsumerMaxHeartbeatInterval > 0},
	} {
		if !b.loS {
			*b.lo = min(b.def[0], b.v)
		}
		if !b.hiS {
			*b.hi = max(b.def[1], b.v)
		}
	}
	return s
}

// BrokerConfigs reports the settings in effect for DescribeConfigs of the
// broker resource: set ones as static broker config, the rest as defaults.
func (s Settings) BrokerConfigs() []configs.Static {
	eff := s.WithDefaults()
	ms := func(name string, set, v time.Duration, typ int8) configs.Static {
		src := topicconfig.SrcDefault
		if set > 0 {
			src = topicconfig.SrcStaticBroker
		}
		return configs.Static{Name: name, Value: strconv.FormatInt(v.Milliseconds(), 10), Type: typ, Source: src}
	}
	minutes := ms("offsets.retention.minutes", s.OffsetsRetention, 0, topicconfig.TypeInt)
	minutes.Value = strconv.FormatInt(int64(eff.OffsetsRetention/time.Minute), 10)
	maxSize := configs.Static{Name: "group.consumer.max.size", Value: strconv.Itoa(eff.ConsumerMaxSize), Type: topicconfig.TypeInt, Source: topicconfig.SrcDefault}
	if s.ConsumerMaxSize > 0 {
		maxSize.Source = topicconfig.SrcStaticBroker
	}
	return []configs.Static{
		maxSize,
		ms("group.consumer.heartbeat.interval.ms", s.ConsumerHeartbeatInterval, eff.ConsumerHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.max.heartbeat.interval.ms", s.ConsumerMaxHeartbeatInterval, eff.ConsumerMaxHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.max.session.timeout.ms", s.ConsumerMaxSessionTimeout, eff.ConsumerMaxSessionTimeout, topicconfig.TypeInt),
		ms("group.consumer.min.heartbeat.interval.ms", s.ConsumerMinHeartbeatInterval, eff.ConsumerMinHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.min.session.timeout.ms", s.ConsumerMinSessionTimeout, eff.ConsumerMinSessionTimeout, topicconfig.TypeInt),
		ms("group.consumer.session.timeout.ms", s.ConsumerSessionTimeout, eff.ConsumerSessionTimeout, topicconfig.TypeInt),
		ms("group.max.session.timeout.ms", s.MaxSessionTimeout, eff.MaxSessionTimeout, topicconfig.TypeInt),
		ms("group.min.session.timeout.ms", s.MinSessionTimeout, eff.MinSessionTimeout, topicconfig.TypeInt),
		ms("offsets.retention.check.interval.ms", s.OffsetsRetentionCheckInterval, eff.OffsetsRetentionCheckInterval, topicconfig.TypeLong),
		minutes,
	}
}
