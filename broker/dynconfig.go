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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

const dynConfigFile = "broker_configs.json"

// Config sources of DescribeConfigs beyond those in configs.go.
const (
	srcDynamicBroker        int8 = 2
	srcDynamicDefaultBroker int8 = 3
)

const cfgTypePassword int8 = 9

// dynKey is one dynamic broker config that does not stand for a topic
// config: its type and whether it may be set only per broker.
type dynKey struct {
	typ       int8
	perBroker bool
}

// dynOtherKeys are Kafka's dynamic broker configs that are not topic
// config synonyms (DynamicBrokerConfig.AllDynamicConfigs in Kafka 4.x):
// the log cleaner's, the thread pools', the listeners' and their SSL and
// SASL settings (per broker), connection limits, producer state, remote
// log fetch limits, metric reporters and config providers.
var dynOtherKeys = map[string]dynKey{
	"log.cleaner.threads":                           {topicconfig.TypeInt, false},
	"log.cleaner.dedupe.buffer.size":                {topicconfig.TypeLong, false},
	"log.cleaner.io.buffer.load.factor":             {topicconfig.TypeDouble, false},
	"log.cleaner.io.buffer.size":                    {topicconfig.TypeInt, false},
	"log.cleaner.io.max.bytes.per.second":           {topicconfig.TypeDouble, false},
	"log.cleaner.backoff.ms":                        {topicconfig.TypeLong, false},
	"num.io.threads":                                {topicconfig.TypeInt, false},
	"num.replica.fetchers":                          {topicconfig.TypeInt, false},
	"num.recovery.threads.per.data.dir":             {topicconfig.TypeInt, false},
	"background.threads":                            {topicconfig.TypeInt, false},
	"metric.reporters":                              {topicconfig.TypeList, false},
	"config.providers":                              {topicconfig.TypeList, false},
	"max.connections":                               {topicconfig.TypeInt, false},
	"max.connection.creation.rate":                  {topicconfig.TypeInt, false},
	"num.network.threads":                           {topicconfig.TypeInt, false},
	"max.connections.per.ip":                        {topicconfig.TypeInt, false},
	"max.connections.per.ip.overrides":              {topicconfig.TypeString, false},
	"producer.id.expiration.ms":                     {topicconfig.TypeInt, false},
	"transaction.partition.verification.enable":     {topicconfig.TypeBoolean, false},
	"follower.fetch.last.tiered.offset.enable":      {topicconfig.TypeBoolean, false},
	"remote.log.index.file.cache.total.size.bytes":  {topicconfig.TypeLong, false},
	"remote.log.manager.copy.max.bytes.per.second":  {topicconfig.TypeLong, false},
	"remote.log.manager.fetch.max.bytes.per.second": {topicconfig.TypeLong, false},
	"remote.fetch.max.wait.ms":                      {topicconfig.TypeInt, false},
	"remote.list.offsets.request.timeout.ms":        {topicconfig.TypeLong, false},
	"listeners":                                     {topicconfig.TypeString, true},
	"listener.security.protocol.map":                {topicconfig.TypeString, true},
	"principal.builder.class":                       {topicconfig.TypeString, true},
	"ssl.protocol":                                  {topicconfig.TypeString, true},
	"ssl.provider":                                  {topicconfig.TypeString, true},
	"ssl.cipher.suites":                             {topicconfig.TypeList, true},
	"ssl.enabled.protocols":                         {topicconfig.TypeList, true},
	"ssl.keystore.type":                             {topicconfig.TypeString, true},
	"ssl.keystore.location":                         {topicconfig.TypeString, true},
	"ssl.keystore.password":                         {cfgTypePassword, true},
	"ssl.key.password":                              {cfgTypePassword, true},
	"ssl.truststore.type":                           {topicconfig.TypeString, true},
	"ssl.truststore.location":                       {topicconfig.TypeString, true},
	"ssl.truststore.password":                       {cfgTypePassword, true},
	"ssl.keymanager.algorithm":                      {topicconfig.TypeString, true},
	"ssl.trustmanager.algorithm":                    {topicconfig.TypeString, true},
	"ssl.endpoint.identification.algorithm":         {topicconfig.TypeString, true},
	"ssl.secure.random.implementation":              {topicconfig.TypeString, true},
	"ssl.client.auth":                               {topicconfig.TypeString, true},
	"ssl.engine.factory.class":                      {topicconfig.TypeString, true},
	"ssl.keystore.key":                              {cfgTypePassword, true},
	"ssl.keystore.certificate.chain":                {cfgTypePassword, true},
	"ssl.truststore.certificates":                   {cfgTypePassword, true},
	"sasl.mechanism.inter.broker.protocol":          {topicconfig.TypeString, true},
	"sasl.jaas.config":                              {cfgTypePassword, true},
	"sasl.enabled.mechanisms":                       {topicconfig.TypeList, true},
	"sasl.kerberos.service.name":                    {topicconfig.TypeString, true},
	"sasl.kerberos.kinit.cmd":                       {topicconfig.TypeString, true},
	"sasl.kerberos.ticket.renew.window.factor":      {topicconfig.TypeDouble, true},
	"sasl.kerberos.ticket.renew.jitter":             {topicconfig.TypeDouble, true},
	"sasl.kerberos.min.time.before.relogin":         {topicconfig.TypeLong, true},
	"sasl.kerberos.principal.to.local.rules":        {topicconfig.TypeList, true},
	"sasl.login.refresh.window.factor":              {topicconfig.TypeDouble, true},
	"sasl.login.refresh.window.jitter":              {topicconfig.TypeDouble, true},
	"sasl.login.refresh.min.period.seconds":         {topicconfig.TypeShort, true},
	"sasl.login.refresh.buffer.seconds":             {topicconfig.TypeShort, true},
}

// dynSSLStoreKeys are the SSL settings Kafka lets change only per listener
// (listener.name.NAME.ssl.keystore.location, ...), never bare.
var dynSSLStoreKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// clusterLevelListenerKeys are listener settings that may be set at the
// cluster default too.
var clusterLevelListenerKeys = map[string]bool{"max.connections": true, "max.connection.creation.rate": true, "num.network.threads": true}

// brokerTopicSynonym maps a broker-level config to the topic config it is
// the default of (log.retention.ms → retention.ms), for the topic configs
// Kafka reconfigures dynamically (ServerTopicConfigSynonyms).
var brokerTopicSynonym = func() map[string]*topicconfig.Def {
	m := map[string]*topicconfig.Def{}
	for i := range topicconfig.Defs {
		d := &topicconfig.Defs[i]
		switch d.Name {
		case "follower.replication.throttled.replicas", "leader.replication.throttled.replicas", "remote.storage.enable":
			continue // replication and tiered-storage settings, not log defaults
		}
		m[d.Synonym] = d
	}
	return m
}()

// dynConfigKey returns what Kafka knows of a config name: whether it is a
// Kafka broker config at all, dynamic, per-broker only, and its type.
func dynConfigKey(name string) (known, dynamic, perBroker bool, typ int8) {
	if d := brokerTopicSynonym[name]; d != nil {
		return true, true, false, d.Type
	}
	if k, ok := dynOtherKeys[name]; ok {
		return true, true, k.perBroker, k.typ
	}
	if base, ok := listenerOverride(name); ok {
		known, dynamic, _, typ = dynConfigKey(base)
		if !known {
			// listener.name.X.<anything> is a listener's own setting.
			return true, true, true, topicconfig.TypeString
		}
		return true, dynamic, !clusterLevelListenerKeys[base], typ
	}
	if staticBrokerKeys[name] {
		return true, false, false, topicconfig.TypeString
	}
	return false, false, false, topicconfig.TypeString
}

// listenerOverride splits listener.name.NAME.key into key.
func listenerOverride(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "listener.name.")
	if !ok {
		return "", false
	}
	_, base, ok := strings.Cut(rest, ".")
	if !ok || base == "" {
		return "", false
	}
	// Mechanism settings come as listener.name.X.MECH.key (Kafka's
	// ListenerMechanismConfigs); the key is the last parts.
	for _, k := range []string{"sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class", "sasl.server.callback.handler.class", "connections.max.reauth.ms"} {
		if strings.HasSuffix(base, "."+k) {
			return k, true
		}
	}
	return base, true
}

// staticBrokerKeys are Kafka broker configs that exist but cannot change
// while a broker runs (the rest of KafkaConfig that minikafka knows of,
// reported by DescribeConfigs as read-only). Setting one dynamically is
// refused as Kafka refuses it.
var staticBrokerKeys = map[string]bool{
	"advertised.listeners": true, "auto.create.topics.enable": true, "broker.id": true, "node.id": true,
	"connections.max.idle.ms": true, "default.replication.factor": true, "delete.topic.enable": true,
	"inter.broker.protocol.version": true, "group.initial.rebalance.delay.ms": true, "log.dirs": true, "log.dir": true,
	"log.retention.check.interval.ms": true, "log.retention.hours": true, "log.retention.minutes": true,
	"log.roll.hours": true, "log.roll.jitter.hours": true, "num.partitions": true,
	"offsets.topic.replication.factor": true, "offsets.topic.num.partitions": true, "process.roles": true,
	"socket.request.max.bytes": true, "transaction.state.log.min.isr": true,
	"transaction.state.log.replication.factor": true, "controller.quorum.voters": true,
	"controller.listener.names": true, "metadata.log.dir": true, "zookeeper.connect": true,
	"group.min.session.timeout.ms": true, "group.max.session.timeout.ms": true, "group.max.size": true,
	"authorizer.class.name": true, "super.users": true, "allow.everyone.if.no.acl.found": true,
}

// dynState is the persisted content: the per-broker values of this node
// and the cluster-wide defaults.
type dynState struct {
	Version int               `json:"version"`
	Node    map[string]string `json:"node,omitempty"`
	Default map[string]string `json:"default,omitempty"`
}

// dynBrokerConfigs holds the current state; writers hold adminMu and
// replace it whole, readers load it without a lock.
type dynBrokerConfigs struct {
	cur atomic.Pointer[dynState]
}

func (d *dynBrokerConfigs) load() *dynState {
	if s := d.cur.Load(); s != nil {
		return s
	}
	return &dynState{}
}

// lookup returns the dynamic value of name and its source, per-broker
// first.
func (s *dynState) lookup(name string) (string, int8, bool) {
	if v, ok := s.Node[name]; ok {
		return v, srcDynamicBroker, true
	}
	if v, ok := s.Default[name]; ok {
		return v, srcDynamicDefaultBroker, true
	}
	return "", 0, false
}

// topicDefaults is the dynamic broker-level value of every topic config
// that has one, keyed by topic config name.
func (s *dynState) topicDefaults() map[string]topicconfig.Inherited {
	var m map[string]topicconfig.Inherited
	for bk, d := range brokerTopicSynonym {
		for _, lv := range []struct {
			set map[string]string
			src int8
		}{{s.Node, srcDynamicBroker}, {s.Default, srcDynamicDefaultBroker}} {
			if v, ok := lv.set[bk]; ok {
				if m == nil {
					m = map[string]topicconfig.Inherited{}
				}
				cur := m[d.Name]
				cur.Chain = append(cur.Chain, topicconfig.InheritedValue{Name: bk, Value: v, Src: lv.src})
				m[d.Name] = cur
			}
		}
	}
	return m
}

func (b *Broker) dynConfigPath() string { return path.Join(b.cfg.DataDir, dynConfigFile) }

// loadDynConfigs reads the persisted dynamic configs; a missing file is an
// empty set. It runs before the topics are loaded, so that they start with
// the dynamic defaults.
func (b *Broker) loadDynConfigs() error {
	data, err := readFile(b.fs, b.dynConfigPath())
	if errors.Is(err, fs.ErrNotExist) {
		b.dyn.cur.Store(&dynState{Version: 1})
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: reading %s: %w", dynConfigFile, err)
	}
	var s dynState
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("broker: %s is corrupt: %w", dynConfigFile, err)
	}
	if s.Version != 1 {
		return fmt.Errorf("broker: %s: unknown version %d", dynConfigFile, s.Version)
	}
	b.dyn.cur.Store(&s)
	return nil
}

// storeDynConfigs persists next and makes it current, then applies it to
// the topics. The caller holds adminMu. On a write error nothing changes.
func (b *Broker) storeDynConfigs(next *dynState) error {
	next.Version = 1
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(b.fs, b.dynConfigPath(), data, 0o600); err != nil {
		return fmt.Errorf("broker: persisting dynamic broker configs: %w", err)
	}
	b.dyn.cur.Store(next)
	b.rebaseTopicConfigs()
	return nil
}

// parseTopicConfigs is the package function with this broker's dynamic
// topic defaults.
func (b *Broker) parseTopicConfigs(set map[string]string) (*topicconfig.Config, error) {
	return topicconfig.ParseWith(set, b.dyn.load().topicDefaults())
}

// rebaseTopicConfigs re-derives every topic's effective config from its own
// overrides and the current dynamic defaults, and hands the log settings to
// its partitions. The caller holds adminMu.
func (b *Broker) rebaseTopicConfigs() {
	defaults := b.dyn.load().topicDefaults()
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
	cur := b.dyn.load()
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
	if err := validateDynamicConfigs(next, level, perBroker); err != nil {
		return kerr.InvalidRequest.Code, err
	}
	if validateOnly {
		return 0, nil
	}
	s := &dynState{Node: cur.Node, Default: cur.Default}
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
	b.log.Info("altered dynamic broker configs", "resource", name, "configs", redactedKeys(next))
	return 0, nil
}

// validateDynamicConfigs checks a level's new set as Kafka's
// DynamicBrokerConfig.validateConfigs does, naming the offending keys in
// Kafka's words. Only keys that change are checked for being dynamic, so a
// key stored earlier never blocks an unrelated change.
func validateDynamicConfigs(next, prev map[string]string, perBroker bool) error {
	var static, bareSSL, brokerOnly []string
	for _, k := range sortedKeys(next) {
		if pv, ok := prev[k]; ok && pv == next[k] {
			continue
		}
		known, dynamic, pb, _ := dynConfigKey(k)
		switch {
		case known && !dynamic:
			static = append(static, k)
		case slices.Contains(dynSSLStoreKeys, k):
			bareSSL = append(bareSSL, k)
		case pb && !perBroker:
			brokerOnly = append(brokerOnly, k)
		}
	}
	if len(static) > 0 {
		return fmt.Errorf("Cannot update these configs dynamically: %s", kafkaSet(static))
	}
	if len(bareSSL) > 0 {
		return fmt.Errorf("These security configs can be dynamically updated only per-listener using the listener prefix: %s", kafkaSet(bareSSL))
	}
	for _, k := range sortedKeys(next) {
		if err := validateDynamicValue(k, next[k]); err != nil {
			return err
		}
	}
	if len(brokerOnly) > 0 {
		return fmt.Errorf("Cannot update these configs at default cluster level, broker id must be specified: %s", kafkaSet(brokerOnly))
	}
	return nil
}

// validateDynamicValue checks a value against its key's type (and, for
// topic defaults, the topic config's bounds and choices). Unknown keys are
// accepted as Kafka accepts custom broker configs.
func validateDynamicValue(name, value string) error {
	if d := brokerTopicSynonym[name]; d != nil {
		dd := *d
		dd.Name = name
		return topicconfig.ValidateValue(&dd, value)
	}
	base := name
	if b, ok := listenerOverride(name); ok {
		base = b
	}
	if k, ok := dynOtherKeys[base]; ok {
		d := topicconfig.Def{Name: name, Type: k.typ, Min: -1 << 63, Max: 1<<63 - 1}
		if k.typ == topicconfig.TypeInt || k.typ == topicconfig.TypeShort {
			d.Min, d.Max = -1<<31, 1<<31-1
			if k.typ == topicconfig.TypeShort {
				d.Min, d.Max = -1<<15, 1<<15-1
			}
		}
		if k.typ == topicconfig.TypeDouble {
			d.Min, d.Max = -1e308, 1e308
		}
		return topicconfig.ValidateValue(&d, value)
	}
	return nil
}

// kafkaSet formats names as Kafka's error messages print a Scala set.
func kafkaSet(names []string) string { return "Set(" + strings.Join(names, ", ") + ")" }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// redactedKeys lists the keys of set with sensitive values hidden, for the
// log.
func redactedKeys(set map[string]string) map[string]string {
	out := make(map[string]string, len(set))
	for k, v := range set {
		if isSensitive(k) {
			v = "[hidden]"
		}
		out[k] = v
	}
	return out
}

func isSensitive(name string) bool {
	_, _, _, typ := dynConfigKey(name)
	return typ == cfgTypePassword
}

// checkBrokerResourceName accepts this node's ID, with Kafka's answers for
// anything else (ConfigAdminManager.validateResourceNameIsCurrentNodeId).
func (b *Broker) checkBrokerResourceName(name string) (int16, error) {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return kerr.InvalidRequest.Code, fmt.Errorf("Node id must be an integer, but it is: %s", name)
	}
	if int32(id) != b.cfg.NodeID {
		return kerr.InvalidRequest.Code, fmt.Errorf("Unexpected broker id, expected %d, but received %s", b.cfg.NodeID, name)
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
