package configs

// Group configs (the GROUP config resource, KIP-848/KIP-932): the share.*
// names share groups read and the consumer.* names KIP-848 consumer groups
// read (consumer.session.timeout.ms and consumer.heartbeat.interval.ms,
// within the broker's group.consumer.min/max.* bounds, the session longer
// than the interval, as Kafka checks them). The share coordinator stores
// them all durably with its state; the group coordinator reads the
// consumer.* ones at each heartbeat.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroupConfigs are the KIP-848 consumer group configs of the GROUP
// resource, each with the broker setting that is its default.
var consumerGroupConfigs = map[string]string{
	"consumer.session.timeout.ms":    "group.consumer.session.timeout.ms",
	"consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
}

func (m *Manager) describeGroup(group string, names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	want := Wanted(names)
	set := m.b.GroupConfigs(group)
	defs := m.groupDefaults()
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

// alterGroup applies IncrementalAlterConfigs ops to a group's configs:
// SET and DELETE; APPEND/SUBTRACT are INVALID_CONFIG (no group config is a
// list).
func (m *Manager) alterGroup(group string, dup, validateOnly bool, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, fmt.Errorf("resource %s named more than once", group)
	}
	if group == "" {
		return kerr.InvalidGroupID.Code, fmt.Errorf("empty group id")
	}
	set := m.b.GroupConfigs(group)
	if set == nil {
		set = map[string]string{}
	}
	defs := m.groupDefaults()
	seen := map[string]bool{}
	for _, c := range ops {
		if seen[c.Name] {
			return kerr.InvalidRequest.Code, fmt.Errorf("config %s named more than once", c.Name)
		}
		seen[c.Name] = true
		if _, ok := defs[c.Name]; !ok {
			return kerr.InvalidConfig.Code, fmt.Errorf("Unknown group config name: %s", c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return kerr.InvalidConfig.Code, fmt.Errorf("null value for %s", c.Name)
			}
			validate := m.b.ValidateShareConfig
			if _, ok := consumerGroupConfigs[c.Name]; ok {
				validate = m.validateConsumerGroupConfig
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
	if err := m.checkConsumerGroupConfigs(set); err != nil {
		return kerr.InvalidConfig.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	if err := m.b.SetGroupConfigs(group, set); err != nil {
		m.cfg.Logger.Error("persisting group configs", "group", group, "err", err)
		return kerr.KafkaStorageError.Code, err
	}
	m.cfg.Logger.Info("altered group configs", "group", group, "configs", set)
	return 0, nil
}

// groupDefaults is every GROUP resource config with its default.
func (m *Manager) groupDefaults() map[string]string {
	defs := maps.Clone(m.cfg.ShareDefaults)
	if defs == nil {
		defs = map[string]string{}
	}
	defs["consumer.session.timeout.ms"] = strconv.FormatInt(m.cfg.Groups.SessionTimeout.Milliseconds(), 10)
	defs["consumer.heartbeat.interval.ms"] = strconv.FormatInt(m.cfg.Groups.HeartbeatInterval.Milliseconds(), 10)
	return defs
}

// validateConsumerGroupConfig checks one consumer.* value: an int within
// the broker's group.consumer.min/max bounds.
func (m *Manager) validateConsumerGroupConfig(name, value string) error {
	gb := m.cfg.Groups
	lo, hi := gb.MinSessionTimeout, gb.MaxSessionTimeout
	if name == "consumer.heartbeat.interval.ms" {
		lo, hi = gb.MinHeartbeatInterval, gb.MaxHeartbeatInterval
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
func (m *Manager) checkConsumerGroupConfigs(set map[string]string) error {
	defs := m.groupDefaults()
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
