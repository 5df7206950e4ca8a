package broker

// Dynamic broker configs (KIP-226): AlterConfigs and IncrementalAlterConfigs
// on a BROKER resource named by this node's ID (per-broker) or "" (the
// cluster-wide default) set the keys Apache Kafka marks dynamic. They are
// kept in one file, broker_configs.json in the data dir, replaced whole
// with vfs.WriteFileAtomic, and read back at start.
//
// Precedence, as Kafka's: per-broker, then cluster default, then the
// static value (flags) or Kafka's default. The broker-level synonyms of
// topic configs (log.retention.ms, message.max.bytes, ...) are the defaults
// of every topic without its own override, so setting one changes those
// topics at once (rebaseTopicConfigs). Other dynamic keys are stored and
// described but change nothing here (threads, SSL stores, SASL Kerberos
// settings have no counterpart in minikafka).

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

const dynConfigFile = "broker_configs.json"

func (b *Broker) dynConfigPath() string { return path.Join(b.cfg.DataDir, dynConfigFile) }

// loadDynConfigs reads the persisted dynamic configs; a missing file is an
// empty set. It runs before the topics are loaded, so that they start with
// the dynamic defaults.
func (b *Broker) loadDynConfigs() error {
	data, err := readFile(b.fs, b.dynConfigPath())
	if errors.Is(err, fs.ErrNotExist) {
		b.dyn.Store(&brokerconfig.State{Version: 1})
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: reading %s: %w", dynConfigFile, err)
	}
	var s brokerconfig.State
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("broker: %s is corrupt: %w", dynConfigFile, err)
	}
	if s.Version != 1 {
		return fmt.Errorf("broker: %s: unknown version %d", dynConfigFile, s.Version)
	}
	b.dyn.Store(&s)
	return nil
}

// storeDynConfigs persists next and makes it current, then applies it to
// the topics. The caller holds adminMu. On a write error nothing changes.
func (b *Broker) storeDynConfigs(next *brokerconfig.State) error {
	next.Version = 1
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(b.fs, b.dynConfigPath(), data, 0o600); err != nil {
		return fmt.Errorf("broker: persisting dynamic broker configs: %w", err)
	}
	b.dyn.Store(next)
	b.rebaseTopicConfigs()
	return nil
}

// parseTopicConfigs is the package function with this broker's dynamic
// topic defaults.
func (b *Broker) parseTopicConfigs(set map[string]string) (*topicconfig.Config, error) {
	return topicconfig.ParseWith(set, b.dyn.Load().TopicDefaults())
}

// rebaseTopicConfigs re-derives every topic's effective config from its own
// overrides and the current dynamic defaults, and hands the log settings to
// its partitions. The caller holds adminMu.
func (b *Broker) rebaseTopicConfigs() {
	defaults := b.dyn.Load().TopicDefaults()
	for _, t := range b.topics.Load().byName {
		cur := t.cfg.Load()
		cfg, err := topicconfig.ParseWith(cur.Set, defaults)
		if err != nil {
			// The topic's own set was valid when stored and defaults are
			// validated before they are stored: not reachable.
			b.log.Error("re-deriving topic configs", "topic", t.name, "err", err)
			continue
		}
		t.cfg.Store(cfg)
		for _, p := range t.partitions() {
			p.log.SetConfig(cfg.Log)
		}
	}
}

// alterBrokerConfigs validates and applies one BROKER resource of an
// AlterConfigs (replace: keys not named are removed at that level) or
// IncrementalAlterConfigs (ops) request. The caller holds adminMu.
func (b *Broker) alterBrokerConfigs(name string, dup, validateOnly bool, change func(cur map[string]string) (map[string]string, error)) (int16, error) {
	if dup {
		return kerr.InvalidRequest.Code, errors.New("Each resource must appear at most once.")
	}
	perBroker := name != ""
	if perBroker {
		if code, err := b.checkBrokerResourceName(name); code != 0 {
			return code, err
		}
	}
	cur := b.dyn.Load()
	level := cur.Default
	if perBroker {
		level = cur.Node
	}
	next, err := change(maps.Clone(level))
	if err != nil {
		var ce *codedError
		if errors.As(err, &ce) {
			return ce.code, ce.err
		}
		return kerr.InvalidRequest.Code, err
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
	if err := b.storeDynConfigs(s); err != nil {
		b.log.Error("persisting dynamic broker configs", "err", err)
		return errCode(err), err
	}
	b.log.Info("altered dynamic broker configs", "resource", name, "configs", brokerconfig.Redacted(next))
	return 0, nil
}

// checkBrokerResourceName accepts this node's ID (any node's of a
// simulated cluster: its nodes share one configuration), with Kafka's
// answers for anything else
// (ConfigAdminManager.validateResourceNameIsCurrentNodeId).
func (b *Broker) checkBrokerResourceName(name string) (int16, error) {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return kerr.InvalidRequest.Code, fmt.Errorf("Node id must be an integer, but it is: %s", name)
	}
	if b.cl.Index(int32(id)) < 0 {
		return kerr.InvalidRequest.Code, fmt.Errorf("Unexpected broker id, expected %s, but received %s", b.cl.IDsText(), name)
	}
	return 0, nil
}

// codedError carries the Kafka error code a validation failure answers.
type codedError struct {
	code int16
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
