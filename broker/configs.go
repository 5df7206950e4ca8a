package broker

// The config resources' wiring. Describing and altering them, the dynamic
// broker configs and the client-metrics subscriptions are
// broker/internal/configs; the 32, 33, 44 and 74 files hand it the decoded
// resources, and configsView is the broker as it sees it.

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

func newConfigs(b *Broker) *configs.Manager {
	gc := b.cfg.Groups.WithDefaults()
	return configs.New(configs.Config{
		FS: b.fs, Dir: b.cfg.DataDir, Logger: b.log, Nodes: b.cl, Telemetry: b.telemetry, ErrCode: errCode,
		ShareDefaults: share.ConfigNames(),
		Groups: configs.GroupBounds{
			SessionTimeout: gc.ConsumerSessionTimeout, MinSessionTimeout: gc.ConsumerMinSessionTimeout, MaxSessionTimeout: gc.ConsumerMaxSessionTimeout,
			HeartbeatInterval: gc.ConsumerHeartbeatInterval, MinHeartbeatInterval: gc.ConsumerMinHeartbeatInterval, MaxHeartbeatInterval: gc.ConsumerMaxHeartbeatInterval,
		},
	}, configsView{b})
}

// parseTopicConfigs is a new topic's config over the dynamic defaults.
func (b *Broker) parseTopicConfigs(set map[string]string) (*topicconfig.Config, error) {
	return b.configs.ParseTopic(set)
}

// configsView is the broker as the config resources see it
// (configs.Broker). Its writers run under adminMu.
type configsView struct{ b *Broker }

func (v configsView) TopicConfig(name string) (*topicconfig.Config, bool) {
	if t := v.b.lookupTopic(name, [16]byte{}); t != nil {
		return t.cfg.Load(), true
	}
	return nil, false
}

func (v configsView) TopicNames() []string {
	tt := v.b.topics.Load()
	names := make([]string, 0, len(tt.byName))
	for name := range tt.byName {
		names = append(names, name)
	}
	return names
}

func (v configsView) WriteTopicConfig(name string, set map[string]string) error {
	t := v.b.lookupTopic(name, [16]byte{})
	if t == nil {
		return fmt.Errorf("topic %s was deleted", name)
	}
	return v.b.writeTopicMeta(t, t.partitions(), set)
}

func (v configsView) ApplyTopicConfig(name string, cfg *topicconfig.Config) {
	if t := v.b.lookupTopic(name, [16]byte{}); t != nil {
		t.cfg.Store(cfg)
		for _, p := range t.partitions() {
			p.log.SetConfig(cfg.Log)
		}
	}
}

func (v configsView) Settings() configs.Settings {
	b := v.b
	host, port := b.Advertised()
	advertised := fmt.Sprintf("PLAINTEXT://%s:%d", host, port)
	if ls := b.Listeners(); ls != nil {
		var eps []string
		for _, l := range ls {
			eps = append(eps, fmt.Sprintf("%s://%s", l.Name, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))))
		}
		advertised = strings.Join(eps, ",")
	}
	return configs.Settings{
		Advertised: advertised, NodeID: b.cfg.NodeID, AutoCreateTopics: b.cfg.AutoCreateTopics,
		DefaultReplicationFactor: b.cfg.DefaultReplicationFactor, DefaultPartitions: b.cfg.DefaultPartitions,
		GroupInitialRebalanceDelay: b.cfg.GroupInitialRebalanceDelay, RetentionCheckInterval: b.cfg.RetentionCheckInterval,
		DataDir: b.cfg.DataDir, Groups: b.cfg.Groups.BrokerConfigs(),
	}
}

func (v configsView) GroupConfigs(group string) map[string]string {
	return v.b.share.GroupConfigs(group)
}
func (v configsView) SetGroupConfigs(group string, set map[string]string) error {
	return v.b.share.SetGroupConfigs(group, set)
}
func (v configsView) ValidateShareConfig(name, value string) error {
	return v.b.share.ValidateConfig(name, value)
}
