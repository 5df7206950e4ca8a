package broker

// DescribeConfigs v0–v4.
//
// With the authorizer on, a resource needs DESCRIBE_CONFIGS on its topic or group
// (TOPIC_ or GROUP_AUTHORIZATION_FAILED) or, for the broker and its
// loggers, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
//
// Topics (resource type 2): every topic config of topicConfigDefs (or the
// named ones; unknown names are left out, as Kafka does) with its effective
// value, source (DYNAMIC_TOPIC_CONFIG when set on the topic, else
// DEFAULT_CONFIG; IsDefault in v0) and, when asked (v1+), synonyms: the
// topic value, then the broker setting it defaults to. Unknown topic:
// UNKNOWN_TOPIC_OR_PARTITION; illegal name: INVALID_TOPIC_EXCEPTION.
// Broker (type 4, name "" or this node's ID; other IDs: INVALID_REQUEST):
// the read-only settings of brokerConfigs. Broker loggers (type 8): none.
// Other resource types: INVALID_REQUEST. v3+ carries types and, when asked,
// documentation.

import (
	"context"
	"fmt"
	"strconv"

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
		var err error
		if code := az.configResource(opDescribeConfigs, rr.ResourceType, rr.ResourceName); code != 0 {
			sr.ErrorCode, err = code, errAuthorizationFailed
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			t := b.lookupTopic(rr.ResourceName, [16]byte{})
			switch {
			case validateTopicName(rr.ResourceName) != nil:
				sr.ErrorCode, err = kerr.InvalidTopicException.Code, validateTopicName(rr.ResourceName)
			case t == nil:
				sr.ErrorCode, err = kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", rr.ResourceName)
			default:
				sr.Configs = describeTopicConfigs(t.cfg.Load(), rr.ConfigNames, r)
				sr.Configs = append(sr.Configs, b.describeForwarding(t, rr.ConfigNames, r)...)
			}
		case kmsg.ConfigResourceTypeBroker:
			if rr.ResourceName != "" && rr.ResourceName != strconv.Itoa(int(b.cfg.NodeID)) {
				sr.ErrorCode, err = kerr.InvalidRequest.Code, fmt.Errorf("unexpected broker id, expected %d or empty string, but received %s", b.cfg.NodeID, rr.ResourceName)
				break
			}
			sr.Configs = b.describeBrokerConfigs(rr.ConfigNames, r)
		case kmsg.ConfigResourceTypeBrokerLogger:
			sr.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		case kmsg.ConfigResourceTypeGroupConfig:
			sr.Configs = b.describeGroupConfigs(rr.ResourceName, rr.ConfigNames) // share_configs.go
		default:
			sr.ErrorCode, err = kerr.InvalidRequest.Code, fmt.Errorf("unsupported resource type %d", rr.ResourceType)
		}
		if sr.ErrorCode != 0 {
			sr.ErrorMessage = errMessage(err)
			b.logBad(req, "describe configs rejected", "resource", rr.ResourceName, "error", kerr.ErrorForCode(sr.ErrorCode), "reason", err)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Reply{Response: resp}
}

func wanted(names []string) func(string) bool {
	if names == nil {
		return func(string) bool { return true }
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return func(n string) bool { return m[n] }
}

func describeTopicConfigs(cfg *topicConfig, names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for i := range topicConfigDefs {
		d := &topicConfigDefs[i]
		if !want(d.name) {
			continue
		}
		v, set := cfg.value(d.name)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = d.name, strPtr(v)
		c.IsDefault = !set
		c.Source = kmsg.ConfigSource(srcDefault)
		if set {
			c.Source = kmsg.ConfigSource(srcDynamicTopic)
		}
		if r.IncludeSynonyms {
			if set {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.name, v, srcDynamicTopic))
			}
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.synonym, d.def, srcDefault))
		}
		c.ConfigType = kmsg.ConfigType(d.typ)
		if r.IncludeDocumentation && d.doc != "" {
			c.Documentation = strPtr(d.doc)
		}
		out = append(out, c)
	}
	return out
}

func (b *Broker) describeBrokerConfigs(names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, bc := range b.brokerConfigs() {
		if !want(bc.name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = bc.name, strPtr(bc.value)
		c.ReadOnly = true
		c.IsDefault = bc.source == srcDefault
		c.Source = kmsg.ConfigSource(bc.source)
		if r.IncludeSynonyms {
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(bc.name, bc.value, bc.source))
		}
		c.ConfigType = kmsg.ConfigType(bc.typ)
		if r.IncludeDocumentation && bc.doc != "" {
			c.Documentation = strPtr(bc.doc)
		}
		out = append(out, c)
	}
	return out
}

func synonym(name, value string, src int8) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Value, s.Source = name, strPtr(value), kmsg.ConfigSource(src)
	return s
}

func strPtr(s string) *string { return &s }
