package broker

// Group configs (the GROUP config resource, KIP-848/KIP-932) that share
// groups read, through DescribeConfigs and IncrementalAlterConfigs; the
// share coordinator stores them durably with its state. Only the share.*
// names are served; the consumer.* group configs are not.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
)

func (b *Broker) describeGroupConfigs(group string, names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	set := b.share.GroupConfigs(group)
	defs := share.ConfigNames()
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
		if _, ok := share.ConfigNames()[c.Name]; !ok {
			return kerr.InvalidConfig.Code, fmt.Errorf("unknown group config name: %s", c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return kerr.InvalidConfig.Code, fmt.Errorf("null value for %s", c.Name)
			}
			if err := b.share.ValidateConfig(c.Name, *c.Value); err != nil {
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
