package broker

// IncrementalAlterConfigs v0–v1.
//
// With the authorizer on, a resource needs ALTER_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Per config: SET (0), DELETE (1, back to the default), APPEND (2) and
// SUBTRACT (3) on list configs (on other types: INVALID_CONFIG); other ops:
// INVALID_REQUEST. Then as AlterConfigs: validated, persisted, applied.
// Broker resources: as AlterConfigs (dynconfig.go), the ops applied to
// the level's current set; APPEND and SUBTRACT on a key that is not a
// list: INVALID_CONFIG.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleIncrementalAlterConfigs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	resp.Version = req.Version
	seen := map[string]int{}
	for _, rr := range r.Resources {
		seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)]++
	}
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rr := range r.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var code int16
		var err error
		if c := az.configResource(opAlterConfigs, rr.ResourceType, rr.ResourceName); c != 0 {
			code, err = c, errAuthorizationFailed
		} else if rr.ResourceType == kmsg.ConfigResourceTypeBroker { // dynconfig.go
			code, err = b.alterBrokerConfigs(rr.ResourceName, seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1, r.ValidateOnly,
				func(cur map[string]string) (map[string]string, error) {
					return applyBrokerIncremental(cur, rr.Configs)
				})
		} else if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics { // client_metrics.go
			code, err = b.alterClientMetrics(rr.ResourceName, seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1, r.ValidateOnly,
				func(cur map[string]string) (map[string]string, error) {
					return applyClientMetricsIncremental(cur, rr.Configs)
				})
		} else if rr.ResourceType == kmsg.ConfigResourceTypeGroupConfig { // share_configs.go
			code, err = b.alterGroupConfigs(rr.ResourceName, seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1, r.ValidateOnly, rr.Configs)
		} else {
			code, err = b.alterTopicConfigs(rr.ResourceType, rr.ResourceName, seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1, r.ValidateOnly,
				func(cur map[string]string) (map[string]string, error) {
					return applyIncremental(maps.Clone(cur), rr.Configs)
				})
		}
		if code != 0 {
			if code == kerr.InvalidConfig.Code && strings.HasPrefix(err.Error(), "invalid op") {
				code = kerr.InvalidRequest.Code
			}
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(err)
			b.logBad(req, "incremental alter configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(code), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}

func applyIncremental(set map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
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
			items := splitList(cur)
			for _, v := range splitList(*c.Value) {
				if c.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(items, v) {
						items = append(items, v)
					}
				} else {
					items = slices.DeleteFunc(items, func(s string) bool { return s == v })
				}
			}
			nv := strings.Join(items, ",")
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

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// applyBrokerIncremental applies IncrementalAlterConfigs ops to a level of
// dynamic broker configs, with Kafka's answers for malformed ops.
func applyBrokerIncremental(set map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
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
			items := splitList(cur)
			for _, v := range splitList(*c.Value) {
				if c.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(items, v) {
						items = append(items, v)
					}
				} else {
					items = slices.DeleteFunc(items, func(s string) bool { return s == v })
				}
			}
			set[c.Name] = strings.Join(items, ",")
		default:
			return nil, fmt.Errorf("Unknown operations type %d", c.Op)
		}
	}
	return set, nil
}
