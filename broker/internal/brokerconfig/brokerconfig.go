// Package brokerconfig knows Kafka's broker configs as dynamic broker
// configs (KIP-226) need them: which names exist, which may change while
// a broker runs and at which level (per broker, cluster default), their
// types, the broker configs that stand for topic configs (TopicSynonym,
// whose dynamic values are the defaults of every topic), the validation
// of a level's new set in Kafka's words, and the persisted State.
// broker/internal/configs reads and writes the state file and applies it;
// the package imports neither broker nor protocol (internal/lint checks
// that).
package brokerconfig

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
)

// Config sources of DescribeConfigs beyond topicconfig's.
const (
	SrcDynamicBroker        int8 = 2
	SrcDynamicDefaultBroker int8 = 3
)

const TypePassword int8 = 9

// dynKey is one dynamic broker config that does not stand for a topic
// config: its type and whether it may be set only per broker.
type dynKey struct {
	typ       int8
	perBroker bool
}

// otherKeys are Kafka's dynamic broker configs that are not topic
// config synonyms (DynamicBrokerConfig.AllDynamicConfigs in Kafka 4.x):
// the log cleaner's, the thread pools', the listeners' and their SSL and
// SASL settings (per broker), connection limits, producer state, remote
// log fetch limits, metric reporters and config providers.
var otherKeys = map[string]dynKey{
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
	"ssl.keystore.password":                         {TypePassword, true},
	"ssl.key.password":                              {TypePassword, true},
	"ssl.truststore.type":                           {topicconfig.TypeString, true},
	"ssl.truststore.location":                       {topicconfig.TypeString, true},
	"ssl.truststore.password":                       {TypePassword, true},
	"ssl.keymanager.algorithm":                      {topicconfig.TypeString, true},
	"ssl.trustmanager.algorithm":                    {topicconfig.TypeString, true},
	"ssl.endpoint.identification.algorithm":         {topicconfig.TypeString, true},
	"ssl.secure.random.implementation":              {topicconfig.TypeString, true},
	"ssl.client.auth":                               {topicconfig.TypeString, true},
	"ssl.engine.factory.class":                      {topicconfig.TypeString, true},
	"ssl.keystore.key":                              {TypePassword, true},
	"ssl.keystore.certificate.chain":                {TypePassword, true},
	"ssl.truststore.certificates":                   {TypePassword, true},
	"sasl.mechanism.inter.broker.protocol":          {topicconfig.TypeString, true},
	"sasl.jaas.config":                              {TypePassword, true},
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

// SSLStoreKeys are the SSL settings Kafka lets change only per listener
// (listener.name.NAME.ssl.keystore.location, ...), never bare.
var SSLStoreKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// clusterLevelListenerKeys are listener settings that may be set at the
// cluster default too.
var clusterLevelListenerKeys = map[string]bool{"max.connections": true, "max.connection.creation.rate": true, "num.network.threads": true}

// TopicSynonym maps a broker-level config to the topic config it is
// the default of (log.retention.ms → retention.ms), for the topic configs
// Kafka reconfigures dynamically (ServerTopicConfigSynonyms).
var TopicSynonym = func() map[string]*topicconfig.Def {
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

// Key returns what Kafka knows of a config name: whether it is a
// Kafka broker config at all, dynamic, per-broker only, and its type.
func Key(name string) (known, dynamic, perBroker bool, typ int8) {
	if d := TopicSynonym[name]; d != nil {
		return true, true, false, d.Type
	}
	if k, ok := otherKeys[name]; ok {
		return true, true, k.perBroker, k.typ
	}
	if base, ok := ListenerOverride(name); ok {
		known, dynamic, _, typ = Key(base)
		if !known {
			// listener.name.X.<anything> is a listener's own setting.
			return true, true, true, topicconfig.TypeString
		}
		return true, dynamic, !clusterLevelListenerKeys[base], typ
	}
	if StaticKeys[name] {
		return true, false, false, topicconfig.TypeString
	}
	return false, false, false, topicconfig.TypeString
}

// ListenerOverride splits listener.name.NAME.key into key.
func ListenerOverride(name string) (string, bool) {
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

// StaticKeys are Kafka broker configs that exist but cannot change
// while a broker runs (the rest of KafkaConfig that minikafka knows of,
// reported by DescribeConfigs as read-only). Setting one dynamically is
// refused as Kafka refuses it.
var StaticKeys = map[string]bool{
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

// State is the persisted content: the per-broker values of this node
// and the cluster-wide defaults.
type State struct {
	Version int               `json:"version"`
	Node    map[string]string `json:"node,omitempty"`
	Default map[string]string `json:"default,omitempty"`
}

// Current holds the current state; writers (the broker, under its
// adminMu) replace it whole, readers load it without a lock.
type Current struct {
	cur atomic.Pointer[State]
}

// Store makes s current.
func (d *Current) Store(s *State) { d.cur.Store(s) }

// Load is the current state (empty before Store).
func (d *Current) Load() *State {
	if s := d.cur.Load(); s != nil {
		return s
	}
	return &State{}
}

// lookup returns the dynamic value of name and its source, per-broker
// first.
func (s *State) Lookup(name string) (string, int8, bool) {
	if v, ok := s.Node[name]; ok {
		return v, SrcDynamicBroker, true
	}
	if v, ok := s.Default[name]; ok {
		return v, SrcDynamicDefaultBroker, true
	}
	return "", 0, false
}

// topicDefaults is the dynamic broker-level value of every topic config
// that has one, keyed by topic config name.
func (s *State) TopicDefaults() map[string]topicconfig.Inherited {
	var m map[string]topicconfig.Inherited
	for bk, d := range TopicSynonym {
		for _, lv := range []struct {
			set map[string]string
			src int8
		}{{s.Node, SrcDynamicBroker}, {s.Default, SrcDynamicDefaultBroker}} {
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

// Validate checks a level's new set as Kafka's
// DynamicBrokerConfig.validateConfigs does, naming the offending keys in
// Kafka's words. Only keys that change are checked for being dynamic, so a
// key stored earlier never blocks an unrelated change.
func Validate(next, prev map[string]string, perBroker bool) error {
	var static, bareSSL, brokerOnly []string
	for _, k := range SortedKeys(next) {
		if pv, ok := prev[k]; ok && pv == next[k] {
			continue
		}
		known, dynamic, pb, _ := Key(k)
		switch {
		case known && !dynamic:
			static = append(static, k)
		case slices.Contains(SSLStoreKeys, k):
			bareSSL = append(bareSSL, k)
		case pb && !perBroker:
			brokerOnly = append(brokerOnly, k)
		}
	}
	if len(static) > 0 {
		return fmt.Errorf("Cannot update these configs dynamically: %s", KafkaSet(static))
	}
	if len(bareSSL) > 0 {
		return fmt.Errorf("These security configs can be dynamically updated only per-listener using the listener prefix: %s", KafkaSet(bareSSL))
	}
	for _, k := range SortedKeys(next) {
		if err := ValidateValue(k, next[k]); err != nil {
			return err
		}
	}
	if len(brokerOnly) > 0 {
		return fmt.Errorf("Cannot update these configs at default cluster level, broker id must be specified: %s", KafkaSet(brokerOnly))
	}
	return nil
}

// ValidateValue checks a value against its key's type (and, for
// topic defaults, the topic config's bounds and choices). Unknown keys are
// accepted as Kafka accepts custom broker configs.
func ValidateValue(name, value string) error {
	if d := TopicSynonym[name]; d != nil {
		dd := *d
		dd.Name = name
		return topicconfig.ValidateValue(&dd, value)
	}
	base := name
	if b, ok := ListenerOverride(name); ok {
		base = b
	}
	if k, ok := otherKeys[base]; ok {
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

// KafkaSet formats names as Kafka's error messages print a Scala set.
func KafkaSet(names []string) string { return "Set(" + strings.Join(names, ", ") + ")" }

func SortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Redacted lists the keys of set with sensitive values hidden, for the
// log.
func Redacted(set map[string]string) map[string]string {
	out := make(map[string]string, len(set))
	for k, v := range set {
		if IsSensitive(k) {
			v = "[hidden]"
		}
		out[k] = v
	}
	return out
}

func IsSensitive(name string) bool {
	_, _, _, typ := Key(name)
	return typ == TypePassword
}
