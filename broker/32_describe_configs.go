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
// Broker (type 4) named by this node's ID: the settings of brokerConfigs
// and every dynamic broker config set (dynconfig.go), each with the value
// that wins (per-broker DYNAMIC_BROKER_CONFIG, then the cluster's
// DYNAMIC_DEFAULT_BROKER_CONFIG, then the static or default value), that
// source, ReadOnly unless Kafka can change it at run time, and the
// synonyms in precedence order; sensitive values are null. Named "": the
// cluster-wide dynamic defaults only, as Kafka describes them. Other IDs:
// INVALID_REQUEST. Broker loggers (type 8): none. Client-metrics
// subscriptions (type 16): client_metrics.go.
// A topic config without its own value reports the dynamic broker config
// it falls back to, with its source, and the chain as synonyms.
// Other resource types: INVALID_REQUEST. v3+ carries types and, when asked,
// documentation.

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
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
			if id, perr := strconv.ParseInt(rr.ResourceName, 10, 32); rr.ResourceName != "" && (perr != nil || b.cl.Index(int32(id)) < 0) {
				sr.ErrorCode, err = kerr.InvalidRequest.Code, fmt.Errorf("unexpected broker id, expected %s or empty string, but received %s", b.cl.IDsText(), rr.ResourceName)
				break
			}
			if rr.ResourceName == "" {
				sr.Configs = b.describeDynamicDefaults(rr.ConfigNames, r)
				break
			}
			sr.Configs = b.describeBrokerConfigs(rr.ConfigNames, r)
		case kmsg.ConfigResourceTypeBrokerLogger:
			sr.Configs = []kmsg.DescribeConfigsResponseResourceConfig{}
		case kmsg.ConfigResourceTypeGroupConfig:
			sr.Configs = b.describeGroupConfigs(rr.ResourceName, rr.ConfigNames) // share_configs.go
		case kmsg.ConfigResourceTypeClientMetrics:
			if sr.Configs, err = b.describeClientMetrics(rr.ResourceName, rr.ConfigNames, r); err != nil { // client_metrics.go
				sr.ErrorCode = kerr.InvalidRequest.Code
			}
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

func describeTopicConfigs(cfg *topicconfig.Config, names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for i := range topicconfig.Defs {
		d := &topicconfig.Defs[i]
		if !want(d.Name) {
			continue
		}
		v, src := cfg.Source(d.Name)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = d.Name, strPtr(v)
		c.IsDefault = src == topicconfig.SrcDefault
		c.Source = kmsg.ConfigSource(src)
		if r.IncludeSynonyms {
			if tv, set := cfg.Set[d.Name]; set {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.Name, tv, topicconfig.SrcDynamicTopic))
			}
			for _, in := range cfg.Inherit[d.Name].Chain {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(in.Name, in.Value, in.Src))
			}
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.Synonym, d.Default, topicconfig.SrcDefault))
		}
		c.ConfigType = kmsg.ConfigType(d.Type)
		if r.IncludeDocumentation && d.Doc != "" {
			c.Documentation = strPtr(d.Doc)
		}
		out = append(out, c)
	}
	return out
}

func (b *Broker) describeBrokerConfigs(names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	dyn := b.dyn.Load()
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	listed := map[string]bool{}
	add := func(name, base string, typ, baseSrc int8, doc string) {
		_, dynamic, _, _ := brokerconfig.Key(name)
		sensitive := brokerconfig.IsSensitive(name)
		var chain []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		for _, lv := range []struct {
			set map[string]string
			src int8
		}{{dyn.Node, brokerconfig.SrcDynamicBroker}, {dyn.Default, brokerconfig.SrcDynamicDefaultBroker}} {
			if v, ok := lv.set[name]; ok {
				chain = append(chain, synonym(name, v, lv.src))
			}
		}
		if baseSrc != 0 {
			chain = append(chain, synonym(name, base, baseSrc))
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = name, chain[0].Value
		c.Source = chain[0].Source
		c.ReadOnly = !dynamic
		c.IsDefault = c.Source == kmsg.ConfigSource(topicconfig.SrcDefault)
		c.IsSensitive = sensitive
		if r.IncludeSynonyms {
			c.ConfigSynonyms = chain
		}
		if sensitive {
			c.Value = nil
			for i := range c.ConfigSynonyms {
				c.ConfigSynonyms[i].Value = nil
			}
		}
		c.ConfigType = kmsg.ConfigType(typ)
		if r.IncludeDocumentation && doc != "" {
			c.Documentation = strPtr(doc)
		}
		out = append(out, c)
	}
	for _, bc := range b.brokerConfigs() {
		listed[bc.name] = true
		if want(bc.name) {
			add(bc.name, bc.value, bc.typ, bc.source, bc.doc)
		}
	}
	// Dynamic configs set that the static list does not carry.
	extra := map[string]bool{}
	for k := range dyn.Node {
		extra[k] = true
	}
	for k := range dyn.Default {
		extra[k] = true
	}
	var keys []string
	for k := range extra {
		if !listed[k] && want(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		_, _, _, typ := brokerconfig.Key(k)
		add(k, "", typ, 0, "")
	}
	return out
}

// describeDynamicDefaults describes the resource "": the cluster-wide
// dynamic defaults that are set, and only those.
func (b *Broker) describeDynamicDefaults(names []string, r *kmsg.DescribeConfigsRequest) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	static := map[string]brokerConfig{}
	for _, bc := range b.brokerConfigs() {
		static[bc.name] = bc
	}
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	set := b.dyn.Load().Default
	for _, k := range brokerconfig.SortedKeys(set) {
		if !want(k) {
			continue
		}
		_, _, _, typ := brokerconfig.Key(k)
		sensitive := brokerconfig.IsSensitive(k)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = k, strPtr(set[k])
		c.Source = kmsg.ConfigSource(brokerconfig.SrcDynamicDefaultBroker)
		c.IsSensitive = sensitive
		c.ConfigType = kmsg.ConfigType(typ)
		if r.IncludeSynonyms {
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(k, set[k], brokerconfig.SrcDynamicDefaultBroker))
			if bc, ok := static[k]; ok {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(k, bc.value, bc.source))
			}
		}
		if sensitive {
			c.Value = nil
			for i := range c.ConfigSynonyms {
				c.ConfigSynonyms[i].Value = nil
			}
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
