package broker

// AlterConfigs v0–v2.
//
// With the authorizer on, a resource needs ALTER_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Replaces a topic's whole set of configs (the non-incremental semantics:
// configs not named return to their defaults). The new set is validated
// like CreateTopics (INVALID_CONFIG), persisted in topic.json, then applied
// to every partition log. A resource named twice: INVALID_REQUEST.
// ValidateOnly checks only. A failed write (a full disk):
// KAFKA_STORAGE_ERROR, and nothing changes.
//
// Broker (type 4, name "" for the cluster default or this node's ID):
// dynamic broker configs (dynconfig.go), the whole set of that level
// replaced. A key Kafka cannot change at run time: INVALID_REQUEST
// "Cannot update these configs dynamically: Set(...)"; a per-broker key at
// the cluster default, a bare SSL store setting, a value of the wrong type,
// a null value or a key named twice: INVALID_REQUEST with Kafka's message.
// Broker loggers: INVALID_REQUEST.

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleAlterConfigs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	resp.Version = req.Version
	seen := map[string]int{}
	for _, rr := range r.Resources {
		seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)]++
	}
	az := b.authorizer(req)
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	for _, rr := range r.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if code := az.configResource(opAlterConfigs, rr.ResourceType, rr.ResourceName); code != 0 {
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(errAuthorizationFailed)
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		dup := seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1
		var code int16
		var err error
		if rr.ResourceType == kmsg.ConfigResourceTypeBroker { // dynconfig.go
			code, err = b.alterBrokerConfigs(rr.ResourceName, dup, r.ValidateOnly, func(map[string]string) (map[string]string, error) {
				return brokerConfigPairs(rr.Configs)
			})
		} else if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics { // client_metrics.go
			code, err = b.alterClientMetrics(rr.ResourceName, dup, r.ValidateOnly, func(map[string]string) (map[string]string, error) {
				m, err := brokerConfigPairs(rr.Configs)
				if err != nil {
					return nil, &codedError{kerr.InvalidRequest.Code, err}
				}
				return m, nil
			})
		} else {
			code, err = b.alterTopicConfigs(rr.ResourceType, rr.ResourceName, dup, r.ValidateOnly,
				func(map[string]string) (map[string]string, error) {
					names := make([]string, len(rr.Configs))
					values := make([]*string, len(rr.Configs))
					for i, c := range rr.Configs {
						names[i], values[i] = c.Name, c.Value
					}
					return topicconfig.FromPairs(names, values)
				})
		}
		if code != 0 {
			sr.ErrorCode, sr.ErrorMessage = code, errMessage(err)
			b.logBad(req, "alter configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(code), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}

// alterTopicConfigs computes a topic's new config set with change (given
// the current set), validates, persists and applies it. The caller holds
// adminMu.
func (b *Broker) alterTopicConfigs(typ kmsg.ConfigResourceType, name string, dup, validateOnly bool, change func(cur map[string]string) (map[string]string, error)) (int16, error) {
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
	if err := validateTopicName(name); err != nil {
		return kerr.InvalidTopicException.Code, err
	}
	t := b.lookupTopic(name, [16]byte{})
	if t == nil {
		return kerr.UnknownTopicOrPartition.Code, fmt.Errorf("The topic '%s' does not exist.", name)
	}
	cur := t.cfg.Load()
	next, err := change(cur.Set)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	cfg, err := topicconfig.Parse(next)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	if err := b.writeTopicMeta(t, t.partitions(), cfg.Set); err != nil {
		b.log.Error("persisting topic configs", "topic", name, "err", err)
		return errCode(err), err
	}
	t.cfg.Store(cfg)
	for _, p := range t.partitions() {
		p.log.SetConfig(cfg.Log)
	}
	b.log.Info("altered topic configs", "topic", name, "configs", cfg.Set)
	return 0, nil
}

// brokerConfigPairs turns AlterConfigs' pairs for a BROKER resource into a
// set, refusing what Kafka's ConfigAdminManager refuses before validation.
func brokerConfigPairs(cs []kmsg.AlterConfigsRequestResourceConfig) (map[string]string, error) {
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
