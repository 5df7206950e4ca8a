package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
)

// groupSettings are the flags of the group coordinator, named after
// Kafka's settings (without the unit: the flags take Go durations).
type groupSettings struct {
	offsetsRetention, retentionCheck time.Duration
	minSession, maxSession           time.Duration
	consumerSession, consumerHB      time.Duration
	shareMinLock                     time.Duration
	consumerMaxSize                  int
}

func (g *groupSettings) register(fs *flag.FlagSet) {
	d := broker.DefaultGroupConfig()
	fs.DurationVar(&g.offsetsRetention, "offsets-retention", d.OffsetsRetention, "drop the committed offsets of a group that long after its last member left (Kafka offsets.retention.minutes)")
	fs.DurationVar(&g.retentionCheck, "offsets-retention-check-interval", d.OffsetsRetentionCheckInterval, "how often expired offsets are looked for (Kafka offsets.retention.check.interval.ms)")
	fs.DurationVar(&g.minSession, "group-min-session-timeout", d.MinSessionTimeout, "shortest session timeout a group member may ask for (Kafka group.min.session.timeout.ms)")
	fs.DurationVar(&g.maxSession, "group-max-session-timeout", d.MaxSessionTimeout, "longest session timeout a group member may ask for (Kafka group.max.session.timeout.ms)")
	fs.DurationVar(&g.consumerSession, "group-consumer-session-timeout", d.ConsumerSessionTimeout, "KIP-848 consumer group members are removed after this long without a heartbeat (Kafka group.consumer.session.timeout.ms)")
	fs.DurationVar(&g.consumerHB, "group-consumer-heartbeat-interval", d.ConsumerHeartbeatInterval, "interval KIP-848 consumer group members heartbeat at (Kafka group.consumer.heartbeat.interval.ms)")
	fs.IntVar(&g.consumerMaxSize, "group-consumer-max-size", d.ConsumerMaxSize, "most members a KIP-848 consumer group may have; a new one past it is refused with GROUP_MAX_SIZE_REACHED (Kafka group.consumer.max.size)")
	fs.DurationVar(&g.shareMinLock, "group-share-min-record-lock-duration", d.ShareMinRecordLockDuration, "shortest acquisition lock a share group may set as share.record.lock.duration.ms (Kafka group.share.min.record.lock.duration.ms)")
}

// check returns the problems with the settings.
func (g *groupSettings) check() []string {
	var bad []string
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"offsets-retention", g.offsetsRetention}, {"offsets-retention-check-interval", g.retentionCheck},
		{"group-min-session-timeout", g.minSession}, {"group-max-session-timeout", g.maxSession},
		{"group-consumer-session-timeout", g.consumerSession}, {"group-consumer-heartbeat-interval", g.consumerHB},
		{"group-share-min-record-lock-duration", g.shareMinLock},
	} {
		if f.v <= 0 {
			bad = append(bad, fmt.Sprintf("-%s: must be positive", f.name))
		}
	}
	if g.consumerMaxSize < 1 || int64(g.consumerMaxSize) > 1<<31-1 {
		bad = append(bad, "-group-consumer-max-size: must be between 1 and 2147483647")
	}
	if g.minSession > g.maxSession {
		bad = append(bad, "-group-min-session-timeout: must not be above -group-max-session-timeout")
	}
	if g.consumerHB >= g.consumerSession {
		bad = append(bad, "-group-consumer-heartbeat-interval: must be below -group-consumer-session-timeout")
	}
	return bad
}

// options turns the settings into Start options.
func (g *groupSettings) options() []minikafka.Option {
	return []minikafka.Option{
		minikafka.WithOffsetsRetention(g.offsetsRetention),
		minikafka.WithOffsetsRetentionCheckInterval(g.retentionCheck),
		minikafka.WithGroupMinSessionTimeout(g.minSession),
		minikafka.WithGroupMaxSessionTimeout(g.maxSession),
		minikafka.WithGroupConsumerSessionTimeout(g.consumerSession),
		minikafka.WithGroupConsumerHeartbeatInterval(g.consumerHB),
		minikafka.WithGroupShareMinRecordLockDuration(g.shareMinLock),
		minikafka.WithGroupConsumerMaxSize(g.consumerMaxSize),
	}
}
