package configs

// Dynamic broker configs (KIP-226): AlterConfigs and IncrementalAlterConfigs
// on a BROKER resource named by a node's ID (per-broker) or "" (the
// cluster-wide default) set the keys Apache Kafka marks dynamic. They are
// kept in one file, DynamicFile in the data dir, replaced whole, and read
// back at start.
//
// Precedence, as Kafka's: per-broker, then cluster default, then the
// static value (flags) or Kafka's default. The broker-level synonyms of
// topic configs (log.retention.ms, message.max.bytes, ...) are the defaults
// of every topic without its own override, so setting one changes those
// topics at once (Rebase). Other dynamic keys are stored and described but
// change nothing here (threads, SSL stores, SASL Kerberos settings have no
// counterpart in minikafka).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// DynamicFile holds the dynamic broker configs in the data dir.
const DynamicFile = "broker_configs.json"

func (m *Manager) dynPath() string { return path.Join(m.cfg.Dir, DynamicFile) }

// Dynamic is the current dynamic broker configs.
func (m *Manager) Dynamic() *brokerconfig.State { return m.dyn.Load() }

// LoadDynamic reads the persisted dynamic configs; a missing file is an
// empty set. The broker calls it before loading the topics, so that they
// start with the dynamic defaults.
func (m *Manager) LoadDynamic() error {
	data, err := vfs.ReadFile(m.cfg.FS, m.dynPath())
	if errors.Is(err, fs.ErrNotExist) {
		m.dyn.Store(&brokerconfig.State{Version: 1})
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: reading %s: %w", DynamicFile, err)
	}
	var s brokerconfig.State
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("broker: %s is corrupt: %w", DynamicFile, err)
	}
	if s.Version != 1 {
		return fmt.Errorf("broker: %s: unknown version %d", DynamicFile, s.Version)
	}
	m.dyn.Store(&s)
	return nil
}

// storeDynamic persists next and makes it current, then applies it to the
// topics. On a write error nothing changes.
func (m *Manager) storeDynamic(next *brokerconfig.State) error {
	next.Version = 1
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(m.cfg.FS, m.dynPath(), data, 0o600); err != nil {
		return fmt.Errorf("broker: persisting dynamic broker configs: %w", err)
	}
	m.dyn.Store(next)
	m.Rebase()
	return nil
}

// ParseTopic is topicconfig.ParseWith over the current dynamic topic
// defaults: a new topic's config.
func (m *Manager) ParseTopic(set map[string]string) (*topicconfig.Config, error) {
	return topicconfig.ParseWith(set, m.dyn.Load().TopicDefaults())
}

// Rebase re-derives every topic's effective config from its own overrides
// and the current dynamic defaults, and applies it.
func (m *Manager) Rebase() {
	defaults := m.dyn.Load().TopicDefaults()
	for _, name := range m.b.TopicNames() {
		cur, ok := m.b.TopicConfig(name)
		if !ok {
			continue
		}
		cfg, err := topicconfig.ParseWith(cur.Set, defaults)
		if err != nil {
			// The topic's own set was valid when stored and defaults are
			// validated before they are stored: not reachable.
			m.cfg.Logger.Error("re-deriving topic configs", "topic", name, "err", err)
			continue
		}
		m.b.ApplyTopicConfig(name, cfg)
	}
}

// alterBroker validates and applies one BROKER resource of an
// AlterConfigs (replace: keys not named are removed at that level) or
// IncrementalAlterConfigs (ops) request.
func (m *Manager) alterBroker(name string, dup, validateOnly bool, change func(cur map[string]string) (map[string]string, error)) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, errors.New("Each resource must appear at most once.")
	}
	perBroker := name != ""
	if perBroker {
		if code, err := m.checkBrokerName(name); code != 0 {
			return code, err
		}
	}
	cur := m.dyn.Load()
	level := cur.Default
	if perBroker {
		level = cur.Node
	}
	next, err := change(maps.Clone(level))
	if err != nil {
		return codeOr(err, kerr.InvalidRequest.Code), err
	}
	if err := brokerconfig.Validate(next, level, perBroker); err != nil {
		return kerr.InvalidRequest.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	s := &brokerconfig.State{Node: cur.Node, Default: cur.Default}
	if len(next) == 0 {
		next = nil
	}
	if perBroker {
		s.Node = next
	} else {
		s.Default = next
	}
	if err := m.storeDynamic(s); err != nil {
		m.cfg.Logger.Error("persisting dynamic broker configs", "err", err)
		return m.cfg.ErrCode(err), err
	}
	m.cfg.Logger.Info("altered dynamic broker configs", "resource", name, "configs", brokerconfig.Redacted(next))
	return 0, nil
}

// checkBrokerName accepts a node's ID (any node's of a simulated cluster:
// its nodes share one configuration), with Kafka's answers for anything
// else (ConfigAdminManager.validateResourceNameIsCurrentNodeId).
func (m *Manager) checkBrokerName(name string) (int16, error) {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return kerr.InvalidRequest.Code, fmt.Errorf("Node id must be an integer, but it is: %s", name)
	}
	if m.cfg.Nodes.Index(int32(id)) < 0 {
		return kerr.InvalidRequest.Code, fmt.Errorf("Unexpected broker id, expected %s, but received %s", m.cfg.Nodes.IDsText(), name)
	}
	return 0, nil
}
