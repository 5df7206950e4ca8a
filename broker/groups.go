package broker

// The group coordinator's settings. The coordinator itself is
// broker/internal/groups; the NN_*.go files for the group APIs hand it the
// decoded requests.

import (
	"math"
	"path"
	"strconv"
	"time"

	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

// newGroupCoordinator opens the group coordinator over the broker's data
// dir, with the broker seen through groupsView.
func newGroupCoordinator(b *Broker) (*groups.Coordinator, error) {
	gc := b.cfg.Groups.withDefaults()
	return groups.New(groups.Config{
		FS: b.fs, Dir: path.Join(b.cfg.DataDir, "group_offsets"),
		Sync: b.cfg.Sync.Mode, Every: b.cfg.Sync.Interval,
		Logger: b.log, Now: b.Now,
		InitialRebalanceDelay:         b.cfg.GroupInitialRebalanceDelay,
		OffsetsRetention:              gc.OffsetsRetention,
		OffsetsRetentionCheckInterval: gc.OffsetsRetentionCheckInterval,
		MinSessionTimeout:             gc.MinSessionTimeout,
		MaxSessionTimeout:             gc.MaxSessionTimeout,
		ConsumerSessionTimeout:        gc.ConsumerSessionTimeout,
		ConsumerHeartbeatInterval:     gc.ConsumerHeartbeatInterval,
		ConsumerMaxSize:               gc.ConsumerMaxSize,
		// Group configs (the GROUP config resource, internal/configs)
		// live with the share coordinator's state, which starts after
		// this one.
		GroupConfig: func(group, name string) (string, bool) {
			if b.share == nil {
				return "", false
			}
			return b.share.GroupConfig(group, name)
		},
	}, groupsView{b})
}

// groupsView is the broker as the group coordinator sees it
// (groups.Broker).
type groupsView struct{ b *Broker }

func (v groupsView) TopicID(name string) ([16]byte, bool)     { return v.b.TopicID(name) }
func (v groupsView) TopicName(id [16]byte) (string, bool)     { return v.b.TopicName(id) }
func (v groupsView) PartitionCount(name string) (int32, bool) { return v.b.PartitionCount(name) }
func (v groupsView) OnTopicDeleted(fn func(string, [16]byte)) { v.b.OnTopicDeleted(fn) }

func (v groupsView) TopicNames() []string {
	byName := v.b.topics.Load().byName
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	return names
}

// TxnOffsetPending asks the transaction coordinator, which exists once
// storage is open (the coordinator asks only while serving requests).
func (v groupsView) TxnOffsetPending(group, topic string, partition int32) bool {
	return v.b.txns.offsetPending(group, topic, partition)
}

// GroupConfig holds the group coordinator's settings, named as Kafka names
// them; a zero field means Kafka's default.
type GroupConfig struct {
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
	// Default 15 s (share.go).
	ShareMinRecordLockDuration time.Duration
}

// DefaultGroupConfig is Kafka's defaults.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{
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

// withDefaults fills zero fields with Kafka's defaults.
func (gc GroupConfig) withDefaults() GroupConfig {
	d := DefaultGroupConfig()
	for _, f := range []struct{ v, def *time.Duration }{
		{&gc.OffsetsRetention, &d.OffsetsRetention},
		{&gc.OffsetsRetentionCheckInterval, &d.OffsetsRetentionCheckInterval},
		{&gc.MinSessionTimeout, &d.MinSessionTimeout},
		{&gc.MaxSessionTimeout, &d.MaxSessionTimeout},
		{&gc.ConsumerSessionTimeout, &d.ConsumerSessionTimeout},
		{&gc.ConsumerHeartbeatInterval, &d.ConsumerHeartbeatInterval},
		{&gc.ShareMinRecordLockDuration, &d.ShareMinRecordLockDuration},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if gc.ConsumerMaxSize <= 0 {
		gc.ConsumerMaxSize = d.ConsumerMaxSize
	}
	// An unset bound takes in the broker's own value (a test broker's
	// short heartbeat interval, say), so that the group may set it too.
	for _, b := range []struct {
		v        time.Duration
		lo, hi   *time.Duration
		def      [2]time.Duration
		loS, hiS bool
	}{
		{gc.ConsumerSessionTimeout, &gc.ConsumerMinSessionTimeout, &gc.ConsumerMaxSessionTimeout,
			[2]time.Duration{d.ConsumerMinSessionTimeout, d.ConsumerMaxSessionTimeout}, gc.ConsumerMinSessionTimeout > 0, gc.ConsumerMaxSessionTimeout > 0},
		{gc.ConsumerHeartbeatInterval, &gc.ConsumerMinHeartbeatInterval, &gc.ConsumerMaxHeartbeatInterval,
			[2]time.Duration{d.ConsumerMinHeartbeatInterval, d.ConsumerMaxHeartbeatInterval}, gc.ConsumerMinHeartbeatInterval > 0, gc.ConsumerMaxHeartbeatInterval > 0},
	} {
		if !b.loS {
			*b.lo = min(b.def[0], b.v)
		}
		if !b.hiS {
			*b.hi = max(b.def[1], b.v)
		}
	}
	return gc
}

// brokerConfigs reports the settings in effect for DescribeConfigs of the
// broker resource: set ones as static broker config, the rest as defaults.
func (gc GroupConfig) brokerConfigs() []configs.Static {
	eff := gc.withDefaults()
	ms := func(name string, set, v time.Duration, typ int8) configs.Static {
		src := topicconfig.SrcDefault
		if set > 0 {
			src = topicconfig.SrcStaticBroker
		}
		return configs.Static{Name: name, Value: strconv.FormatInt(v.Milliseconds(), 10), Type: typ, Source: src}
	}
	minutes := ms("offsets.retention.minutes", gc.OffsetsRetention, 0, topicconfig.TypeInt)
	minutes.Value = strconv.FormatInt(int64(eff.OffsetsRetention/time.Minute), 10)
	maxSize := configs.Static{Name: "group.consumer.max.size", Value: strconv.Itoa(eff.ConsumerMaxSize), Type: topicconfig.TypeInt, Source: topicconfig.SrcDefault}
	if gc.ConsumerMaxSize > 0 {
		maxSize.Source = topicconfig.SrcStaticBroker
	}
	return []configs.Static{
		maxSize,
		ms("group.consumer.heartbeat.interval.ms", gc.ConsumerHeartbeatInterval, eff.ConsumerHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.max.heartbeat.interval.ms", gc.ConsumerMaxHeartbeatInterval, eff.ConsumerMaxHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.max.session.timeout.ms", gc.ConsumerMaxSessionTimeout, eff.ConsumerMaxSessionTimeout, topicconfig.TypeInt),
		ms("group.consumer.min.heartbeat.interval.ms", gc.ConsumerMinHeartbeatInterval, eff.ConsumerMinHeartbeatInterval, topicconfig.TypeInt),
		ms("group.consumer.min.session.timeout.ms", gc.ConsumerMinSessionTimeout, eff.ConsumerMinSessionTimeout, topicconfig.TypeInt),
		ms("group.consumer.session.timeout.ms", gc.ConsumerSessionTimeout, eff.ConsumerSessionTimeout, topicconfig.TypeInt),
		ms("group.max.session.timeout.ms", gc.MaxSessionTimeout, eff.MaxSessionTimeout, topicconfig.TypeInt),
		ms("group.min.session.timeout.ms", gc.MinSessionTimeout, eff.MinSessionTimeout, topicconfig.TypeInt),
		ms("offsets.retention.check.interval.ms", gc.OffsetsRetentionCheckInterval, eff.OffsetsRetentionCheckInterval, topicconfig.TypeLong),
		minutes,
	}
}
