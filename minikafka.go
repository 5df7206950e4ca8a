package minikafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/protocol"
)

// closeGrace bounds how long Close waits for requests already read (a
// long-poll fetch, an acks=all produce waiting for fsync) before it closes
// their connections anyway.
const closeGrace = 5 * time.Second

// Broker is a running broker. Its methods are safe for concurrent use.
type Broker struct {
	brk        *broker.Broker
	srv        *protocol.Server
	log        *slog.Logger
	listen     net.Addr
	advertised string
	dataDir    string        // "" in memory
	metrics    *metrics      // metrics.go
	http       *httpSide     // http.go; nil without WithHTTPAddr
	admin      *adminSide    // admin.go; nil without WithAdminAddr
	registry   *registrySide // schemaregistry.go; nil without WithSchemaRegistry
	started    time.Time
	osDataDir  string         // dataDir when it is on the OS filesystem
	storage    *StorageFaults // WithStorageFaults; nil without
	waitLimit  waitLimit      // inspect.go

	listeners []ListenerInfo     // listeners.go
	srvs      []*protocol.Server // one per listener (of every node); srv is the first

	nodeMu  sync.Mutex
	stopped map[int32]bool // nodes StopNode took down (cluster.go)

	served    chan error
	unlock    func() // releases the data dir lock
	closeOnce sync.Once
	closeErr  error
}

// Start recovers the storage, binds the listener and starts serving. It
// returns once clients can connect. ctx bounds startup only: cancelling it
// later does not stop the broker (Close does).
func Start(ctx context.Context, opts ...Option) (_ *Broker, err error) {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	// The broker owns WithListener's listener from here on, so a failed
	// Start closes it too.
	st := &starting{own: c.listener}
	defer func() {
		if err != nil {
			st.release()
		}
	}()

	s, err := c.resolve()
	if err != nil {
		return nil, err
	}
	// Bind first: a busy port fails fast, before storage recovery.
	if err = st.bindListeners(s.plans, s.sec, c.cluster.count(), c.nodeID); err != nil {
		return nil, err
	}
	// Before recovery, so /healthz answers and /readyz says 503 meanwhile.
	if st.http, err = listenHTTP(c.http, s.log); err != nil {
		return nil, err
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	if err = st.lock(s); err != nil {
		return nil, err
	}
	if err = st.openBroker(&c, s); err != nil {
		return nil, err
	}
	b, err := st.serve(&c, s)
	if err != nil {
		return nil, err
	}
	// After Serve started: Close waits for it.
	if err = b.metrics.start(c.metricsAddr, b.srvs...); err != nil {
		return nil, err
	}
	if err = b.createTopics(ctx, c.topics); err != nil {
		return nil, err
	}
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	// Before the console, which shows the registry's subjects.
	if b.registry, err = startRegistry(c.schemaRegistry, c.authorizer, b); err != nil {
		return nil, err
	}
	if err = b.http.attach(b); err != nil { // ready from here on
		return nil, err
	}
	if b.admin, err = listenAdmin(c.admin, b); err != nil {
		return nil, err
	}
	if b.admin != nil {
		b.brk.EnableRequestLog(defaultRequestLog) // faults.go
	}
	return b, nil
}

// starting is what Start has opened so far, for release to close when a
// later step fails.
type starting struct {
	own    net.Listener // WithListener's, until bindListeners adopts it
	lns    []boundListener
	unlock func() // the data dir lock
	http   *httpSide
	brk    *broker.Broker
	b      *Broker // serving; its Close releases all of the above
}

// release closes what Start opened, each thing once, in the order Close
// uses: listeners, then the broker, then the data dir lock.
func (st *starting) release() {
	if st.b != nil {
		st.b.Close()
		return
	}
	st.http.stop()
	if st.own != nil {
		st.own.Close()
	}
	closeListeners(st.lns)
	if st.brk != nil {
		st.brk.Close()
	}
	if st.unlock != nil {
		st.unlock()
	}
}

// lock takes the data dir's lock when the data is on the OS filesystem
// (flock cannot lock a directory of another FS).
func (st *starting) lock(s settings) error {
	st.unlock = func() {}
	if s.fsys != nil {
		return nil
	}
	unlock, err := lockDataDir(s.dataDir)
	if err != nil {
		if !errors.Is(err, ErrDataDirLocked) {
			err = fmt.Errorf("minikafka: locking data dir %s: %w", s.dataDir, err)
		}
		return err
	}
	st.unlock = unlock
	return nil
}

// openBroker recovers the storage and opens the broker on it.
func (st *starting) openBroker(c *config, s settings) error {
	var listeners []broker.Listener
	for _, l := range st.lns {
		listeners = append(listeners, broker.Listener{Name: l.spec.Name, Host: l.host, Port: int32(l.port), SASL: l.preAuthMax > 0, Node: l.node})
	}
	var nodes []broker.NodeSpec
	for i := range c.cluster.count() {
		nodes = append(nodes, broker.NodeSpec{ID: c.nodeID + int32(i), Rack: c.cluster.rack(i)})
	}
	first := st.lns[0]
	brk, err := broker.New(broker.Config{
		DataDir:                      s.dataDir,
		FS:                           s.brokerFS,
		NodeID:                       c.nodeID,
		Nodes:                        nodes,
		DefaultReplicationFactor:     c.cluster.replicationFactor,
		RackAwareReplicaSelector:     c.cluster.rackAwareSelector,
		AutoLeaderRebalance:          c.cluster.autoRebalance > 0,
		LeaderImbalanceCheckInterval: c.cluster.autoRebalance,
		AdvertisedHost:               first.host,
		AdvertisedPort:               int32(first.port),
		Listeners:                    listeners,
		ClusterID:                    c.clusterID,
		DefaultPartitions:            c.partitions,
		AutoCreateTopics:             c.autoCreate,
		Sync:                         s.sync,
		Logger:                       s.log,
		GroupInitialRebalanceDelay:   c.rebalanceDelay,
		Uplink:                       s.uplink,
		SASL:                         s.sec.sasl,
		Authorizer:                   c.authorizer,
		SSLPrincipalMappingRules:     c.sslPrincipalMappingRules,
		PassCompressedRecords:        c.validation.passthrough,
		QuotaWindowSamples:           c.quotaWindow.samples,
		QuotaWindowSize:              c.quotaWindow.size,
		ClientMetrics:                c.clientMetrics.prefixes,
		ClientMetricsInterval:        c.clientMetrics.interval,
		CleanerBackoff:               c.cleaner.backoff,
		CleanerDedupeBufferSize:      c.cleaner.dedupeBytes,

		// The group coordinator settings (WithGroup*, WithOffsets*).
		Groups: c.groups.GroupConfig,
	})
	if err != nil {
		return fmt.Errorf("minikafka: opening data dir %s: %w", s.dataDir, err)
	}
	brk.SetAdvertised(first.host, int32(first.port))
	st.brk = brk
	return nil
}

// serve puts a protocol server on every listener and starts accepting;
// from then on the returned Broker's Close releases everything.
func (st *starting) serve(c *config, s settings) (*Broker, error) {
	mx := newMetrics(st.brk) // counts requests on their way to the broker
	var srvs []*protocol.Server
	var infos []ListenerInfo
	budget := protocol.NewBudget(c.validation.queuedMaxRequestBytes) // one for all listeners
	for _, l := range st.lns {
		srv, err := protocol.Listen(protocol.Config{
			Budget:                 budget,
			Listener:               l.ln,
			ListenerName:           l.spec.Name,
			Node:                   l.node,
			MaxRequestBytes:        c.maxRequest,
			SendBufferBytes:        c.sendBuffer,
			IdleTimeout:            c.idleTimeout,
			RequestReadTimeout:     c.validation.requestReadTimeout,
			Logger:                 s.log,
			TLS:                    l.tls,
			PreAuthMaxRequestBytes: l.preAuthMax,
			ConnThrottle:           st.brk.ConnectionThrottle,
		}, mx)
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, srv)
		infos = append(infos, ListenerInfo{Name: l.spec.Name, Security: l.spec.Security, Addr: l.ln.Addr(),
			Advertised: net.JoinHostPort(l.host, strconv.Itoa(l.port)), Node: l.node})
	}
	first := st.lns[0]
	b := &Broker{
		brk:        st.brk,
		srv:        srvs[0],
		log:        s.log,
		listen:     first.ln.Addr(),
		advertised: net.JoinHostPort(first.host, strconv.Itoa(first.port)),
		served:     make(chan error, len(srvs)),
		unlock:     st.unlock,
		metrics:    mx,
		listeners:  infos,
		srvs:       srvs,
		http:       st.http,
		started:    time.Now(),
		waitLimit:  c.waitLimit,
		storage:    s.storage,
	}
	if c.dataDir != "" {
		b.dataDir = s.dataDir
		if s.fsys == nil {
			b.osDataDir = s.dataDir
		}
	}
	for _, srv := range srvs {
		go func() {
			err := srv.Serve()
			if err != nil {
				s.log.Error("accepting connections failed", "err", err)
			}
			b.served <- err
		}()
	}
	st.b = b
	return b, nil
}

// Addrs returns the bootstrap addresses clients should use (the advertised
// host:port of the first listener of every node), e.g.
// kgo.SeedBrokers(b.Addrs()...).
func (b *Broker) Addrs() []string {
	var out []string
	seen := map[int32]bool{}
	for _, l := range b.listeners {
		if !seen[l.Node] {
			seen[l.Node] = true
			out = append(out, l.Advertised)
		}
	}
	if len(out) == 0 {
		return []string{b.advertised}
	}
	return out
}

// Addr is the first of Addrs.
func (b *Broker) Addr() string { return b.advertised }

// ListenAddr is the address the listener is bound to (with the real port).
func (b *Broker) ListenAddr() net.Addr { return b.listen }

// DataDir is the absolute data directory, or "" for an in-memory broker.
func (b *Broker) DataDir() string { return b.dataDir }

// Close stops accepting connections, answers the requests already read
// (waiting at most a few seconds for long polls), closes the connections,
// then flushes and closes the storage. It is idempotent: later calls return
// the first call's result.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		b.admin.stop()    // first: faults and waits are clients of the broker
		b.http.stop()     // the console is one too, and reads the registry
		b.registry.stop() // a client of the broker too
		b.metrics.stop()
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		var errs []error
		// Every listener drains at once, within the one grace period.
		closed := make(chan error, len(b.srvs))
		for _, srv := range b.srvs {
			go func() { closed <- srv.Close(ctx) }()
		}
		for range b.srvs {
			if err := <-closed; err != nil && !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, err)
			}
		}
		for range b.srvs {
			if err := <-b.served; err != nil {
				errs = append(errs, fmt.Errorf("minikafka: serving: %w", err))
			}
		}
		if err := b.brk.Close(); err != nil {
			errs = append(errs, fmt.Errorf("minikafka: closing storage: %w", err))
		}
		b.unlock()
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// ErrDataDirLocked is returned by Start when another broker (in this or
// another process) uses the data dir.
var ErrDataDirLocked = errors.New("minikafka: data dir locked")

// embeddedAddr is the "remote address" of requests Start makes itself.
type embeddedAddr struct{}

func (embeddedAddr) Network() string { return "embedded" }
func (embeddedAddr) String() string  { return "minikafka.Start" }

// do sends one request straight to the broker's handler, as a client
// connection would.
func (b *Broker) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	r := &protocol.Request{
		Key:     req.Key(),
		Version: req.GetVersion(),
		Body:    req,
		Conn:    &protocol.ConnInfo{Remote: embeddedAddr{}},
	}
	reply := b.brk.Serve(ctx, r)
	switch {
	case reply.Err != nil:
		return nil, reply.Err
	case reply.Response != nil:
		return reply.Response, nil
	case reply.Wait != nil:
		return reply.Wait()
	}
	return nil, errors.New("no response")
}

// maxVersion asks the broker (ApiVersions) for the newest version of key
// it supports, capped at what kmsg knows.
func (b *Broker) maxVersion(ctx context.Context, key int16) (int16, error) {
	resp, err := b.do(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return 0, err
	}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		if k.ApiKey == key {
			return min(k.MaxVersion, kmsg.RequestForKey(key).MaxVersion()), nil
		}
	}
	return 0, fmt.Errorf("broker does not support api key %d", key)
}

// createTopics creates the WithTopic topics that do not exist yet.
func (b *Broker) createTopics(ctx context.Context, topics []TopicSpec) error {
	if len(topics) == 0 {
		return nil
	}
	v, err := b.maxVersion(ctx, 19)
	if err != nil {
		return fmt.Errorf("minikafka: creating topics: %w", err)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = v
	req.TimeoutMillis = 30000
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = t.Name
		rt.NumPartitions = t.Partitions
		rt.ReplicationFactor = -1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := b.do(ctx, req)
	if err != nil {
		return fmt.Errorf("minikafka: creating topics: %w", err)
	}
	var errs []error
	for _, t := range resp.(*kmsg.CreateTopicsResponse).Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && err != kerr.TopicAlreadyExists {
			msg := ""
			if t.ErrorMessage != nil {
				msg = ": " + *t.ErrorMessage
			}
			errs = append(errs, fmt.Errorf("topic %q: %w%s", t.Topic, err, msg))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("minikafka: creating topics: %w", err)
	}
	return nil
}
