package minikafka

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// Option configures Start. Options apply in order; a later option
// overrides an earlier one that sets the same thing (WithInMemory and
// WithDataDir override each other).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// TopicSpec is a topic created at Start.
type TopicSpec struct {
	Name       string
	Partitions int32
}

type config struct {
	listenAddr               string
	advertisedAddr           string
	dataDir                  string
	inMemory                 bool
	fs                       vfs.FS
	nodeID                   int32
	cluster                  clusterOptions // options_cluster.go
	clusterID                string
	partitions               int32
	autoCreate               bool
	durability               string
	sync                     *logstore.SyncPolicy
	logger                   *slog.Logger
	rebalanceDelay           time.Duration
	maxRequest               int32
	sendBuffer               int
	idleTimeout              time.Duration
	topics                   []TopicSpec
	listener                 net.Listener
	uplink                   uplinkConfig             // options_uplink.go
	security                 securityConfig           // options_security.go
	metricsAddr              string                   // WithMetricsAddr; the endpoint is in metrics.go
	http                     httpConfig               // options_http.go; the listener is in http.go
	admin                    adminConfig              // options_http.go; the control API is admin.go
	schemaRegistry           schemaRegistryConfig     // options_schemaregistry.go
	validation               validation               // options.go
	cleaner                  cleanerConfig            // options.go
	quotaWindow              quotaWindow              // options_quota.go
	waitLimit                waitLimit                // inspect.go
	clientMetrics            clientMetrics            // options_telemetry.go
	storageFaults            bool                     // faults.go
	authorizer               *broker.AuthorizerConfig // options_security.go; nil: no ACLs
	sslPrincipalMappingRules string                   // options_security.go

	// The group coordinator settings (options_groups.go).
	groups groupsConfig

	listeners listenersConfig // WithListeners
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

// WithListenAddr sets the address to listen on (host:port; port 0 picks
// a free port, reported by Addrs). Default "127.0.0.1:0".
func WithListenAddr(addr string) Option {
	return optionFunc(func(c *config) { c.listenAddr, c.listeners.set = addr, false })
}

// WithListener serves on ln instead of listening on WithListenAddr's
// address (a test seam: custom or in-process transports). The broker owns
// ln from then on and closes it on Close, also when Start fails.
func WithListener(ln net.Listener) Option {
	return optionFunc(func(c *config) { c.listener = ln })
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

// WithDataDir stores topics and state under dir (created if missing).
func WithDataDir(dir string) Option {
	return optionFunc(func(c *config) { c.dataDir, c.inMemory = dir, false })
}

// WithInMemory keeps everything in memory: nothing survives Close. This
// is the default when no data dir is given.
func WithInMemory() Option {
	return optionFunc(func(c *config) { c.dataDir, c.inMemory = "", true })
}

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

// WithNodeID sets the broker's node ID (Kafka node.id). Default 0.
func WithNodeID(id int32) Option {
	return optionFunc(func(c *config) { c.nodeID = id })
}

// WithClusterID fixes the cluster ID; by default one is generated on first
// start and kept in the data dir.
func WithClusterID(id string) Option {
	return optionFunc(func(c *config) { c.clusterID = id })
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

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithMaxRequestBytes caps a request frame (Kafka socket.request.max.bytes,
// default 100 MiB).
func WithMaxRequestBytes(n int32) Option {
	return optionFunc(func(c *config) { c.maxRequest = n })
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

// WithTopic creates a topic at Start (if it does not exist yet).
func WithTopic(name string, partitions int32) Option {
	return optionFunc(func(c *config) {
		c.topics = append(c.topics, TopicSpec{Name: name, Partitions: partitions})
	})
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

	errs = append(errs, c.groups.check()...)         // options_groups.go
	errs = append(errs, c.cleaner.validate()...)     // options.go
	errs = append(errs, c.http.check()...)           // options_http.go
	errs = append(errs, c.admin.check()...)          // options_http.go
	errs = append(errs, c.schemaRegistry.check()...) // options_schemaregistry.go

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
