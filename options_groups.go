package minikafka

import (
	"fmt"
	"time"

	"github.com/minikafka/minikafka/broker"
)

// groupsConfig is the group coordinator's settings; zero fields are
// Kafka's defaults (broker.DefaultGroupConfig).
type groupsConfig struct{ broker.GroupConfig }

// WithGroupInitialRebalanceDelay sets Kafka's
// group.initial.rebalance.delay.ms (default 3 s; tests want 0).
func WithGroupInitialRebalanceDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.rebalanceDelay = d })
}

// WithOffsetsRetention sets Kafka's offsets.retention.minutes: the
// committed offsets of a group without members are dropped this long after
// it became empty. Default 7 days.
func WithOffsetsRetention(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.OffsetsRetention = d })
}

// WithOffsetsRetentionCheckInterval sets Kafka's
// offsets.retention.check.interval.ms, how often expired offsets are
// looked for. Default 10 minutes.
func WithOffsetsRetentionCheckInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.OffsetsRetentionCheckInterval = d })
}

// WithGroupMinSessionTimeout sets Kafka's group.min.session.timeout.ms: a
// classic group member asking for a shorter session timeout is refused
// with INVALID_SESSION_TIMEOUT. Default 6 s.
func WithGroupMinSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.MinSessionTimeout = d })
}

// WithGroupMaxSessionTimeout sets Kafka's group.max.session.timeout.ms,
// the longest session timeout a classic group member may ask for. Default
// 30 minutes.
func WithGroupMaxSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.MaxSessionTimeout = d })
}

// WithGroupConsumerSessionTimeout sets Kafka's
// group.consumer.session.timeout.ms: a KIP-848 consumer group member that
// has not heartbeated for that long is removed. Default 45 s.
func WithGroupConsumerSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerSessionTimeout = d })
}

// WithGroupConsumerHeartbeatInterval sets Kafka's
// group.consumer.heartbeat.interval.ms, the interval KIP-848 consumer
// group members are told to heartbeat at; a member learns of a new
// assignment on its next heartbeat. Default 5 s.
func WithGroupConsumerHeartbeatInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerHeartbeatInterval = d })
}

// WithGroupConsumerSessionTimeoutBounds sets Kafka's
// group.consumer.min.session.timeout.ms and
// group.consumer.max.session.timeout.ms: the range a consumer group's own
// consumer.session.timeout.ms (a GROUP config, set with
// IncrementalAlterConfigs) may take. Defaults 45 s and 60 s, stretched to
// take in WithGroupConsumerSessionTimeout.
func WithGroupConsumerSessionTimeoutBounds(lo, hi time.Duration) Option {
	return optionFunc(func(c *config) {
		c.groups.ConsumerMinSessionTimeout, c.groups.ConsumerMaxSessionTimeout = lo, hi
	})
}

// WithGroupConsumerHeartbeatIntervalBounds sets Kafka's
// group.consumer.min.heartbeat.interval.ms and
// group.consumer.max.heartbeat.interval.ms: the range a consumer group's
// own consumer.heartbeat.interval.ms may take. Defaults 5 s and 15 s,
// stretched to take in WithGroupConsumerHeartbeatInterval.
func WithGroupConsumerHeartbeatIntervalBounds(lo, hi time.Duration) Option {
	return optionFunc(func(c *config) {
		c.groups.ConsumerMinHeartbeatInterval, c.groups.ConsumerMaxHeartbeatInterval = lo, hi
	})
}

// check returns the problems with the group settings (zero means the
// default; Kafka's own constraints between the settings apply to the
// values in effect).
func (g groupsConfig) check() []error {
	var errs []error
	for _, s := range []struct {
		name string
		v    time.Duration
	}{
		{"offsets retention", g.OffsetsRetention},
		{"offsets retention check interval", g.OffsetsRetentionCheckInterval},
		{"group min session timeout", g.MinSessionTimeout},
		{"group max session timeout", g.MaxSessionTimeout},
		{"group consumer session timeout", g.ConsumerSessionTimeout},
		{"group consumer heartbeat interval", g.ConsumerHeartbeatInterval},
		{"group consumer min session timeout", g.ConsumerMinSessionTimeout},
		{"group consumer max session timeout", g.ConsumerMaxSessionTimeout},
		{"group consumer min heartbeat interval", g.ConsumerMinHeartbeatInterval},
		{"group consumer max heartbeat interval", g.ConsumerMaxHeartbeatInterval},
	} {
		if s.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v: must be >= 0", s.name, s.v))
		}
	}
	eff := g.GroupConfig
	def := broker.DefaultGroupConfig()
	orDefault := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	minS, maxS := orDefault(eff.MinSessionTimeout, def.MinSessionTimeout), orDefault(eff.MaxSessionTimeout, def.MaxSessionTimeout)
	if minS > maxS {
		errs = append(errs, fmt.Errorf("group min session timeout %v is above the max %v", minS, maxS))
	}
	hb, sess := orDefault(eff.ConsumerHeartbeatInterval, def.ConsumerHeartbeatInterval), orDefault(eff.ConsumerSessionTimeout, def.ConsumerSessionTimeout)
	if hb >= sess {
		// Kafka refuses this too: members would expire between heartbeats.
		errs = append(errs, fmt.Errorf("group consumer heartbeat interval %v must be below the consumer session timeout %v", hb, sess))
	}
	// Bounds set must hold the broker's own value, as Kafka requires of
	// its settings (an unset bound stretches to take it in).
	for _, bd := range []struct {
		name      string
		v, lo, hi time.Duration
	}{
		{"group consumer session timeout", sess, eff.ConsumerMinSessionTimeout, eff.ConsumerMaxSessionTimeout},
		{"group consumer heartbeat interval", hb, eff.ConsumerMinHeartbeatInterval, eff.ConsumerMaxHeartbeatInterval},
	} {
		if (bd.lo > 0 && bd.v < bd.lo) || (bd.hi > 0 && bd.v > bd.hi) {
			errs = append(errs, fmt.Errorf("%s %v is outside its bounds [%v, %v]", bd.name, bd.v, bd.lo, bd.hi))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"group consumer session timeout", eff.ConsumerSessionTimeout}, {"group consumer heartbeat interval", eff.ConsumerHeartbeatInterval},
		{"group min session timeout", eff.MinSessionTimeout}, {"group max session timeout", eff.MaxSessionTimeout}} {
		if (d.v > 0 && d.v < time.Millisecond) || d.v > time.Duration(1<<31-1)*time.Millisecond {
			// Kafka carries these as int32 milliseconds on the wire.
			errs = append(errs, fmt.Errorf("%s %v: must be between 1ms and %v", d.name, d.v, time.Duration(1<<31-1)*time.Millisecond))
		}
	}
	if g.ConsumerMaxSize < 0 || int64(g.ConsumerMaxSize) > 1<<31-1 {
		errs = append(errs, fmt.Errorf("group consumer max size %d: must be between 1 and %d", g.ConsumerMaxSize, 1<<31-1))
	}
	return errs
}

// WithGroupConsumerMaxSize sets Kafka's group.consumer.max.size: a KIP-848
// consumer group this many members strong refuses another member with
// GROUP_MAX_SIZE_REACHED (a member it has, or a static member's new
// incarnation, still gets in). Default Kafka's, 2^31-1.
func WithGroupConsumerMaxSize(n int) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerMaxSize = n })
}

// WithGroupShareMinRecordLockDuration sets Kafka's
// group.share.min.record.lock.duration.ms: the shortest acquisition lock
// (share.record.lock.duration.ms) a share group may set. Default 15 s;
// tests lower it to see locks expire quickly.
func WithGroupShareMinRecordLockDuration(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ShareMinRecordLockDuration = d })
}
