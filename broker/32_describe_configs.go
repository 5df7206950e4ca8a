package broker

// DescribeConfigs v0–v4.
//
// With the authorizer on, a resource needs DESCRIBE_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Topics (resource type 2): every topic config of topicconfig.Defs (or the
// named ones; unknown names are left out, as Kafka does) with its effective
// value, source (DYNAMIC_TOPIC_CONFIG when set on the topic, else
// DEFAULT_CONFIG; IsDefault in v0) and, when asked (v1+), synonyms: the
// topic value, then the broker setting it defaults to. Unknown topic:
// UNKNOWN_TOPIC_OR_PARTITION; illegal name: INVALID_TOPIC_EXCEPTION.
// Broker (type 4) named by this node's ID: the settings the broker runs
// with and every dynamic broker config set, each with the value
// that wins (per-broker DYNAMIC_BROKER_CONFIG, then the cluster's
// DYNAMIC_DEFAULT_BROKER_CONFIG, then the static or default value), that
// source, ReadOnly unless Kafka can change it at run time, and the
// synonyms in precedence order; sensitive values are null. Named "": the
// cluster-wide dynamic defaults only, as Kafka describes them. Other IDs:
// INVALID_REQUEST. Broker loggers (type 8): none. Groups (type 32) and
// client-metrics subscriptions (type 16): their configs, set or default.
// A topic config without its own value reports the dynamic broker config
// it falls back to, with its source, and the chain as synonyms.
// Other resource types: INVALID_REQUEST. v3+ carries types and, when asked,
// documentation. The answers are broker/internal/configs'; a forwarded
// topic adds its forwarding state (uplink_adapter.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeConfigs(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	resp.Version = req.Version
	az := b.authorizer(req)
	for _, rr := range r.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if code := az.configResource(opDescribeConfigs, rr.ResourceType, rr.ResourceName); code != 0 {
			sr.ErrorCode = code
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		var err error
		sr.Configs, sr.ErrorCode, err = b.configs.Describe(rr.ResourceType, rr.ResourceName, rr.ConfigNames, r.IncludeSynonyms, r.IncludeDocumentation)
		if rr.ResourceType == kmsg.ConfigResourceTypeTopic && sr.ErrorCode == 0 {
			if t := b.lookupTopic(rr.ResourceName, [16]byte{}); t != nil {
				sr.Configs = append(sr.Configs, b.describeForwarding(t, rr.ConfigNames, r)...)
			}
		}
		if sr.ErrorCode != 0 {
			sr.ErrorMessage = errMessage(err)
			b.logBad(req, "describe configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(sr.ErrorCode), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}
