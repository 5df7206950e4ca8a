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
// to every partition log. Broker configs are static here: INVALID_REQUEST.
// A resource named twice: INVALID_REQUEST. ValidateOnly checks only.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
		code, err := b.alterTopicConfigs(rr.ResourceType, rr.ResourceName, seen[fmt.Sprint(rr.ResourceType, rr.ResourceName)] > 1, r.ValidateOnly,
			func(map[string]string) (map[string]string, error) {
				names := make([]string, len(rr.Configs))
				values := make([]*string, len(rr.Configs))
				for i, c := range rr.Configs {
					names[i], values[i] = c.Name, c.Value
				}
				return configsFromPairs(names, values)
			})
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
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		return kerr.InvalidRequest.Code, fmt.Errorf("broker configs are static on this broker")
	default:
		return kerr.InvalidRequest.Code, fmt.Errorf("unsupported resource type %d", typ)
	}
	if err := validateTopicName(name); err != nil {
		return kerr.InvalidTopicException.Code, err
	}
	t := b.lookupTopic(name, [16]byte{})
	if t == nil {
		return kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", name)
	}
	cur := t.cfg.Load()
	next, err := change(cur.set)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	cfg, err := parseTopicConfigs(next)
	if err != nil {
		return kerr.InvalidConfig.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	if err := b.writeTopicMeta(t, int32(len(t.partitions())), cfg.set); err != nil {
		b.log.Error("persisting topic configs", "topic", name, "err", err)
		return errCode(err), err
	}
	t.cfg.Store(cfg)
	for _, p := range t.partitions() {
		p.log.SetConfig(cfg.log)
	}
	b.log.Info("altered topic configs", "topic", name, "configs", cfg.set)
	return 0, nil
}
