package minikafka

// Every option Start takes, in the sections of the package doc's list:
// the option, the value type it takes and the field of config it sets.
// What the options mean together (defaults that depend on several, the
// checks across them) is config.go.

import (
	"crypto/tls"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Option configures Start. Options apply in order; a later option
// overrides an earlier one that sets the same thing (WithInMemory and
// WithDataDir override each other).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set, by section; config.go checks it and
// resolves it into the settings Start works from.
type config struct {
	// Listeners and connections.
	listenAddr     string
	advertisedAddr string
	listener       net.Listener
	listeners      listenersConfig
	nodeID         int32
	clusterID      string
	maxRequest     int32
	sendBuffer     int
	idleTimeout    time.Duration
	logger         *slog.Logger

	// Storage and topics.
	dataDir    string // "": in memory
	fs         vfs.FS
	durability string
	sync       *logstore.SyncPolicy
	topics     []TopicSpec
	partitions int32
	autoCreate bool
	validation validation
	cleaner    cleanerConfig

	// Security.
	security                 securityConfig
	authorizer               *broker.AuthorizerConfig // nil: no ACLs
	sslPrincipalMappingRules string

	// Consumer and share groups.
	rebalanceDelay time.Duration
	groups         groupsConfig

	// Quotas and client telemetry.
	quotaWindow   quotaWindow
	clientMetrics clientMetrics

	// Uplink.
	uplink uplinkConfig

	// HTTP endpoints.
	http           httpConfig
	metricsAddr    string
	admin          adminConfig
	schemaRegistry schemaRegistryConfig

	// A simulated cluster.
	cluster clusterOptions

	// Tests.
	storageFaults bool
	waitLimit     waitLimit
}

// listenersConfig holds WithListeners; set is false when WithListenAddr
// came later.
type listenersConfig struct {
	specs []ListenerSpec
	set   bool
}

func defaultConfig() config {
	return config{
		listenAddr:     "127.0.0.1:0",
		partitions:     1,
		autoCreate:     true,
		rebalanceDelay: 3 * time.Second, // Kafka's group.initial.rebalance.delay.ms
		clientMetrics:  clientMetrics{prefixes: []string{"*"}, interval: 30 * time.Second},
	}
}

// Listeners and connections.

// WithListenAddr sets the address to listen on (host:port; port 0 picks
// a free port, reported by Addrs). Default "127.0.0.1:0".
func WithListenAddr(addr string) Option {
	return optionFunc(func(c *config) { c.listenAddr, c.listeners.set = addr, false })
}

// WithListeners serves several named listeners instead of the one of
// WithListenAddr (WithListeners and WithListenAddr override each other,
// the later wins); WithAdvertisedAddr and WithListener cannot be combined
// with it. Each request is answered with the advertised address of
// the listener it came in on, as Kafka does, so containers and the host
// can each reach the broker under their own name. A later call replaces an
// earlier one. Broker.Addr and Addrs then give the first listener's
// advertised address; Broker.Listeners gives all of them.
func WithListeners(listeners ...ListenerSpec) Option {
	return optionFunc(func(c *config) {
		c.listeners.specs, c.listeners.set = slices.Clone(listeners), true
	})
}

// WithAdvertisedAddr sets the host:port that Metadata hands to clients.
// Port 0 means the bound port. Default: the listen host (localhost when
// listening on all interfaces) and the bound port.
func WithAdvertisedAddr(hostport string) Option {
	return optionFunc(func(c *config) { c.advertisedAddr = hostport })
}

// WithListener serves on ln instead of listening on WithListenAddr's
// address (a test seam: custom or in-process transports). The broker owns
// ln from then on and closes it on Close, also when Start fails.
func WithListener(ln net.Listener) Option {
	return optionFunc(func(c *config) { c.listener = ln })
}

// WithNodeID sets the broker's node ID (Kafka node.id). Default 0.
func WithNodeID(id int32) Option {
	return optionFunc(func(c *config) { c.nodeID = id })
}

// WithClusterID fixes the cluster ID; by default one is generated on first
// start and kept in the data dir.
func WithClusterID(id string) Option {
	return optionFunc(func(c *config) { c.clusterID = id })
}

// WithMaxRequestBytes caps a request frame (Kafka socket.request.max.bytes,
// default 100 MiB).
func WithMaxRequestBytes(n int32) Option {
	return optionFunc(func(c *config) { c.maxRequest = n })
}

// WithQueuedMaxRequestBytes bounds the request bytes the broker holds in
// memory at once across all connections and listeners (Kafka's
// queued.max.request.bytes; default protocol.DefaultQueuedMaxRequestBytes,
// 100 MiB). Requests of up to 64 KiB never wait; a larger one takes memory
// once its first 64 KiB are in, and as its bytes arrive (all at once when
// most of it is already there). A request that does not fit waits, served
// fairly between connections and principals; when only half-read requests
// stand in the way, one request at a time may go past the budget, so
// memory for requests is at most the budget plus one request. See
// protocol.Budget.
func WithQueuedMaxRequestBytes(n int64) Option {
	return optionFunc(func(c *config) { c.validation.queuedMaxRequestBytes = n })
}

// WithRequestReadTimeout bounds how long a request may take to arrive once
// its length prefix has (default protocol.DefaultRequestReadTimeout, 30 s),
// not counting time it waits for request memory: a client whose request
// stops arriving is logged and its connection closed, so it cannot hold
// memory or its connection's turn for longer. Kafka has no such bound.
func WithRequestReadTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.validation.requestReadTimeout = d })
}

// WithSocketSendBufferBytes sets each client connection's TCP send buffer
// (Kafka socket.send.buffer.bytes; default
// protocol.DefaultSendBufferBytes, 256 KiB; -1 leaves the OS's
// autotuning). Raise it for consumers far away: one connection moves at
// most about this many bytes per round trip.
func WithSocketSendBufferBytes(n int) Option {
	return optionFunc(func(c *config) { c.sendBuffer = n })
}

// WithIdleTimeout closes client connections idle that long (Kafka
// connections.max.idle.ms, default 10 minutes).
func WithIdleTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.idleTimeout = d })
}

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// Storage and topics.

// FS is a filesystem the broker keeps its data in (WithFS): every file it
// reads or writes goes through OpenFile, Remove, RemoveAll, Rename,
// MkdirAll, ReadDir (the sorted names in a directory), Stat and SyncDir
// (make creations, renames and removals in a directory durable). It is
// the storage packages' own interface, exported with File so that code
// outside this module can implement it.
type FS = vfs.FS

// File is an open file of an FS: reads and writes at a position or at
// the end, Sync (fsync), Truncate, Stat, Name and Close.
type File = vfs.File

// OSFS returns the operating system's filesystem, the one the broker uses
// with WithDataDir alone; wrap it to give WithFS a filesystem that fails
// or delays what a test chooses.
func OSFS() FS { return vfs.OS{} }

// WithDataDir stores topics and state under dir (created if missing).
func WithDataDir(dir string) Option {
	return optionFunc(func(c *config) { c.dataDir = dir })
}

// WithInMemory keeps everything in memory: nothing survives Close. This
// is the default when no data dir is given.
func WithInMemory() Option {
	return optionFunc(func(c *config) { c.dataDir = "" })
}

// WithFS makes the broker keep its data in fsys; the data dir is a path in
// fsys (/minikafka without WithDataDir, which suits only an in-memory
// fsys). It exists for tests: a test that embeds the broker can wrap OSFS
// to fail the Nth fsync, tear a write or slow the disk, and watch what the
// broker answers its clients, which is why FS is a type callers can name
// and implement. With WithFS the data dir is not locked (the lock is an OS
// file lock), and Fetch copies file bytes instead of using sendfile unless
// the files are OSFS's own.
func WithFS(fsys FS) Option {
	return optionFunc(func(c *config) { c.fs = fsys })
}

// WithDurability sets the fsync policy by name: "always" (acks=all is
// answered after fsync, with group commit), "never" (the OS decides) or
// "interval=100ms". Default "always" with a data dir, "never" in memory.
func WithDurability(policy string) Option {
	return optionFunc(func(c *config) { c.durability, c.sync = policy, nil })
}

// WithSyncPolicy is WithDurability with an already parsed policy.
func WithSyncPolicy(p logstore.SyncPolicy) Option {
	return optionFunc(func(c *config) { c.durability, c.sync = "", &p })
}

// TopicSpec is a topic created at Start.
type TopicSpec struct {
	Name       string
	Partitions int32
}

// WithTopic creates a topic at Start (if it does not exist yet).
func WithTopic(name string, partitions int32) Option {
	return optionFunc(func(c *config) {
		c.topics = append(c.topics, TopicSpec{Name: name, Partitions: partitions})
	})
}

// WithDefaultPartitions sets the partition count of auto-created topics
// and of CreateTopics requests that ask for -1 (Kafka num.partitions).
// Default 1.
func WithDefaultPartitions(n int32) Option {
	return optionFunc(func(c *config) { c.partitions = n })
}

// WithAutoCreateTopics sets Kafka's auto.create.topics.enable. Default true.
func WithAutoCreateTopics(on bool) Option {
	return optionFunc(func(c *config) { c.autoCreate = on })
}

// validation says which produced batches are decoded record by record.
type validation struct {
	// passthrough: compressed batches are not decoded (the opt-out); the
	// zero value validates them.
	passthrough bool
	// requestReadTimeout bounds how long a request frame may take to
	// arrive (0: protocol.DefaultRequestReadTimeout).
	requestReadTimeout time.Duration
	// queuedMaxRequestBytes is the broker-wide request memory budget.
	queuedMaxRequestBytes int64
}

// WithCompressedRecordValidation(false) opts out of checking the records
// inside compressed produce batches. On (the default), every compressed
// batch is decoded by streaming through its records in bounded memory, as
// Apache Kafka's LogValidator does, and one a consumer could not read is
// refused with CORRUPT_MESSAGE or INVALID_RECORD. Off, a compressed batch is
// stored as sent after the checks that need no decompression (length,
// magic, CRC32C over the compressed bytes, attributes, record count,
// producer fields, header timestamps, the codec's stream header): faster,
// but a batch whose compressed body is broken is acknowledged and then
// stops every consumer at that offset. Topics whose cleanup.policy
// contains compact are always validated, because every record needs a key.
// See broker/doc.go, "Compressed produce".
func WithCompressedRecordValidation(on bool) Option {
	return optionFunc(func(c *config) { c.validation.passthrough = !on })
}

// cleanerConfig tunes the log cleaner of compacted topics.
type cleanerConfig struct {
	backoff     time.Duration
	dedupeBytes int
}

// WithLogCleanerBackoff sets how long the log cleaner sleeps when no
// compacted partition is due (Kafka log.cleaner.backoff.ms, default 15 s).
func WithLogCleanerBackoff(d time.Duration) Option {
	return optionFunc(func(c *config) { c.cleaner.backoff = d })
}

// WithLogCleanerDedupeBufferSize bounds the memory of the cleaner's
// key-to-offset map (Kafka log.cleaner.dedupe.buffer.size, default
// 128 MiB); a dirty section with more keys is cleaned in several passes.
func WithLogCleanerDedupeBufferSize(bytes int) Option {
	return optionFunc(func(c *config) { c.cleaner.dedupeBytes = bytes })
}

// Security.

// securityConfig collects the listener's TLS and SASL options.
type securityConfig struct {
	tls            *tls.Config
	saslUsers      map[string]string
	saslMechanisms []string
	saslOn         bool
	saslMaxReauth  time.Duration
	oauth          *broker.OAuthConfig
	dtoken         *DelegationTokenConfig
}

// WithTLS serves clients over TLS with cfg (Kafka's SSL listener, or
// SASL_SSL together with WithSASL); nil turns TLS off. cfg needs a
// certificate. For mutual TLS set cfg.ClientAuth to
// tls.RequireAndVerifyClientCert and cfg.ClientCAs: a client without a
// valid certificate is refused in the handshake. Fetches over TLS copy file
// bytes through the TLS layer instead of using sendfile.
func WithTLS(cfg *tls.Config) Option {
	return optionFunc(func(c *config) { c.security.tls = cfg })
}

// WithSASL requires every client connection to authenticate with SASL
// (Kafka's SASL_PLAINTEXT listener, SASL_SSL with WithTLS) as one of users
// (name → password; repeated calls add users). mechanisms are the enabled
// ones among "PLAIN", "SCRAM-SHA-256" and "SCRAM-SHA-512"; none means all
// three. SCRAM credentials are derived at Start with a random salt and 4096
// iterations; passwords are not kept. The program's own calls (WithTopic)
// need no authentication.
func WithSASL(users map[string]string, mechanisms ...string) Option {
	return optionFunc(func(c *config) {
		if c.security.saslUsers == nil {
			c.security.saslUsers = map[string]string{}
		}
		maps.Copy(c.security.saslUsers, users)
		c.security.saslOn = true
		if len(mechanisms) > 0 {
			c.security.saslMechanisms = mechanisms
		}
	})
}

// OAuthBearerConfig configures SASL/OAUTHBEARER token validation (Kafka's
// sasl.oauthbearer.* broker options); see WithSASLOAuthBearer.
type OAuthBearerConfig = broker.OAuthConfig

// WithSASLOAuthBearer enables SASL/OAUTHBEARER (and so SASL on the
// listener) beside any WithSASL mechanisms. Without JWKSFile or JWKSURL,
// tokens are unsecured JWTs ({"alg":"none"}, KIP-255), for development;
// with them, tokens must be signed (RS256/384/512, ES256/384) by a key of
// that JWKS and pass the issuer, audience, expiry and scope checks
// (KIP-768). The principal is the token's "sub" (PrincipalClaim); its
// session ends at the token's expiry (or WithSASLMaxReauth), and clients
// re-authenticate with a fresh token.
func WithSASLOAuthBearer(cfg OAuthBearerConfig) Option {
	return optionFunc(func(c *config) {
		c.security.oauth = &cfg
		c.security.saslOn = true
	})
}

// WithSASLMaxReauth is Kafka's connections.max.reauth.ms for WithSASL:
// with d > 0 every authenticated session lasts d (clients learn it from
// SaslAuthenticate v1+, session_lifetime_ms) and a client must
// re-authenticate on its connection before it ends (KIP-368; kgo,
// librdkafka and the Java client do so by themselves, with the same
// mechanism and user). A connection whose session has ended is closed at
// its next request. 0, the default, means sessions never end. d is
// rounded down to whole milliseconds and must be 0 or at least 1ms.
func WithSASLMaxReauth(d time.Duration) Option {
	return optionFunc(func(c *config) { c.security.saslMaxReauth = d })
}

// DelegationTokenConfig sets up Kafka's delegation tokens (KIP-48); see
// WithDelegationTokens. The names are Kafka's broker options.
type DelegationTokenConfig struct {
	// Secret is delegation.token.secret.key, the key of the tokens'
	// HMACs (HmacSHA512). Empty: a random one is generated on first start
	// and kept in the data dir. Changing it invalidates every token.
	Secret string
	// MaxLifetime is delegation.token.max.lifetime.ms: how long a token
	// can be renewed for at most; 0 means Kafka's 7 days.
	MaxLifetime time.Duration
	// ExpiryTime is delegation.token.expiry.time.ms: how long a new or
	// renewed token lives; 0 means Kafka's 1 day.
	ExpiryTime time.Duration
}

// WithDelegationTokens configures delegation tokens. They are on with
// WithSASL whether or not this option is given (with Kafka's defaults):
// a SASL-authenticated client creates, renews, expires and describes
// tokens (kadm's CreateDelegationToken and the rest, Kafka's Admin
// createDelegationToken), and another client logs in with SCRAM as the
// token's owner, the token ID as the user and the base64 HMAC as the
// password with tokenauth=true (kgo: scram.Auth{IsToken: true}). The
// tokens are kept in the data dir.
func WithDelegationTokens(cfg DelegationTokenConfig) Option {
	return optionFunc(func(c *config) { c.security.dtoken = &cfg })
}

// AuthorizerConfig configures ACL enforcement (WithAuthorizer).
type AuthorizerConfig struct {
	// SuperUsers are Kafka's super.users: principals ("User:admin")
	// allowed everything whatever the ACLs say.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is Kafka's
	// allow.everyone.if.no.acl.found: a resource that no ACL names is
	// open to every principal. The default, false, closes it to all but
	// super users, as Kafka does.
	AllowEveryoneIfNoACLFound bool
}

// WithAuthorizer turns ACL enforcement on, as Kafka's StandardAuthorizer
// (authorizer.class.name): CreateAcls, DescribeAcls and DeleteAcls manage
// the ACLs (kept in the data dir), and every client request is checked
// against them with Kafka's error codes. A connection's principal is
// User:<SASL user>, else User:<mapped certificate subject> with mutual
// TLS (WithSSLPrincipalMappingRules), else User:ANONYMOUS; so with no
// ACLs and no super users every
// client is refused. The program's own calls (WithTopic, the control API)
// are not checked. Without this option the ACL APIs answer
// SECURITY_DISABLED and nothing is checked.
func WithAuthorizer(cfg AuthorizerConfig) Option {
	return optionFunc(func(c *config) {
		c.authorizer = &broker.AuthorizerConfig{
			SuperUsers:                slices.Clone(cfg.SuperUsers),
			AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound,
		}
	})
}

// WithSSLPrincipalMappingRules is Kafka's ssl.principal.mapping.rules:
// how a TLS client certificate's subject becomes the principal name of a
// connection that did not authenticate with SASL, for ACLs
// (WithAuthorizer) and user quotas. Rules are RULE:pattern/replacement/
// with an optional L or U (lower or upper case), and DEFAULT, comma
// separated and tried in order ("RULE:^CN=(.*?),.*$/$1/,DEFAULT"); empty
// is DEFAULT, the whole subject DN ("CN=app,OU=eng,O=example"). A bad
// rule fails Start.
func WithSSLPrincipalMappingRules(rules string) Option {
	return optionFunc(func(c *config) { c.sslPrincipalMappingRules = rules })
}

// Consumer and share groups.

// groupsConfig is the group coordinator's settings; zero fields are
// Kafka's defaults (broker.DefaultGroupConfig).
type groupsConfig struct{ broker.GroupConfig }

// WithGroupInitialRebalanceDelay sets Kafka's
// group.initial.rebalance.delay.ms (default 3 s; tests want 0).
func WithGroupInitialRebalanceDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.rebalanceDelay = d })
}

// WithGroupMinSessionTimeout sets Kafka's group.min.session.timeout.ms: a
// classic group member asking for a shorter session timeout is refused
// with INVALID_SESSION_TIMEOUT. Default 6 s.
func WithGroupMinSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.MinSessionTimeout = d })
}

// WithGroupMaxSessionTimeout sets Kafka's group.max.session.timeout.ms,
// the longest session timeout a classic group member may ask for. Default
// 30 minutes.
func WithGroupMaxSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.MaxSessionTimeout = d })
}

// WithGroupConsumerSessionTimeout sets Kafka's
// group.consumer.session.timeout.ms: a KIP-848 consumer group member that
// has not heartbeated for that long is removed. Default 45 s.
func WithGroupConsumerSessionTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerSessionTimeout = d })
}

// WithGroupConsumerSessionTimeoutBounds sets Kafka's
// group.consumer.min.session.timeout.ms and
// group.consumer.max.session.timeout.ms: the range a consumer group's own
// consumer.session.timeout.ms (a GROUP config, set with
// IncrementalAlterConfigs) may take. Defaults 45 s and 60 s, stretched to
// take in WithGroupConsumerSessionTimeout.
func WithGroupConsumerSessionTimeoutBounds(lo, hi time.Duration) Option {
	return optionFunc(func(c *config) {
		c.groups.ConsumerMinSessionTimeout, c.groups.ConsumerMaxSessionTimeout = lo, hi
	})
}

// WithGroupConsumerHeartbeatInterval sets Kafka's
// group.consumer.heartbeat.interval.ms, the interval KIP-848 consumer
// group members are told to heartbeat at; a member learns of a new
// assignment on its next heartbeat. Default 5 s.
func WithGroupConsumerHeartbeatInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerHeartbeatInterval = d })
}

// WithGroupConsumerHeartbeatIntervalBounds sets Kafka's
// group.consumer.min.heartbeat.interval.ms and
// group.consumer.max.heartbeat.interval.ms: the range a consumer group's
// own consumer.heartbeat.interval.ms may take. Defaults 5 s and 15 s,
// stretched to take in WithGroupConsumerHeartbeatInterval.
func WithGroupConsumerHeartbeatIntervalBounds(lo, hi time.Duration) Option {
	return optionFunc(func(c *config) {
		c.groups.ConsumerMinHeartbeatInterval, c.groups.ConsumerMaxHeartbeatInterval = lo, hi
	})
}

// WithGroupConsumerMaxSize sets Kafka's group.consumer.max.size: a KIP-848
// consumer group this many members strong refuses another member with
// GROUP_MAX_SIZE_REACHED (a member it has, or a static member's new
// incarnation, still gets in). Default Kafka's, 2^31-1.
func WithGroupConsumerMaxSize(n int) Option {
	return optionFunc(func(c *config) { c.groups.ConsumerMaxSize = n })
}

// WithOffsetsRetention sets Kafka's offsets.retention.minutes: the
// committed offsets of a group without members are dropped this long after
// it became empty. Default 7 days.
func WithOffsetsRetention(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.OffsetsRetention = d })
}

// WithOffsetsRetentionCheckInterval sets Kafka's
// offsets.retention.check.interval.ms, how often expired offsets are
// looked for. Default 10 minutes.
func WithOffsetsRetentionCheckInterval(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.OffsetsRetentionCheckInterval = d })
}

// WithGroupShareMinRecordLockDuration sets Kafka's
// group.share.min.record.lock.duration.ms: the shortest acquisition lock
// (share.record.lock.duration.ms) a share group may set. Default 15 s;
// tests lower it to see locks expire quickly.
func WithGroupShareMinRecordLockDuration(d time.Duration) Option {
	return optionFunc(func(c *config) { c.groups.ShareMinRecordLockDuration = d })
}

// Quotas and client telemetry.

type quotaWindow struct {
	samples int
	size    time.Duration
}

// WithQuotaWindow is Kafka's quota.window.num and quota.window.size.seconds:
// client quotas are measured over samples windows of size each (default
// 11 × 1 s). A shorter window makes throttling finer-grained: a client can
// send about one window's worth of its quota at once. Zero keeps a default.
func WithQuotaWindow(samples int, size time.Duration) Option {
	return optionFunc(func(c *config) { c.quotaWindow = quotaWindow{samples, size} })
}

type clientMetrics struct {
	prefixes []string
	interval time.Duration
}

// WithClientMetrics sets the KIP-714 subscription every client is given:
// the metric name prefixes it is asked to push ("*" for all, none for no
// pushes at all) and how often. The pushed metrics appear on /metrics as
// minikafka_client_metric, one series per client instance, metric and
// attribute set. Default: all metrics every 30 s. Kafka itself asks for
// nothing until an operator creates a client-metrics resource; a broker
// people test against is where they want to see their clients, hence the
// default. A zero interval keeps 30 s.
func WithClientMetrics(interval time.Duration, prefixes ...string) Option {
	return optionFunc(func(c *config) {
		if interval <= 0 {
			interval = 30 * time.Second
		}
		c.clientMetrics = clientMetrics{prefixes: prefixes, interval: interval}
	})
}

// Uplink: forwarding topics to an upstream cluster.

// uplinkConfig collects the upstream options; forwarding is on when
// WithUpstream names brokers and WithForward names at least one pattern.
type uplinkConfig struct {
	brokers    []string
	tls        *tls.Config
	mechanism  string
	user, pass string
	forward    []string
	spoolMax   int64
	clientOpts []kgo.Opt
	// spoolKey seals new spool segments; spoolOldKeys open older ones.
	spoolKey     []byte
	spoolOldKeys [][]byte
	// syncGroups: WithForwardGroupOffsets; checkpointsAlias:
	// WithForwardCheckpoints (both run every syncGroupsInterval).
	syncGroups         bool
	syncGroupsInterval time.Duration
	checkpointsAlias   string
}

// WithUpstream names the upstream Kafka cluster that forwarded topics are
// shipped to: "host:port[,host:port...]".
func WithUpstream(brokers string) Option {
	return optionFunc(func(c *config) {
		c.uplink.brokers = nil
		for _, b := range strings.Split(brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				c.uplink.brokers = append(c.uplink.brokers, b)
			}
		}
	})
}

// WithForward adds topic patterns to forward upstream (repeatable). Each is
// PATTERN[=PREFIX]: a glob ("edge-*", path.Match syntax) or a regexp
// between slashes ("/^(a|b)\.logs$/", matched against the whole name),
// optionally followed by "=prefix": the upstream topic is then
// prefix+name. The first matching pattern wins. Records of a forwarded
// topic are held in a disk spool until the upstream acknowledges them.
func WithForward(patterns ...string) Option {
	return optionFunc(func(c *config) { c.uplink.forward = append(c.uplink.forward, patterns...) })
}

// WithUpstreamTLS enables TLS to the upstream with cfg (nil: no TLS).
func WithUpstreamTLS(cfg *tls.Config) Option {
	return optionFunc(func(c *config) { c.uplink.tls = cfg })
}

// WithUpstreamSASL authenticates to the upstream with mechanism "PLAIN",
// "SCRAM-SHA-256" or "SCRAM-SHA-512".
func WithUpstreamSASL(mechanism, user, password string) Option {
	return optionFunc(func(c *config) { c.uplink.mechanism, c.uplink.user, c.uplink.pass = mechanism, user, password })
}

// WithUpstreamClientOpts appends kgo options to the upstream client
// (tuning, tests).
func WithUpstreamClientOpts(opts ...kgo.Opt) Option {
	return optionFunc(func(c *config) { c.uplink.clientOpts = append(c.uplink.clientOpts, opts...) })
}

// WithSpoolMaxBytes bounds each forwarded partition's spool (default
// 1 GiB). From 90 % full, produce responses throttle clients; when full,
// produce fails with the retriable KAFKA_STORAGE_ERROR.
func WithSpoolMaxBytes(n int64) Option {
	return optionFunc(func(c *config) { c.uplink.spoolMax = n })
}

// WithSpoolEncryptionKey encrypts the spool of forwarded topics at rest
// with AES-256-GCM under key (32 bytes; spool.ParseKey reads the forms an
// operator writes to a file). Every segment is sealed with its header as
// associated data, so neither its records nor its header can be read or
// edited without the key. previous are older keys, for a rotation:
// segments sealed under them stay readable until they are shipped and
// deleted, while new segments use key. Starting with a key that opens
// neither the oldest nor the newest encrypted segment fails, naming the
// segment; so does starting without a key when the spool holds encrypted
// segments. Only the spool is encrypted: the local log of every topic,
// forwarded or not, is stored as Kafka stores it (see README, Edge).
func WithSpoolEncryptionKey(key []byte, previous ...[]byte) Option {
	return optionFunc(func(c *config) {
		c.uplink.spoolKey = append([]byte(nil), key...)
		c.uplink.spoolOldKeys = nil
		for _, k := range previous {
			c.uplink.spoolOldKeys = append(c.uplink.spoolOldKeys, append([]byte(nil), k...))
		}
	})
}

// WithForwardGroupOffsets makes consumer groups able to move upstream, as
// MirrorMaker 2's sync.group.offsets.enabled: every interval (0: 60 s, MM2's
// default) each local group's committed offsets on forwarded topics are
// translated to upstream offsets and committed to the group of the same
// name upstream, on the upstream topic name, while that group has no
// members and never backwards. A consumer pointed at the upstream then
// resumes where it was here: exactly where the offset lies in a batch
// already shipped, else at the end of what was shipped (it re-reads the
// records not shipped yet). Broker.ForwardGroupOffsets shows the last pass.
func WithForwardGroupOffsets(interval time.Duration) Option {
	return optionFunc(func(c *config) {
		c.uplink.syncGroups, c.uplink.syncGroupsInterval = true, interval
	})
}

// WithForwardCheckpoints writes MirrorMaker 2 checkpoints upstream: every
// interval (0: 60 s, MM2's emit.checkpoints.interval.seconds; one interval
// with WithForwardGroupOffsets, the last given wins) each local group's
// committed offsets on forwarded topics, translated as
// WithForwardGroupOffsets translates them, are written to the upstream
// topic alias+".checkpoints.internal" (created compacted, one partition)
// in MM2's format, so consumers and tools that move groups with MM2
// (RemoteClusterUtils.translateOffsets with alias as the source cluster)
// find where to resume upstream. Unlike WithForwardGroupOffsets it changes
// no upstream group.
func WithForwardCheckpoints(alias string, interval time.Duration) Option {
	return optionFunc(func(c *config) {
		c.uplink.checkpointsAlias, c.uplink.syncGroupsInterval = alias, interval
	})
}

// HTTP endpoints.

// httpConfig holds WithHTTPAddr and WithHTTPAddrAny; the listener is in
// http.go.
type httpConfig struct {
	addr string
	any  bool
}

// WithHTTPAddr serves the broker's HTTP side on addr: the web console at
// /, its JSON API under /api/, Prometheus metrics at /metrics, /healthz
// (200 while the process is up) and /readyz (200 once storage is recovered
// and every listener bound, 503 before and while shutting down). Port 0
// picks a free port (see Broker.HTTPAddr). Default: off.
//
// The console can delete topics and move offsets and asks for no
// password, so it stays on loopback unless told otherwise: an address
// with only a port (":8080") listens on 127.0.0.1, and the wildcard hosts
// 0.0.0.0 and :: are refused unless WithHTTPAddrAny is given too (with
// it, ":8080" means every interface). A named host or address listens
// there.
func WithHTTPAddr(addr string) Option {
	return optionFunc(func(c *config) { c.http.addr = addr })
}

// WithHTTPAddrAny allows WithHTTPAddr to listen on every interface (the
// console is then reachable by anyone who can reach the machine).
func WithHTTPAddrAny() Option {
	return optionFunc(func(c *config) { c.http.any = true })
}

// WithMetricsAddr serves Prometheus metrics (text format) at
// http://addr/metrics: requests per API, produced and fetched bytes, open
// connections, and per forwarded partition the forwarding lag, spool bytes
// and pressure, records forwarded and upstream errors. Port 0 picks a free
// port (see Broker.MetricsAddr). Default: no metrics endpoint.
func WithMetricsAddr(addr string) Option {
	return optionFunc(func(c *config) { c.metricsAddr = addr })
}

// adminConfig holds WithAdminAddr and WithAdminToken.
type adminConfig struct {
	addr  string
	token string
}

// WithAdminAddr serves the control API (faults, inspection, waits,
// seeding; see the README's reference) at http://addr/v1/..., with
// /healthz and /metrics beside it. Port 0 picks a free port (see
// Broker.AdminAddr). A port alone (":9644") means 127.0.0.1; any other
// address than loopback needs WithAdminToken. Default: off.
func WithAdminAddr(addr string) Option {
	return optionFunc(func(c *config) { c.admin.addr = addr })
}

// WithAdminToken makes the control API require "Authorization: Bearer
// <token>" on every /v1/ request. Required when WithAdminAddr is not a
// loopback address.
func WithAdminToken(token string) Option {
	return optionFunc(func(c *config) { c.admin.token = token })
}

// schemaRegistryConfig holds WithSchemaRegistry and WithSchemaRegistryAny;
// the registry is started in schemaregistry.go.
type schemaRegistryConfig struct {
	addr string
	any  bool
	auth bool
}

// WithSchemaRegistry serves a Confluent-compatible schema registry (the
// REST API that Avro, Protobuf and JSON Schema serializers use) on addr,
// over HTTP. Its schemas are kept in the broker's own compacted _schemas
// topic, so they survive restarts as any topic does. Port 0 picks a free
// port (see Broker.SchemaRegistryURL). Default: off.
//
// The registry asks for no password, so, as the console, it stays on
// loopback unless told otherwise: an address with only a port (":8081")
// listens on 127.0.0.1, and the wildcard hosts 0.0.0.0 and :: are refused
// unless WithSchemaRegistryAny is given too.
func WithSchemaRegistry(addr string) Option {
	return optionFunc(func(c *config) { c.schemaRegistry.addr = addr })
}

// WithSchemaRegistryAny allows WithSchemaRegistry to listen on every
// interface.
func WithSchemaRegistryAny() Option {
	return optionFunc(func(c *config) { c.schemaRegistry.any = true })
}

// WithSchemaRegistryAuth makes every request to the schema registry
// authenticate with HTTP basic credentials: a user and password of the
// broker's SCRAM users (WithSASL's, and those created with
// AlterUserScramCredentials, e.g. minikafka user create), as Redpanda's
// registry does. Without it the registry asks for no password.
//
// With WithAuthorizer too, each request is also decided by the broker's
// ACLs, the user being User:<name>: a subject's rights are those of its
// topic (orders-value: topic orders; WRITE to register, READ to read),
// the global config and mode the cluster's; a refusal is 403 with
// Confluent's 40301. Package internal/schemaregistry's doc has the table.
func WithSchemaRegistryAuth() Option {
	return optionFunc(func(c *config) { c.schemaRegistry.auth = true })
}

// A simulated cluster.

type clusterOptions struct {
	nodes             int
	racks             []string
	replicationFactor int16
	rackAwareSelector bool
	autoRebalance     time.Duration // 0: auto.leader.rebalance.enable off
}

// WithNodes makes the broker a simulated cluster of n nodes (default 1):
// one process and one data directory, every node with its own node ID
// (WithNodeID, WithNodeID+1, …) and its own listeners on its own ports.
// Topics take a replication factor up to n, partitions have leaders,
// replicas and ISRs spread over the nodes, and requests sent to the wrong
// node are refused as Kafka refuses them, so clients meet leader moves,
// stopped nodes and coordinator moves (StopNode, MoveLeader,
// MoveCoordinator, SetISR). The data is stored once: a stopped node loses
// nothing. It is a simulation for tests, not a distributed broker; the
// uplink (WithUpstream) is the way to a real cluster.
//
// A listener with a fixed port gives node i that port plus i; port 0
// gives each node a free port.
func WithNodes(n int) Option {
	return optionFunc(func(c *config) { c.cluster.nodes = n })
}

// WithRacks sets each node's broker.rack, in node order.
func WithRacks(racks ...string) Option {
	return optionFunc(func(c *config) { c.cluster.racks = append([]string(nil), racks...) })
}

// WithDefaultReplicationFactor is Kafka's default.replication.factor
// (default 1): the replication factor of topics created without one.
func WithDefaultReplicationFactor(rf int16) Option {
	return optionFunc(func(c *config) { c.cluster.replicationFactor = rf })
}

// WithRackAwareReplicaSelector is Kafka's replica.selector.class set to
// RackAwareReplicaSelector (KIP-392): a consumer that names its rack
// (client.rack) is sent to an in-sync replica in that rack to fetch.
func WithRackAwareReplicaSelector() Option {
	return optionFunc(func(c *config) { c.cluster.rackAwareSelector = true })
}

// WithAutoLeaderRebalance is Kafka's auto.leader.rebalance.enable with
// leader.imbalance.check.interval.seconds: every interval, leadership
// goes back to each partition's preferred replica. Off by default here
// (Kafka's default is on, every 300 s), so a test's moves stay put.
func WithAutoLeaderRebalance(interval time.Duration) Option {
	return optionFunc(func(c *config) { c.cluster.autoRebalance = interval })
}

// Tests.

// WithStorageFaults puts the data dir behind StorageFaults switches
// (Broker.StorageFaults; over the control API POST /v1/storage), for tests
// of how clients fare when the broker's disk fails. Every file operation
// pays one atomic load per switch; leave it off in production.
func WithStorageFaults() Option {
	return optionFunc(func(c *config) { c.storageFaults = true })
}

// waitLimit bounds the Wait methods whose context has no deadline
// (WithWaitTimeout).
type waitLimit struct {
	timeout  time.Duration // 0: none
	deadline time.Time     // zero: none
}

// WithWaitTimeout bounds every Wait method (WaitTopic, WaitHighWatermark,
// WaitGroupStable, WaitLagZero, WaitTransaction) called with a context
// that has no deadline of its own: it gives up after timeout, or at
// deadline if that comes first, with an error saying what it last saw.
// Zero values mean no bound (the default: a wait lasts as long as its
// context). minikafkatest.New sets it from the test's deadline.
func WithWaitTimeout(timeout time.Duration, deadline time.Time) Option {
	return optionFunc(func(c *config) { c.waitLimit = waitLimit{timeout, deadline} })
}
