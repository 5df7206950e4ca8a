package configs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/topicname"
)

// Alter applies one resource of AlterConfigs, whose configs replace the
// resource's whole set (configs not named return to their defaults). dup
// says the request names the resource more than once. GROUP resources
// are altered incrementally only, as in Kafka.
func (m *Manager) Alter(typ kmsg.ConfigResourceType, name string, dup, validateOnly bool, cs []kmsg.AlterConfigsRequestResourceConfig) (int16, error) {
	switch typ {
	case kmsg.ConfigResourceTypeBroker:
		return m.alterBroker(name, dup, validateOnly, func(map[string]string) (map[string]string, error) {
			return pairs(cs)
		})
	case kmsg.ConfigResourceTypeClientMetrics:
		return m.alterClientMetrics(name, dup, validateOnly, func(map[string]string) (map[string]string, error) {
			set, err := pairs(cs)
			if err != nil {
				return nil, &codedError{kerr.InvalidRequest.Code, err}
			}
			return set, nil
		})
	}
	return m.alterTopic(typ, name, dup, validateOnly, func(map[string]string) (map[string]string, error) {
		names := make([]string, len(cs))
		values := make([]*string, len(cs))
		for i, c := range cs {
			names[i], values[i] = c.Name, c.Value
		}
		return topicconfig.FromPairs(names, values)
	})
}

// IncrementalAlter applies one resource of IncrementalAlterConfigs: SET,
// DELETE, and APPEND and SUBTRACT where the resource has lists.
func (m *Manager) IncrementalAlter(typ kmsg.ConfigResourceType, name string, dup, validateOnly bool, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, error) {
	var code int16
	var err error
	switch typ {
	case kmsg.ConfigResourceTypeBroker:
		code, err = m.alterBroker(name, dup, validateOnly, func(cur map[string]string) (map[string]string, error) {
			return applyBrokerOps(cur, ops)
		})
	case kmsg.ConfigResourceTypeClientMetrics:
		code, err = m.alterClientMetrics(name, dup, validateOnly, func(cur map[string]string) (map[string]string, error) {
			return applyClientMetricsOps(cur, ops)
		})
	case kmsg.ConfigResourceTypeGroupConfig:
		code, err = m.alterGroup(name, dup, validateOnly, ops)
	default:
		code, err = m.alterTopic(typ, name, dup, validateOnly, func(cur map[string]string) (map[string]string, error) {
			return applyTopicOps(maps.Clone(cur), ops)
		})
	}
	if code == kerr.InvalidConfig.Code && strings.HasPrefix(err.Error(), "invalid op") {
		code = kerr.InvalidRequest.Code
	}
	return code, err
}

// alterTopic computes a topic's new config set with change (given the
// current set), validates, persists and applies it.
func (m *Manager) alterTopic(typ kmsg.ConfigResourceType, name string, dup, validateOnly bool, change func(cur map[string]string) (map[string]string, error)) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, fmt.Errorf("resource %s named more than once", name)
	}
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
	case kmsg.ConfigResourceTypeBrokerLogger:
		return kerr.InvalidRequest.Code, fmt.Errorf("broker logger levels cannot be altered on this broker")
	default:
		return kerr.InvalidRequest.Code, fmt.Errorf("unsupported resource type %d", typ)
	}
	if err := topicname.Validate(name); err != nil {
		return kerr.InvalidTopicException.Code, err
	}
	cur, ok := m.b.TopicConfig(name)
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, fmt.Errorf("The topic '%s' does not exist.", name)
	}
	next, err := change(cur.Set)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	// Parsed over the dynamic cluster defaults, as Rebase and a new
	// topic are: the topic keeps inheriting what it does not override.
	cfg, err := m.ParseTopic(next)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	if err := m.b.WriteTopicConfig(name, cfg.Set); err != nil {
		m.cfg.Logger.Error("persisting topic configs", "topic", name, "err", err)
		return m.cfg.ErrCode(err), err
	}
	m.b.ApplyTopicConfig(name, cfg)
	m.cfg.Logger.Info("altered topic configs", "topic", name, "configs", cfg.Set)
	return 0, nil
}

// pairs turns AlterConfigs' pairs for a BROKER or CLIENT_METRICS resource
// into a set, refusing what Kafka's ConfigAdminManager refuses before
// validation.
func pairs(cs []kmsg.AlterConfigsRequestResourceConfig) (map[string]string, error) {
	m := make(map[string]string, len(cs))
	var nulls []string
	for _, c := range cs {
		if _, dup := m[c.Name]; dup {
			return nil, fmt.Errorf("Error due to duplicate config keys")
		}
		if c.Value == nil {
			nulls = append(nulls, c.Name)
			m[c.Name] = ""
			continue
		}
		m[c.Name] = *c.Value
	}
	if len(nulls) > 0 {
		return nil, fmt.Errorf("Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	return m, nil
}

// applyTopicOps applies IncrementalAlterConfigs ops to a topic's set.
func applyTopicOps(set map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	if set == nil {
		set = map[string]string{}
	}
	seen := map[string]bool{}
	for _, c := range ops {
		if seen[c.Name] {
			return nil, fmt.Errorf("config %s named more than once", c.Name)
		}
		seen[c.Name] = true
		d := topicconfig.Index[c.Name]
		if d == nil {
			return nil, fmt.Errorf("Unknown topic config name: %s", c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if err := topicconfig.Validate(c.Name, c.Value); err != nil {
				return nil, err
			}
			set[c.Name] = *c.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(set, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if d.Type != topicconfig.TypeList {
				return nil, fmt.Errorf("config %s is not a list; APPEND and SUBTRACT apply to lists only", c.Name)
			}
			if c.Value == nil {
				return nil, fmt.Errorf("null value for %s", c.Name)
			}
			cur, ok := set[c.Name]
			if !ok {
				cur = d.Default
			}
			nv := strings.Join(appendOrSubtract(cur, *c.Value, c.Op), ",")
			if err := topicconfig.Validate(c.Name, &nv); err != nil {
				return nil, err
			}
			set[c.Name] = nv
		default:
			return nil, fmt.Errorf("invalid op %d for config %s", c.Op, c.Name)
		}
	}
	return set, nil
}

// appendOrSubtract applies an APPEND (items not yet listed, in order) or a
// SUBTRACT (every occurrence) of the list value to the list cur.
func appendOrSubtract(cur, value string, op kmsg.IncrementalAlterConfigOp) []string {
	items := splitList(cur)
	for _, v := range splitList(value) {
		if op == kmsg.IncrementalAlterConfigOpAppend {
			if !slices.Contains(items, v) {
				items = append(items, v)
			}
		} else {
			items = slices.DeleteFunc(items, func(s string) bool { return s == v })
		}
	}
	return items
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// applyBrokerOps applies IncrementalAlterConfigs ops to a level of
// dynamic broker configs, with Kafka's answers for malformed ops.
func applyBrokerOps(set map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	if set == nil {
		set = map[string]string{}
	}
	seen := map[string]bool{}
	var nulls []string
	for _, c := range ops {
		if seen[c.Name] {
			return nil, errors.New("Error due to duplicate config keys")
		}
		seen[c.Name] = true
		if c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return nil, fmt.Errorf("Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	for _, c := range ops {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			set[c.Name] = *c.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(set, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if _, _, _, typ := brokerconfig.Key(c.Name); typ != topicconfig.TypeList {
				verb := "append"
				if c.Op == kmsg.IncrementalAlterConfigOpSubtract {
					verb = "subtract"
				}
				return nil, &codedError{kerr.InvalidConfig.Code, fmt.Errorf("Config value %s is not allowed for config key: %s", verb, c.Name)}
			}
			// As Kafka's controller, a key this level does not set starts
			// from its default (log.cleanup.policy APPEND compact on a
			// fresh node: delete,compact; the SUBTRACT then leaves delete).
			cur, ok := set[c.Name]
			if d := brokerconfig.TopicSynonym[c.Name]; !ok && d != nil {
				cur = d.Default
			}
			set[c.Name] = strings.Join(appendOrSubtract(cur, *c.Value, c.Op), ",")
		default:
			return nil, fmt.Errorf("Unknown operations type %d", c.Op)
		}
	}
	return set, nil
}
