package configs

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/topicname"
)

// Describe answers one resource of DescribeConfigs: the configs named
// (nil: all), with synonyms and documentation when asked, or the code and
// reason it is refused.
func (m *Manager) Describe(typ kmsg.ConfigResourceType, name string, names []string, synonyms, docs bool) ([]kmsg.DescribeConfigsResponseResourceConfig, int16, error) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := topicname.Validate(name); err != nil {
			return nil, kerr.InvalidTopicException.Code, err
		}
		cfg, ok := m.b.TopicConfig(name)
		if !ok {
			return nil, kerr.UnknownTopicOrPartition.Code, fmt.Errorf("unknown topic %s", name)
		}
		return describeTopic(cfg, names, synonyms, docs), 0, nil
	case kmsg.ConfigResourceTypeBroker:
		if id, perr := strconv.ParseInt(name, 10, 32); name != "" && (perr != nil || m.cfg.Nodes.Index(int32(id)) < 0) {
			return nil, kerr.InvalidRequest.Code, fmt.Errorf("unexpected broker id, expected %s or empty string, but received %s", m.cfg.Nodes.IDsText(), name)
		}
		if name == "" {
			return m.describeDynamicDefaults(names, synonyms), 0, nil
		}
		return m.describeBroker(names, synonyms, docs), 0, nil
	case kmsg.ConfigResourceTypeBrokerLogger:
		return []kmsg.DescribeConfigsResponseResourceConfig{}, 0, nil
	case kmsg.ConfigResourceTypeGroupConfig:
		return m.describeGroup(name, names), 0, nil
	case kmsg.ConfigResourceTypeClientMetrics:
		cs, err := m.describeClientMetrics(name, names, synonyms)
		if err != nil {
			return cs, kerr.InvalidRequest.Code, err
		}
		return cs, 0, nil
	}
	return nil, kerr.InvalidRequest.Code, fmt.Errorf("unsupported resource type %d", typ)
}

// Wanted is the filter of a describe's config names: nil wants all.
func Wanted(names []string) func(string) bool {
	if names == nil {
		return func(string) bool { return true }
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return func(n string) bool { return m[n] }
}

// describeTopic is every topic config of topicconfig.Defs (or the named
// ones; unknown names are left out, as Kafka does) with its effective
// value and source, and as synonyms the topic's own value, the dynamic
// broker configs it inherits and the broker default.
func describeTopic(cfg *topicconfig.Config, names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := Wanted(names)
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for i := range topicconfig.Defs {
		d := &topicconfig.Defs[i]
		if !want(d.Name) {
			continue
		}
		v, src := cfg.Source(d.Name)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = d.Name, kmsg.StringPtr(v)
		c.IsDefault = src == topicconfig.SrcDefault
		c.Source = kmsg.ConfigSource(src)
		if synonyms {
			if tv, set := cfg.Set[d.Name]; set {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.Name, tv, topicconfig.SrcDynamicTopic))
			}
			for _, in := range cfg.Inherit[d.Name].Chain {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(in.Name, in.Value, in.Src))
			}
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(d.Synonym, d.Default, topicconfig.SrcDefault))
		}
		c.ConfigType = kmsg.ConfigType(d.Type)
		if docs && d.Doc != "" {
			c.Documentation = kmsg.StringPtr(d.Doc)
		}
		out = append(out, c)
	}
	return out
}

// describeBroker is the static settings and every dynamic broker config
// set, each with the value that wins (per broker, then the cluster
// default, then the static or default value), that source and the chain
// as synonyms; ReadOnly unless Kafka can change it at run time; sensitive
// values null.
func (m *Manager) describeBroker(names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := Wanted(names)
	dyn := m.dyn.Load()
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
		if synonyms {
			c.ConfigSynonyms = chain
		}
		if sensitive {
			c.Value = nil
			for i := range c.ConfigSynonyms {
				c.ConfigSynonyms[i].Value = nil
			}
		}
		c.ConfigType = kmsg.ConfigType(typ)
		if docs && doc != "" {
			c.Documentation = kmsg.StringPtr(doc)
		}
		out = append(out, c)
	}
	for _, bc := range StaticConfigs(m.b.Settings()) {
		listed[bc.Name] = true
		if want(bc.Name) {
			add(bc.Name, bc.Value, bc.Type, bc.Source, bc.Doc)
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
func (m *Manager) describeDynamicDefaults(names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := Wanted(names)
	static := map[string]Static{}
	for _, bc := range StaticConfigs(m.b.Settings()) {
		static[bc.Name] = bc
	}
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	set := m.dyn.Load().Default
	for _, k := range brokerconfig.SortedKeys(set) {
		if !want(k) {
			continue
		}
		_, _, _, typ := brokerconfig.Key(k)
		sensitive := brokerconfig.IsSensitive(k)
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(set[k])
		c.Source = kmsg.ConfigSource(brokerconfig.SrcDynamicDefaultBroker)
		c.IsSensitive = sensitive
		c.ConfigType = kmsg.ConfigType(typ)
		if synonyms {
			c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(k, set[k], brokerconfig.SrcDynamicDefaultBroker))
			if bc, ok := static[k]; ok {
				c.ConfigSynonyms = append(c.ConfigSynonyms, synonym(k, bc.Value, bc.Source))
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
	s.Name, s.Value, s.Source = name, kmsg.StringPtr(value), kmsg.ConfigSource(src)
	return s
}
