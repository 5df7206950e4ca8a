package minikafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/spool"
)

// Checking the options and resolving them into the settings Start works
// from: every check that spans several options, and the defaults that
// depend on others. options.go is where each option sets its field.

// memDataDir is the data dir's path inside the in-memory filesystem.
const memDataDir = "/minikafka"

// settings is the configuration once checked, with the defaults that
// depend on other options filled in.
type settings struct {
	sync    logstore.SyncPolicy
	uplink  *uplink.Config
	sec     securitySettings
	plans   []ListenerSpec
	log     *slog.Logger
	fsys    vfs.FS // nil: the OS filesystem
	dataDir string // absolute on the OS filesystem, memDataDir in memory
	// storage, with WithStorageFaults, switches the filesystem the broker
	// is given (brokerFS wraps fsys, or the OS, in them).
	storage  *StorageFaults
	brokerFS vfs.FS
}

// resolve checks the options group by group (general, uplink, security,
// listeners), returning the first failing group's errors, and fills in
// the defaults that depend on several options.
func (c *config) resolve() (settings, error) {
	var s settings
	var err error
	if s.sync, err = c.validate(); err != nil {
		return s, err
	}
	if s.uplink, err = c.uplink.build(); err != nil {
		return s, err
	}
	if s.sec, err = c.security.build(); err != nil {
		return s, err
	}
	if s.plans, err = c.listenerPlans(s.sec); err != nil {
		return s, err
	}
	s.log = c.logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.fsys, s.dataDir = c.fs, c.dataDir
	switch {
	case s.dataDir == "":
		s.dataDir = memDataDir
		if s.fsys == nil {
			s.fsys = vfs.NewMem()
		}
	case s.fsys == nil:
		// Absolute, so what we report and what we use stay the same
		// if the program changes directory later.
		if abs, err := filepath.Abs(s.dataDir); err == nil {
			s.dataDir = abs
		}
	}
	s.brokerFS = s.fsys
	if c.storageFaults {
		s.storage = &StorageFaults{}
		base := s.fsys
		if base == nil {
			base = vfs.OS{}
		}
		s.brokerFS = vfs.NewFaultFS(base, s.storage)
	}
	return s, nil
}

// validate checks the configuration and resolves the sync policy.
func (c *config) validate() (logstore.SyncPolicy, error) {
	var errs []error
	if _, _, err := net.SplitHostPort(c.listenAddr); err != nil {
		errs = append(errs, fmt.Errorf("listen address %q: %w", c.listenAddr, err))
	}
	if c.advertisedAddr != "" {
		host, port, err := net.SplitHostPort(c.advertisedAddr)
		if err != nil {
			errs = append(errs, fmt.Errorf("advertised address %q: %w", c.advertisedAddr, err))
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil || host == "" {
			errs = append(errs, fmt.Errorf("advertised address %q: want host:port", c.advertisedAddr))
		}
	}
	if c.nodeID < 0 {
		errs = append(errs, fmt.Errorf("node id %d: must be >= 0", c.nodeID))
	}
	errs = append(errs, c.cluster.validate()...)
	if c.partitions < 1 {
		errs = append(errs, fmt.Errorf("default partitions %d: must be >= 1", c.partitions))
	}
	if c.rebalanceDelay < 0 {
		errs = append(errs, fmt.Errorf("group initial rebalance delay %v: must be >= 0", c.rebalanceDelay))
	}
	if c.maxRequest < 0 {
		errs = append(errs, fmt.Errorf("max request bytes %d: must be > 0", c.maxRequest))
	}
	seen := map[string]bool{}
	for _, t := range c.topics {
		switch {
		case t.Name == "":
			errs = append(errs, errors.New("WithTopic: empty topic name"))
		case t.Partitions < 1 && t.Partitions != -1:
			errs = append(errs, fmt.Errorf("WithTopic %q: %d partitions", t.Name, t.Partitions))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("WithTopic %q given twice", t.Name))
		}
		seen[t.Name] = true
	}

	errs = append(errs, c.groups.check()...)
	errs = append(errs, c.cleaner.validate()...)
	errs = append(errs, c.http.check()...)
	errs = append(errs, c.admin.check()...)
	errs = append(errs, c.schemaRegistry.check()...)

	var sp logstore.SyncPolicy
	switch {
	case c.sync != nil:
		sp = *c.sync
	case c.durability != "":
		p, err := logstore.ParseSyncPolicy(c.durability)
		if err != nil {
			errs = append(errs, fmt.Errorf("durability %q: %w", c.durability, err))
		}
		sp = p
	case c.dataDir == "":
		sp = logstore.SyncPolicy{Mode: logstore.SyncNever}
	default:
		sp = logstore.SyncPolicy{Mode: logstore.SyncAlways}
	}
	if err := errors.Join(errs...); err != nil {
		return sp, fmt.Errorf("minikafka: invalid options: %w", err)
	}
	return sp, nil
}

// listenerPlans resolves the configured listeners: WithListeners' specs, or
// the single listener of WithListenAddr, named after its security protocol
// as Kafka's default listener is.
func (c *config) listenerPlans(sec securitySettings) ([]ListenerSpec, error) {
	if !c.listeners.set {
		proto := Plaintext
		switch {
		case sec.tls != nil && sec.sasl != nil:
			proto = SASLSSL
		case sec.tls != nil:
			proto = SSL
		case sec.sasl != nil:
			proto = SASLPlaintext
		}
		addr := c.listenAddr
		if c.listener != nil {
			addr = c.listener.Addr().String()
		}
		return []ListenerSpec{{Name: proto, Addr: addr, Advertised: c.advertisedAddr, Security: proto}}, nil
	}
	var errs []error
	if c.listener != nil {
		errs = append(errs, errors.New("WithListener and WithListeners cannot be combined"))
	}
	if c.advertisedAddr != "" {
		errs = append(errs, errors.New("WithAdvertisedAddr and WithListeners cannot be combined: set ListenerSpec.Advertised"))
	}
	specs := slices.Clone(c.listeners.specs)
	if err := checkListeners(specs); err != nil {
		errs = append(errs, err)
	}
	usesTLS, usesSASL := false, false
	for _, s := range specs {
		wantTLS, wantSASL := s.Security == SSL || s.Security == SASLSSL, strings.HasPrefix(s.Security, "SASL_")
		if wantTLS && sec.tls == nil {
			errs = append(errs, fmt.Errorf("listener %s is %s but WithTLS gives no certificate", s.Name, s.Security))
		}
		if wantSASL && sec.sasl == nil {
			errs = append(errs, fmt.Errorf("listener %s is %s but WithSASL gives no users", s.Name, s.Security))
		}
		usesTLS, usesSASL = usesTLS || wantTLS, usesSASL || wantSASL
	}
	// Refused rather than ignored: whoever set them expects them used.
	if sec.tls != nil && !usesTLS {
		errs = append(errs, errors.New("WithTLS is given but no listener is SSL or SASL_SSL"))
	}
	if sec.sasl != nil && !usesSASL {
		errs = append(errs, errors.New("WithSASL is given but no listener is SASL_PLAINTEXT or SASL_SSL"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("minikafka: invalid options: %w", err)
	}
	return specs, nil
}

// securitySettings is what Start hands the broker and the listener.
type securitySettings struct {
	tls        *tls.Config
	sasl       *broker.SASLConfig
	preAuthMax int32
}

// build validates the options.
func (s *securityConfig) build() (securitySettings, error) {
	var out securitySettings
	var errs []error
	if s.tls != nil {
		if len(s.tls.Certificates) == 0 && s.tls.GetCertificate == nil && s.tls.GetConfigForClient == nil {
			errs = append(errs, errors.New("WithTLS: the tls.Config has no certificate"))
		}
		out.tls = s.tls
	}
	if s.saslOn {
		if len(s.saslUsers) == 0 && s.oauth == nil {
			errs = append(errs, errors.New("WithSASL: no users"))
		}
		if slices.Contains(slices.Collect(maps.Keys(s.saslUsers)), "") {
			errs = append(errs, errors.New("WithSASL: a user with an empty name"))
		}
		var mechs []string
		for _, m := range s.saslMechanisms {
			m = strings.ToUpper(strings.TrimSpace(m))
			if m == broker.SASLOAuthBearer && s.oauth != nil {
				mechs = append(mechs, m)
				continue
			}
			if !slices.Contains(broker.SASLMechanisms, m) {
				errs = append(errs, fmt.Errorf("WithSASL: unknown mechanism %q (want %s)", m, strings.Join(broker.SASLMechanisms, ", ")))
			}
			mechs = append(mechs, m)
		}
		if s.oauth != nil {
			switch {
			case len(s.saslUsers) == 0:
				mechs = []string{broker.SASLOAuthBearer}
			case len(mechs) == 0:
				mechs = append(slices.Clone(broker.SASLMechanisms), broker.SASLOAuthBearer)
			case !slices.Contains(mechs, broker.SASLOAuthBearer):
				mechs = append(mechs, broker.SASLOAuthBearer)
			}
		}
		out.sasl = &broker.SASLConfig{Users: s.saslUsers, Mechanisms: mechs, MaxReauth: s.saslMaxReauth, OAuth: s.oauth}
		out.preAuthMax = broker.PreAuthMaxRequestBytes
	}
	switch d := s.saslMaxReauth; {
	case d < 0 || d > 0 && d < time.Millisecond:
		errs = append(errs, fmt.Errorf("WithSASLMaxReauth(%v): want 0 (off) or at least 1ms", d))
	case d > 0 && !s.saslOn:
		errs = append(errs, errors.New("WithSASLMaxReauth without WithSASL"))
	}
	if err := s.applyDelegationTokens(&out); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("minikafka: invalid options: %w", err)
	}
	return out, nil
}

// applyDelegationTokens checks the option and copies it into the SASL
// settings (nil when SASL is off).
func (s *securityConfig) applyDelegationTokens(out *securitySettings) error {
	d := s.dtoken
	switch {
	case d == nil:
		return nil
	case !s.saslOn:
		return errors.New("WithDelegationTokens without WithSASL")
	case d.MaxLifetime < 0 || d.ExpiryTime < 0:
		return errors.New("WithDelegationTokens: negative lifetime")
	}
	if out.sasl != nil {
		out.sasl.DelegationTokenSecret = d.Secret
		out.sasl.DelegationTokenMaxLifetime = d.MaxLifetime
		out.sasl.DelegationTokenExpiryTime = d.ExpiryTime
	}
	return nil
}

// build returns the broker's uplink config, nil when forwarding is off.
func (u *uplinkConfig) build() (*uplink.Config, error) {
	if len(u.forward) == 0 && len(u.brokers) == 0 {
		if u.spoolKey != nil || u.spoolOldKeys != nil {
			return nil, fmt.Errorf("minikafka: a spool encryption key is set but no topic is forwarded (WithForward, WithUpstream)")
		}
		if u.syncGroups || u.checkpointsAlias != "" {
			return nil, fmt.Errorf("minikafka: WithForwardGroupOffsets or WithForwardCheckpoints is set but no topic is forwarded (WithForward, WithUpstream)")
		}
		return nil, nil
	}
	if len(u.brokers) == 0 {
		return nil, fmt.Errorf("minikafka: forwarding %q needs an upstream (WithUpstream)", u.forward)
	}
	if len(u.forward) == 0 {
		return nil, fmt.Errorf("minikafka: an upstream is set but no topic is forwarded (WithForward)")
	}
	cfg := &uplink.Config{
		Brokers: u.brokers, TLS: u.tls,
		SASLMechanism: u.mechanism, SASLUser: u.user, SASLPassword: u.pass,
		SpoolMaxBytes: u.spoolMax, ClientOpts: u.clientOpts,
		SyncGroupOffsets: u.syncGroups, SyncGroupOffsetsInterval: u.syncGroupsInterval,
		CheckpointsAlias: u.checkpointsAlias,
	}
	if u.spoolKey != nil {
		c, err := spoolCipher(u.spoolKey, u.spoolOldKeys)
		if err != nil {
			return nil, err
		}
		cfg.Cipher, cfg.EncryptionKeyID = c, spool.KeyID(u.spoolKey)
	} else if len(u.spoolOldKeys) > 0 {
		return nil, fmt.Errorf("minikafka: previous spool keys are given but no current one")
	}
	switch strings.ToUpper(u.mechanism) {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, fmt.Errorf("minikafka: unknown upstream SASL mechanism %q", u.mechanism)
	}
	for _, p := range u.forward {
		r, err := uplink.ParseForwardRule(p)
		if err != nil {
			return nil, fmt.Errorf("minikafka: %w", err)
		}
		cfg.Forward = append(cfg.Forward, r)
	}
	return cfg, nil
}

// spoolCipher is AES-256-GCM under key, in a ring with previous keys if
// any.
func spoolCipher(key []byte, previous [][]byte) (spool.Cipher, error) {
	cur, err := spool.NewAESGCM(key)
	if err != nil {
		return nil, fmt.Errorf("minikafka: spool encryption key: %w", err)
	}
	if len(previous) == 0 {
		return cur, nil
	}
	var olds []spool.Cipher
	for i, k := range previous {
		c, err := spool.NewAESGCM(k)
		if err != nil {
			return nil, fmt.Errorf("minikafka: previous spool encryption key %d: %w", i+1, err)
		}
		olds = append(olds, c)
	}
	return spool.NewKeyRing(cur, olds...)
}

// check returns the problems with the group settings (zero means the
// default; Kafka's own constraints between the settings apply to the
// values in effect).
func (g groupsConfig) check() []error {
	var errs []error
	for _, s := range []struct {
		name string
		v    time.Duration
	}{
		{"offsets retention", g.OffsetsRetention},
		{"offsets retention check interval", g.OffsetsRetentionCheckInterval},
		{"group min session timeout", g.MinSessionTimeout},
		{"group max session timeout", g.MaxSessionTimeout},
		{"group consumer session timeout", g.ConsumerSessionTimeout},
		{"group consumer heartbeat interval", g.ConsumerHeartbeatInterval},
		{"group consumer min session timeout", g.ConsumerMinSessionTimeout},
		{"group consumer max session timeout", g.ConsumerMaxSessionTimeout},
		{"group consumer min heartbeat interval", g.ConsumerMinHeartbeatInterval},
		{"group consumer max heartbeat interval", g.ConsumerMaxHeartbeatInterval},
	} {
		if s.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v: must be >= 0", s.name, s.v))
		}
	}
	eff := g.GroupConfig
	def := broker.DefaultGroupConfig()
	orDefault := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	minS, maxS := orDefault(eff.MinSessionTimeout, def.MinSessionTimeout), orDefault(eff.MaxSessionTimeout, def.MaxSessionTimeout)
	if minS > maxS {
		errs = append(errs, fmt.Errorf("group min session timeout %v is above the max %v", minS, maxS))
	}
	hb, sess := orDefault(eff.ConsumerHeartbeatInterval, def.ConsumerHeartbeatInterval), orDefault(eff.ConsumerSessionTimeout, def.ConsumerSessionTimeout)
	if hb >= sess {
		// Kafka refuses this too: members would expire between heartbeats.
		errs = append(errs, fmt.Errorf("group consumer heartbeat interval %v must be below the consumer session timeout %v", hb, sess))
	}
	// Bounds set must hold the broker's own value, as Kafka requires of
	// its settings (an unset bound stretches to take it in).
	for _, bd := range []struct {
		name      string
		v, lo, hi time.Duration
	}{
		{"group consumer session timeout", sess, eff.ConsumerMinSessionTimeout, eff.ConsumerMaxSessionTimeout},
		{"group consumer heartbeat interval", hb, eff.ConsumerMinHeartbeatInterval, eff.ConsumerMaxHeartbeatInterval},
	} {
		if (bd.lo > 0 && bd.v < bd.lo) || (bd.hi > 0 && bd.v > bd.hi) {
			errs = append(errs, fmt.Errorf("%s %v is outside its bounds [%v, %v]", bd.name, bd.v, bd.lo, bd.hi))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"group consumer session timeout", eff.ConsumerSessionTimeout}, {"group consumer heartbeat interval", eff.ConsumerHeartbeatInterval},
		{"group min session timeout", eff.MinSessionTimeout}, {"group max session timeout", eff.MaxSessionTimeout}} {
		if (d.v > 0 && d.v < time.Millisecond) || d.v > time.Duration(1<<31-1)*time.Millisecond {
			// Kafka carries these as int32 milliseconds on the wire.
			errs = append(errs, fmt.Errorf("%s %v: must be between 1ms and %v", d.name, d.v, time.Duration(1<<31-1)*time.Millisecond))
		}
	}
	if g.ConsumerMaxSize < 0 || int64(g.ConsumerMaxSize) > 1<<31-1 {
		errs = append(errs, fmt.Errorf("group consumer max size %d: must be between 1 and %d", g.ConsumerMaxSize, 1<<31-1))
	}
	return errs
}

func (cc cleanerConfig) validate() []error {
	var errs []error
	if cc.backoff < 0 {
		errs = append(errs, fmt.Errorf("log cleaner backoff %v: must not be negative", cc.backoff))
	}
	if cc.dedupeBytes < 0 {
		errs = append(errs, fmt.Errorf("log cleaner dedupe buffer size %d: must not be negative", cc.dedupeBytes))
	}
	return errs
}

// bindAddr is the address to listen on (openBindAddr).
func (h httpConfig) bindAddr() (string, error) {
	return openBindAddr("http", h.addr, h.any, "the console has no password: give WithHTTPAddrAny (-http-addr-any) to mean it")
}

// check reports what is wrong with the HTTP options.
func (h httpConfig) check() []error { return checkBindAddr(h.addr, h.bindAddr) }

// openBindAddr is the address to listen on for an endpoint that asks for
// no password: a port alone means loopback unless any is set, and a
// wildcard host needs any (why says what to give).
func openBindAddr(what, addr string, anyHost bool, why string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%s address %q: bad port", what, addr)
	}
	wildcard := host == "0.0.0.0" || host == "::" || host == "[::]"
	switch {
	case host == "" && !anyHost:
		host = "127.0.0.1"
	case wildcard && !anyHost:
		return "", fmt.Errorf("%s address %q listens on every interface, and %s, or a loopback address", what, addr, why)
	}
	return net.JoinHostPort(host, port), nil
}

// checkBindAddr is bind's error, if any, for an endpoint that is on.
func checkBindAddr(addr string, bind func() (string, error)) []error {
	if addr == "" {
		return nil
	}
	if _, err := bind(); err != nil {
		return []error{err}
	}
	return nil
}

// bindAddr is the address to listen on: a port alone means loopback;
// anything that is not loopback needs a token.
func (a adminConfig) bindAddr() (string, error) {
	host, port, err := net.SplitHostPort(a.addr)
	if err != nil {
		return "", fmt.Errorf("admin address %q: %w", a.addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("admin address %q: bad port", a.addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && a.token == "" {
		return "", fmt.Errorf("admin address %q is not loopback and the control API can break the broker: give a token (WithAdminToken, -admin-token-file)", a.addr)
	}
	return net.JoinHostPort(host, port), nil
}

func (a adminConfig) check() []error {
	if a.addr == "" {
		if a.token != "" {
			return []error{errors.New("an admin token without an admin address (WithAdminAddr, -admin-addr)")}
		}
		return nil
	}
	return checkBindAddr(a.addr, a.bindAddr)
}

// bindAddr is the address to listen on (openBindAddr).
func (s schemaRegistryConfig) bindAddr() (string, error) {
	return openBindAddr("schema registry", s.addr, s.any, "the registry has no password: give WithSchemaRegistryAny (-schema-registry-addr-any) to mean it")
}

func (s schemaRegistryConfig) check() []error { return checkBindAddr(s.addr, s.bindAddr) }

func (o clusterOptions) validate() []error {
	var errs []error
	switch {
	case o.nodes < 0 || o.nodes > 64:
		errs = append(errs, fmt.Errorf("nodes %d: must be between 1 and 64", o.nodes))
	case len(o.racks) > max(o.nodes, 1):
		errs = append(errs, fmt.Errorf("racks %v: more racks than the %d nodes", o.racks, max(o.nodes, 1)))
	}
	if o.replicationFactor < 0 || int(o.replicationFactor) > max(o.nodes, 1) {
		errs = append(errs, fmt.Errorf("default replication factor %d: must be between 1 and the number of nodes (%d)", o.replicationFactor, max(o.nodes, 1)))
	}
	if o.autoRebalance < 0 {
		errs = append(errs, fmt.Errorf("auto leader rebalance interval %v: must be > 0", o.autoRebalance))
	}
	return errs
}

// count is the number of nodes (at least 1).
func (o clusterOptions) count() int { return max(o.nodes, 1) }

func (o clusterOptions) rack(i int) string {
	if i < len(o.racks) {
		return o.racks[i]
	}
	return ""
}
