package broker

// Narrow methods for the other subsystems (the group coordinator sees
// them through groupsView, groups.go):
//
//	(*Broker).TopicExists(name string) bool
//	(*Broker).PartitionCount(name string) (int32, bool)
//	(*Broker).TopicID(name string) ([16]byte, bool)
//	(*Broker).TopicName(id [16]byte) (string, bool)
//	(*Broker).OnTopicDeleted(fn func(name string, id [16]byte))
//	(*Broker).Logger() *slog.Logger, (*Broker).Now() time.Time, (*Broker).NodeID() int32
//	(*Broker).Advertised() (host string, port int32)
//	(*Broker).AdvertisedFor(req *protocol.Request) (host string, port int32)
//
// Lifecycle: New opens the group coordinator (broker/internal/groups) with
// the rest of storage; Close closes it before the partition logs. Its
// handlers (08–16, 42, 47, 68, 69) reach it as b.groups.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/broker/internal/cleanstop"
	"github.com/minikafka/minikafka/broker/internal/cluster"
	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/broker/internal/dtoken"
	"github.com/minikafka/minikafka/broker/internal/faults"
	"github.com/minikafka/minikafka/broker/internal/fetchsession"
	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/broker/internal/listeners"
	"github.com/minikafka/minikafka/broker/internal/producers"
	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/broker/internal/reqlog"
	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/broker/internal/telemetry"
	"github.com/minikafka/minikafka/broker/internal/txn"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/ratelog"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// Config configures a Broker.
type Config struct {
	// DataDir holds the topics and every other piece of broker state.
	DataDir string
	// FS is the filesystem under DataDir; nil means the OS. vfs.NewMem()
	// gives an in-memory broker.
	FS vfs.FS
	// NodeID is this broker's node ID (Kafka node.id) and Rack its
	// broker.rack, when Nodes is empty.
	NodeID int32
	Rack   string
	// Nodes, when it has more than one, makes the broker a simulated
	// cluster of these nodes (cluster.go); the first is the controller.
	Nodes []NodeSpec
	// DefaultReplicationFactor is Kafka's default.replication.factor
	// (default 1), for topics created without one.
	DefaultReplicationFactor int16
	// RackAwareReplicaSelector is Kafka's replica.selector.class set to
	// RackAwareReplicaSelector: a consumer that names its rack is told to
	// fetch from an in-sync replica in that rack (KIP-392).
	RackAwareReplicaSelector bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable: every
	// LeaderImbalanceCheckInterval (default 300 s), leadership goes back
	// to each partition's preferred replica.
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration
	// AdvertisedHost and AdvertisedPort are what Metadata hands clients.
	AdvertisedHost string
	AdvertisedPort int32
	// Listeners, when set, replaces AdvertisedHost/Port: each request is
	// answered with the advertised address of the listener it came in on
	// (Kafka's advertised.listeners), and SASL is required only on the
	// listeners that ask for it. Empty: one listener, SASL per Config.SASL.
	Listeners []Listener
	// ClusterID is reported in Metadata and DescribeCluster; empty means
	// one is generated on first start and persisted in DataDir.
	ClusterID string
	// DefaultPartitions is Kafka's num.partitions (default 1).
	DefaultPartitions int32
	// AutoCreateTopics is Kafka's auto.create.topics.enable.
	AutoCreateTopics bool
	// Sync is the durability policy of every partition log.
	Sync logstore.SyncPolicy
	// Logger receives one line per rejected request, with the client
	// address; nil discards.
	Logger *slog.Logger
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms.
	GroupInitialRebalanceDelay time.Duration
	Groups                     GroupConfig // the other group coordinator settings (groups.Settings)
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// RetentionCheckInterval is log.retention.check.interval.ms (default
	// 5 minutes).
	RetentionCheckInterval time.Duration
	// CleanerBackoff is log.cleaner.backoff.ms (default 15 s) and
	// CleanerDedupeBufferSize log.cleaner.dedupe.buffer.size (default
	// 128 MiB), for the log cleaner of compacted topics (cleaner.go).
	CleanerBackoff          time.Duration
	CleanerDedupeBufferSize int
	// Uplink, when non-nil, forwards matching topics to an upstream
	// cluster through per-partition spools (broker/uplink).
	Uplink *uplink.Config
	// SASL, when non-nil, requires every client connection to
	// authenticate first (sasl.go).
	SASL *SASLConfig
	// Authorizer, when non-nil, enforces ACLs (acls.go).
	Authorizer *AuthorizerConfig
	// SSLPrincipalMappingRules is Kafka's ssl.principal.mapping.rules: how
	// a TLS client certificate's subject becomes the principal name of a
	// connection without SASL, for ACLs and quotas; "" is DEFAULT (the
	// whole subject DN).
	SSLPrincipalMappingRules string
	// PassCompressedRecords opts out of checking the records inside
	// compressed produce batches (broker/internal/recordcheck): they are stored
	// after header, CRC and stream-header checks only, so a batch that
	// consumers cannot decode may be acknowledged. Compacted and forwarded
	// topics are always fully validated.
	PassCompressedRecords bool
	// QuotaWindowSamples and QuotaWindowSize are Kafka's quota.window.num
	// (default 11) and quota.window.size.seconds (default 1 s): the
	// windowed rate client quotas are measured with (quotas.go).
	QuotaWindowSamples int
	QuotaWindowSize    time.Duration
	// ClientMetrics is the subscription every client is given for its
	// KIP-714 metrics when no CLIENT_METRICS subscription matches it
	// (71_get_telemetry_subscriptions.go, internal/configs): metric name
	// prefixes, "*" for all; nil or empty asks for none. Interval is the
	// push interval (default 30 s), TelemetryMaxBytes Kafka's
	// telemetry.max.bytes (default 1 MiB).
	ClientMetrics         []string
	ClientMetricsInterval time.Duration
	TelemetryMaxBytes     int32
}

// Broker is a single-node Kafka broker: the API table, topics, partition
// logs and producer state. It implements protocol.Handler.
type Broker struct {
	metadataChanges atomic.Int64 // topic creations, deletions and partition additions (55_describe_quorum.go)
	cfg             Config
	cl              *cluster.State // the nodes and coordinator slots (cluster.go)
	fs              vfs.FS
	log             *slog.Logger
	rl              *ratelog.Limiter // client-caused lines (logReq)
	configs         *configs.Manager // config resources, dynamic broker configs (broker/internal/configs)
	now             func() time.Time
	files           *logstore.FileCache

	clusterID string
	lis       listeners.Set // advertised address, named listeners (broker/internal/listeners)

	// topics is a copy-on-write table: readers load it without locking,
	// writers replace it while holding adminMu.
	topics  atomic.Pointer[topicTable]
	adminMu sync.Mutex

	producers *producers.IDs

	groups *groups.Coordinator
	share  *share.Coordinator // share groups (KIP-932), share.go

	fetchSessions *fetchsession.Cache // broker/internal/fetchsession

	// scram holds the SCRAM credentials, those changed through
	// AlterUserScramCredentials over the start-up ones (internal/sasl).
	scram *sasl.Store
	// tokens holds the delegation tokens (internal/dtoken); nil without
	// Config.SASL.
	tokens *dtoken.Manager

	// txns is the transaction coordinator (broker/internal/txn, wired in txn.go).
	txns *txnCoordinator

	// uplink forwards topics upstream; nil without Config.Uplink.
	uplink *uplinkLink

	// sasl holds the SASL mechanisms and credentials; nil without
	// Config.SASL.
	sasl *sasl.Server

	// quotas are the client quotas (quotas.go); quotaThrottles counts
	// throttled answers.
	quotas *quota.Manager
	acls   *acl.Store // nil: no authorizer
	// cleanStart: the data dir's last broker closed cleanly (its marker
	// was found), so the logs opened at start are durable as they are.
	cleanStart bool
	// cleanListings are the partition directories' file names as the
	// last Close left them (from the marker; broker/internal/cleanstop), used and
	// dropped at start.
	cleanListings  map[string][]string
	mapping        *acl.MappingRules
	quotaThrottles atomic.Uint64
	// telemetry holds the client metrics clients push (KIP-714).
	telemetry *telemetry.Registry

	hookMu    sync.Mutex
	onDeleted []func(name string, id [16]byte)

	faults faults.Set // faults.go, broker/internal/faults
	reqlog reqlog.Log // reqlog.go, broker/internal/reqlog

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
	bg        sync.WaitGroup
}

// New opens (or creates) the broker state under cfg.DataDir, recovering
// every partition log, and starts the retention ticker.
func New(cfg Config) (*Broker, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.DataDir == "" {
		return nil, errors.New("broker: DataDir is required")
	}
	if cfg.DefaultPartitions <= 0 {
		cfg.DefaultPartitions = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetentionCheckInterval <= 0 {
		cfg.RetentionCheckInterval = 5 * time.Minute
	}
	if cfg.AdvertisedHost == "" {
		cfg.AdvertisedHost = "localhost"
	}
	if cfg.AdvertisedPort == 0 {
		cfg.AdvertisedPort = 9092
	}
	b := &Broker{
		cfg:     cfg,
		fs:      cfg.FS,
		log:     cfg.Logger,
		rl:      ratelog.New(cfg.Logger, 0),
		now:     cfg.Now,
		files:   logstore.NewFileCache(logstore.FileCacheSize(maxOpenSegmentFiles)),
		closing: make(chan struct{}),

		fetchSessions: fetchsession.New(fetchsession.MaxSessions),
	}
	if cfg.SASL != nil {
		var err error
		if b.sasl, err = sasl.NewServer(*cfg.SASL, cfg.Now); err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	var err error
	nodes := cfg.Nodes
	if len(nodes) == 0 {
		nodes = []NodeSpec{{ID: cfg.NodeID, Rack: cfg.Rack}}
	}
	if b.cl, err = cluster.New(nodes); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.lis.SetAdvertised(cfg.AdvertisedHost, cfg.AdvertisedPort)
	if len(cfg.Listeners) > 0 {
		if err := b.SetListeners(cfg.Listeners); err != nil {
			return nil, err
		}
	}
	b.topics.Store(&topicTable{byName: map[string]*topic{}, byID: map[[16]byte]*topic{}})

	if err := b.fs.MkdirAll(b.topicsDir(), 0o755); err != nil {
		return nil, fmt.Errorf("broker: creating data dir: %w", err)
	}
	if err := b.openStorage(); err != nil {
		return nil, err
	}
	if b.uplink != nil {
		// Forwarders ship once the transaction coordinator can tell them
		// what is committed.
		b.uplink.start()
	}
	b.bg.Add(2)
	go b.retentionLoop()
	go b.cleanerLoop()
	if cfg.AutoLeaderRebalance && b.cl.Multi() {
		b.bg.Add(1)
		go b.leaderRebalanceLoop() // cluster.go
	}
	return b, nil
}

// openStorage recovers (or, in a fresh directory, creates) the cluster ID,
// producer IDs, topics, the group store and the transaction log. The parts
// are independent files, so they open side by side: in a fresh directory
// each writes and fsyncs a small file and its directory, and fsyncs that
// overlap share the filesystem's journal commits instead of paying one
// each. Only the transaction coordinator's replay needs the topics, and
// waits for them.
func (b *Broker) openStorage() (err error) {
	var (
		wg                     sync.WaitGroup
		idErr, groupErr, txErr error
		coord                  *groups.Coordinator
		txLog                  *txn.Log
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		b.clusterID, idErr = b.loadClusterID()
	}()
	go func() {
		defer wg.Done()
		txLog, txErr = openTxnLog(b)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		if coord, groupErr = newGroupCoordinator(b); groupErr != nil {
			groupErr = fmt.Errorf("broker: starting group coordinator: %w", groupErr)
		}
	}()
	b.telemetry = telemetry.New(telemetry.Config{Metrics: b.cfg.ClientMetrics, Interval: b.cfg.ClientMetricsInterval, MaxBytes: b.cfg.TelemetryMaxBytes})
	b.configs = newConfigs(b)
	b.producers, err = producers.OpenIDs(b.fs, path.Join(b.cfg.DataDir, "producer_ids"))
	if err == nil {
		if b.scram, err = sasl.OpenStore(b.fs, b.cfg.DataDir, b.sasl); err != nil {
			err = fmt.Errorf("broker: %w", err)
		}
	}
	if err == nil && b.sasl != nil {
		sc := b.cfg.SASL
		b.tokens, err = dtoken.Open(b.fs, b.cfg.DataDir, dtoken.Config{Secret: sc.DelegationTokenSecret,
			MaxLifetime: sc.DelegationTokenMaxLifetime, ExpiryTime: sc.DelegationTokenExpiryTime, Now: b.cfg.Now})
		if err != nil {
			err = fmt.Errorf("broker: %w", err)
		} else {
			b.scram.SetTokens(b.tokens)
		}
	}
	if err == nil {
		b.quotas, err = quota.Open(b.fs, b.cfg.DataDir, quota.Window{Samples: b.cfg.QuotaWindowSamples, Size: b.cfg.QuotaWindowSize})
	}
	if err == nil {
		if b.mapping, err = acl.ParseMappingRules(b.cfg.SSLPrincipalMappingRules); err != nil {
			err = fmt.Errorf("broker: ssl.principal.mapping.rules: %v", err)
		}
	}
	if err == nil && b.cfg.Authorizer != nil {
		b.acls, err = acl.Open(b.fs, b.cfg.DataDir, acl.Settings{SuperUsers: b.cfg.Authorizer.SuperUsers, AllowEveryoneIfNoACLFound: b.cfg.Authorizer.AllowEveryoneIfNoACLFound})
	}
	if err == nil {
		err = b.configs.LoadDynamic() // before the topics, whose defaults they are
	}
	if err == nil {
		err = b.configs.LoadClientMetrics()
	}
	if err == nil {
		b.cleanStart, b.cleanListings, err = cleanstop.Take(b.fs, b.cfg.DataDir, b.log)
	}
	if err == nil {
		err = b.loadTopics()
		b.configs.Rebase() // the dynamic broker defaults
		// Logs made from now on have no such history.
		b.cleanStart, b.cleanListings = false, nil
	}
	if err == nil {
		err = cleanstop.Drop(b.fs, b.cfg.DataDir)
	}
	wg.Wait()
	if err = errors.Join(err, idErr, groupErr, txErr); err == nil {
		b.groups = coord
		if b.cfg.Uplink != nil {
			// Before the transaction log's replay: the transactions of
			// forwarded partitions live in their spools.
			b.uplink, err = startUplink(b, *b.cfg.Uplink)
		}
	}
	if err == nil {
		b.txns, err = newTxnCoordinator(b, txLog)
		if err != nil {
			err = fmt.Errorf("broker: starting transaction coordinator: %w", err)
		}
	}
	if err == nil {
		b.share, err = newShareCoordinator(b)
	}
	if err != nil {
		if coord != nil {
			coord.Close()
		}
		if txLog != nil && b.txns == nil {
			txLog.Close()
		}
		if b.uplink != nil {
			b.uplink.close()
			b.uplink = nil
		}
		_, _ = b.closeLogs()
	}
	return err
}

// SetAdvertised changes the address Metadata and DescribeCluster hand out;
// used after binding port 0.
func (b *Broker) SetAdvertised(host string, port int32) { b.lis.SetAdvertised(host, port) }

// Advertised returns the advertised host and port (the first listener's).
func (b *Broker) Advertised() (string, int32) { return b.lis.Advertised() }

// Listener is one named listener as clients see it (an entry of Kafka's
// advertised.listeners and listener.security.protocol.map).
type Listener = listeners.Listener

// SetListeners replaces the listeners (after binding port 0); the first
// one also becomes Advertised.
func (b *Broker) SetListeners(ls []Listener) error { return b.lis.Set(ls, b.sasl != nil) }

// Listeners returns the listeners set by Config.Listeners or
// SetListeners; nil with the single Advertised listener.
func (b *Broker) Listeners() []Listener { return b.lis.List() }

// listener finds the listener req came in on.
func (b *Broker) listener(req *protocol.Request) (Listener, bool) {
	if req.Conn == nil {
		return Listener{}, false
	}
	return b.lis.Find(req.Conn.Listener, req.Conn.Node, b.cl.Multi())
}

// addrFor is node's address for clients of req's listener (on its first
// listener when it has none of that name).
func (b *Broker) addrFor(req *protocol.Request, node int32) (string, int32, bool) {
	name := ""
	if req != nil && req.Conn != nil {
		name = req.Conn.Listener
	}
	return b.lis.NodeAddr(node, name, b.cl.Nodes()[0].ID, b.cl.Multi())
}

// AdvertisedFor is the address to hand out in answer to req: its
// listener's advertised address, as Kafka answers with the endpoint of
// the listener a request came in on. Requests from no known listener (the
// embedding program's own) get Advertised.
func (b *Broker) AdvertisedFor(req *protocol.Request) (string, int32) {
	if l, ok := b.listener(req); ok {
		return l.Host, l.Port
	}
	return b.Advertised()
}

// listenerWantsSASL reports whether req's listener requires SASL
// (listeners.Set.WantsSASL).
func (b *Broker) listenerWantsSASL(req *protocol.Request) bool {
	if req.Conn == nil {
		return b.lis.WantsSASL("", 0, false, b.cl.Multi())
	}
	return b.lis.WantsSASL(req.Conn.Listener, req.Conn.Node, true, b.cl.Multi())
}

// NodeID is this broker's node ID.
func (b *Broker) NodeID() int32 { return b.cfg.NodeID }

// ClusterID is the cluster ID reported to clients.
func (b *Broker) ClusterID() string { return b.clusterID }

// Logger is the broker's logger.
func (b *Broker) Logger() *slog.Logger { return b.log }

// Now is the broker's clock.
func (b *Broker) Now() time.Time { return b.now() }

// TopicExists reports whether the topic exists.
func (b *Broker) TopicExists(name string) bool {
	_, ok := b.topics.Load().byName[name]
	return ok
}

// PartitionCount returns the topic's partition count.
func (b *Broker) PartitionCount(name string) (int32, bool) {
	t, ok := b.topics.Load().byName[name]
	if !ok {
		return 0, false
	}
	return int32(len(t.partitions())), true
}

// TopicID returns the topic's ID.
func (b *Broker) TopicID(name string) ([16]byte, bool) {
	t, ok := b.topics.Load().byName[name]
	if !ok {
		return [16]byte{}, false
	}
	return t.id, true
}

// TopicName returns the name of the topic with this ID.
func (b *Broker) TopicName(id [16]byte) (string, bool) {
	t, ok := b.topics.Load().byID[id]
	if !ok {
		return "", false
	}
	return t.name, true
}

// OnTopicDeleted registers fn to be called (synchronously, after the topic
// is gone from the table and its data removed) whenever a topic is deleted.
func (b *Broker) OnTopicDeleted(fn func(name string, id [16]byte)) {
	b.hookMu.Lock()
	b.onDeleted = append(b.onDeleted, fn)
	b.hookMu.Unlock()
}

func (b *Broker) topicDeleted(name string, id [16]byte) {
	b.hookMu.Lock()
	hooks := slices.Clone(b.onDeleted)
	b.hookMu.Unlock()
	for _, fn := range hooks {
		fn(name, id)
	}
}

// Serve dispatches one request through the API table. It implements
// protocol.Handler.
func (b *Broker) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	if r := b.reqlog.Ring(); r != nil {
		return b.serveLogged(ctx, req, r)
	}
	return b.serve(ctx, req)
}

func (b *Broker) serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	if reply, ok := b.saslGate(ctx, req); !ok {
		return reply
	}
	a := lookupAPI(req.Key)
	if a == nil {
		b.logBad(req, "unsupported api key")
		return protocol.Reply{Err: fmt.Errorf("unsupported api key %d", req.Key)}
	}
	if req.Key != 18 && (req.Version < a.min || req.Version > a.max) {
		// Kafka treats a version it does not support as an invalid
		// request and closes the connection; only ApiVersions answers.
		b.logBad(req, "unsupported version", "min", a.min, "max", a.max)
		return protocol.Reply{Err: fmt.Errorf("unsupported version %d of api key %d", req.Version, req.Key)}
	}
	select {
	case <-b.closing:
		return protocol.Reply{Err: errors.New("broker closed")}
	default:
	}
	if fs := b.faults.Active(); fs != nil {
		return b.serveFaults(ctx, req, a, fs)
	}
	return b.dispatch(ctx, req, a)
}

// dispatch runs a's handler, through the client quotas when any is set
// (quotas.go). Faults that pass a request on call it too, so an injected
// delay or callback does not bypass the quotas.
func (b *Broker) dispatch(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	if b.quotas.On() && req.Conn != nil && req.Conn.FromNetwork() {
		return b.serveQuota(ctx, req, a)
	}
	return b.handle(ctx, req, a)
}

// handle runs a's handler, behind the authorizer's whole-request checks
// when it is on.
func (b *Broker) handle(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	if b.acls != nil {
		return b.serveAuthorized(ctx, req, a)
	}
	return b.serveRouted(ctx, req, a)
}

// serveRouted runs a's handler unless the request is about groups or
// transactions another node coordinates (cluster.go): as in Kafka, that
// is judged after the authorizer's whole-request checks.
func (b *Broker) serveRouted(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	if b.cl.Multi() {
		if reply, ok := b.routeCoordinated(req); ok {
			return reply
		}
	}
	return a.fn(b, ctx, req)
}

// logBad logs one rejected request with the client's address, rate-limited
// per message (internal/ratelog): a client repeating a bad request costs a
// first line and a count per interval, not a line per request.
func (b *Broker) logBad(req *protocol.Request, msg string, args ...any) {
	b.logReqLimited(slog.LevelWarn, req, msg, args...)
}

// logRoutine logs, at debug level, an error answer that is part of normal
// client life (a version probe, a fetch racing a topic deletion) and would
// flood the log at warn level.
func (b *Broker) logRoutine(req *protocol.Request, msg string, args ...any) {
	b.logReq(slog.LevelDebug, req, msg, args...)
}

func (b *Broker) logReq(level slog.Level, req *protocol.Request, msg string, args ...any) {
	if !b.log.Enabled(context.Background(), level) {
		return
	}
	b.log.Log(context.Background(), level, msg, reqArgs(req, args)...)
}

// logReqLimited is logReq through the rate limiter, for lines a client can
// cause at will.
func (b *Broker) logReqLimited(level slog.Level, req *protocol.Request, msg string, args ...any) {
	if !b.log.Enabled(context.Background(), level) {
		return
	}
	b.rl.Log(context.Background(), level, msg, reqArgs(req, args)...)
}

func reqArgs(req *protocol.Request, args []any) []any {
	var remote string
	if req.Conn != nil && req.Conn.Remote != nil {
		remote = req.Conn.Remote.String()
	}
	return append([]any{"client", remote, "api", req.Key, "version", req.Version}, args...)
}

// Close stops background work and closes every partition log; it is
// idempotent.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		close(b.closing)
		b.bg.Wait()
		b.rl.Close()
		var errs []error
		if b.uplink != nil {
			errs = append(errs, b.uplink.close())
		}
		errs = append(errs, b.txns.close())
		errs = append(errs, b.groups.Close())
		if b.share != nil {
			errs = append(errs, b.share.Close())
		}
		listings, err := b.closeLogs()
		errs = append(errs, err)
		b.closeErr = errors.Join(errs...)
		if b.closeErr == nil {
			b.closeErr = cleanstop.Mark(b.fs, b.cfg.DataDir, listings)
		}
	})
	return b.closeErr
}

// closeLogs closes every partition log and returns the listing of each
// directory whose log closed, for the clean-shutdown marker.
func (b *Broker) closeLogs() (map[string][]string, error) {
	b.adminMu.Lock()
	defer b.adminMu.Unlock()
	// Logs close in parallel: each may fsync its active segment, and
	// with thousands of partitions one after another is seconds of
	// waiting on the device, which overlapping requests shorten.
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	work := make(chan *partition)
	listings := map[string][]string{}
	for range closeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if err := p.log.Close(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("closing %s-%d: %w", p.topic.name, p.index, err))
					mu.Unlock()
					continue
				}
				// For the clean-shutdown marker: the next start need
				// not list the directory (broker/internal/cleanstop); without a
				// listing, it does.
				if names, err := b.fs.ReadDir(p.log.Dir()); err == nil {
					mu.Lock()
					listings[cleanstop.Key(b.cfg.DataDir, p.log.Dir())] = names
					mu.Unlock()
				}
			}
		}()
	}
	for _, t := range b.topics.Load().byName {
		for _, p := range t.partitions() {
			work <- p
		}
	}
	close(work)
	wg.Wait()
	return listings, errors.Join(errs...)
}

// closeWorkers is how many logs close at once.
const closeWorkers = 16

// retentionLoop enforces retention.ms / retention.bytes on a ticker, as
// Kafka's log.retention.check.interval.ms does.
func (b *Broker) retentionLoop() {
	defer b.bg.Done()
	tk := time.NewTicker(b.cfg.RetentionCheckInterval)
	defer tk.Stop()
	for {
		select {
		case <-b.closing:
			return
		case <-tk.C:
			b.enforceRetention()
		}
	}
}

func (b *Broker) enforceRetention() {
	now := b.now()
	for _, t := range b.topics.Load().byName {
		for _, p := range t.partitions() {
			if _, err := p.log.EnforceRetention(now); err != nil && !errors.Is(err, logstore.ErrClosed) {
				b.log.Error("enforcing retention", "topic", t.name, "partition", p.index, "err", err)
			}
		}
	}
}

// loadClusterID returns cfg.ClusterID, or the persisted one, or a new one
// (persisted), in Kafka's 22-character base64url form.
func (b *Broker) loadClusterID() (string, error) {
	if b.cfg.ClusterID != "" {
		return b.cfg.ClusterID, nil
	}
	p := path.Join(b.cfg.DataDir, "cluster_id")
	if data, err := readFile(b.fs, p); err == nil && len(data) > 0 {
		return string(data), nil
	}
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	id := uuidString(u)
	if err := vfs.WriteFileAtomic(b.fs, p, []byte(id), 0o644); err != nil {
		return "", fmt.Errorf("broker: persisting cluster id: %w", err)
	}
	return id, nil
}

// maxOpenSegmentFiles is the least bound on descriptors held by segment
// files across all partitions (idle ones are closed LRU-first); the bound
// is half the open-file limit when that is more (logstore.FileCacheSize),
// so that appends to many partitions do not each open and close a file.
const maxOpenSegmentFiles = 512
