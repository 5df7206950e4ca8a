package broker

// Group configs (the GROUP config resource, KIP-848/KIP-932) through
// DescribeConfigs and IncrementalAlterConfigs: the share.* names share
// groups read and the consumer.* names KIP-848 consumer groups read
// (consumer.session.timeout.ms and consumer.heartbeat.interval.ms, within
// the broker's group.consumer.min/max.* bounds, the session longer than
// the interval, as Kafka checks them). The share coordinator stores them
// all durably with its state; the group coordinator reads the consumer.*
// ones at each heartbeat.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
)

func (b *Broker) describeGroupConfigs(group string, names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	set := b.share.GroupConfigs(group)
	defs := b.groupConfigDefaults()
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if !want(name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = name
		v, ok := set[name]
		if !ok {
			v = defs[name]
			c.Source = kmsg.ConfigSourceDefaultConfig
			c.IsDefault = true
		} else {
			c.Source = kmsg.ConfigSourceGroupConfig
		}
		c.Value = kmsg.StringPtr(v)
		c.ConfigType = kmsg.ConfigTypeString
		if name != "share.auto.offset.reset" && name != "share.isolation.level" {
			c.ConfigType = kmsg.ConfigTypeInt
		}
		out = append(out, c)
	}
	return out
}

// alterGroupConfigs applies IncrementalAlterConfigs ops to a group's
// configs: SET and DELETE; APPEND/SUBTRACT are INVALID_CONFIG (no group
// config is a list).
func (b *Broker) alterGroupConfigs(group string, dup, validateOnly bool, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, fmt.Errorf("resource %s named more than once", group)
	}
	if group == "" {
		return kerr.InvalidGroupID.Code, fmt.Errorf("empty group id")
	}
	set := b.share.GroupConfigs(group)
	if set == nil {
		set = map[string]string{}
	}
	seen := map[string]bool{}
	for _, c := range ops {
		if seen[c.Name] {
			return kerr.InvalidRequest.Code, fmt.Errorf("config %s named more than once", c.Name)
		}
		seen[c.Name] = true
		if _, ok := b.groupConfigDefaults()[c.Name]; !ok {
			return kerr.InvalidConfig.Code, fmt.Errorf("Unknown group config name: %s", c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return kerr.InvalidConfig.Code, fmt.Errorf("null value for %s", c.Name)
			}
			validate := b.share.ValidateConfig
			if _, ok := consumerGroupConfigs[c.Name]; ok {
				validate = b.validateConsumerGroupConfig
			}
			if err := validate(c.Name, *c.Value); err != nil {
				return kerr.InvalidConfig.Code, err
			}
			set[c.Name] = *c.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(set, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			return kerr.InvalidConfig.Code, fmt.Errorf("config %s is not a list; APPEND and SUBTRACT apply to lists only", c.Name)
		default:
			return kerr.InvalidRequest.Code, fmt.Errorf("invalid op %d for config %s", c.Op, c.Name)
		}
	}
	if err := b.checkConsumerGroupConfigs(set); err != nil {
		return kerr.InvalidConfig.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	if err := b.share.SetGroupConfigs(group, set); err != nil {
		b.log.Error("persisting group configs", "group", group, "err", err)
		return kerr.KafkaStorageError.Code, err
	}
	b.log.Info("altered group configs", "group", group, "configs", set)
	return 0, nil
}

// consumerGroupConfigs are the KIP-848 consumer group configs of the GROUP
// resource, each with the broker setting that is its default.
var consumerGroupConfigs = map[string]string{
	"consumer.session.timeout.ms":    "group.consumer.session.timeout.ms",
	"consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
}

// groupConfigDefaults is every GROUP resource config with its default.
func (b *Broker) groupConfigDefaults() map[string]string {
	defs := share.ConfigNames()
	gc := b.cfg.Groups.withDefaults()
	defs["consumer.session.timeout.ms"] = strconv.FormatInt(gc.ConsumerSessionTimeout.Milliseconds(), 10)
	defs["consumer.heartbeat.interval.ms"] = strconv.FormatInt(gc.ConsumerHeartbeatInterval.Milliseconds(), 10)
	return defs
}

// validateConsumerGroupConfig checks one consumer.* value: an int within
// the broker's group.consumer.min/max bounds.
func (b *Broker) validateConsumerGroupConfig(name, value string) error {
	gc := b.cfg.Groups.withDefaults()
	lo, hi := gc.ConsumerMinSessionTimeout, gc.ConsumerMaxSessionTimeout
	if name == "consumer.heartbeat.interval.ms" {
		lo, hi = gc.ConsumerMinHeartbeatInterval, gc.ConsumerMaxHeartbeatInterval
	}
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil || n < 1 {
		return fmt.Errorf("Invalid value %s for configuration %s: Value must be at least 1", value, name)
	}
	bound := strings.Replace(consumerGroupConfigs[name], "group.consumer.", "group.consumer.%s.", 1)
	if d := time.Duration(n) * time.Millisecond; d < lo {
		return fmt.Errorf("%s must be greater than or equal to %s (%d)", name, fmt.Sprintf(bound, "min"), lo.Milliseconds())
	} else if d > hi {
		return fmt.Errorf("%s must be less than or equal to %s (%d)", name, fmt.Sprintf(bound, "max"), hi.Milliseconds())
	}
	return nil
}

// checkConsumerGroupConfigs checks a group's whole set as Kafka does: the
// session timeout in effect must exceed the heartbeat interval in effect,
// or members would expire between heartbeats.
func (b *Broker) checkConsumerGroupConfigs(set map[string]string) error {
	defs := b.groupConfigDefaults()
	eff := func(name string) int64 {
		v, ok := set[name]
		if !ok {
			v = defs[name]
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	if eff("consumer.session.timeout.ms") <= eff("consumer.heartbeat.interval.ms") {
		return fmt.Errorf("consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")
	}
	return nil
}
