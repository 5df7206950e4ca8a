package minikafka

// Start, step by step: check the options, bind the listeners, recover the
// storage, serve, then start what sits beside the Kafka listeners (the
// metrics endpoint, the schema registry, the console, the control API).
// A step that fails releases what the steps before it opened.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
	if b.registry, err = startRegistry(c.schemaRegistry, c.authorizer, b.brk, b.log); err != nil {
		return nil, err
	}
	// Ready from here on.
	if err = b.http.attach(b.brk, consoleSource{b}, b.metrics, b.registry.schemas(), b.log); err != nil {
		return nil, err
	}
	if b.admin, err = listenAdmin(c.admin, adminHandler(b, c.admin.token), b.log); err != nil {
		return nil, err
	}
	if b.admin != nil {
		b.brk.EnableRequestLog(defaultRequestLog)
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

// bindListeners binds every planned listener, the one of WithListener
// (st.own) when given. What it bound is in st.lns also when it fails, for
// release to close.
//
// With several nodes, each node gets every planned listener, node i's on
// the planned port plus i (port 0 stays 0: a free port each), advertised
// likewise.
func (st *starting) bindListeners(plans []ListenerSpec, sec securitySettings, nodes int, firstID int32) error {
	for i := range nodes {
		for _, p := range plans {
			p.Addr, p.Advertised = shiftPort(p.Addr, i), shiftPort(p.Advertised, i)
			if err := st.bindListener(p, sec, firstID+int32(i), len(plans) > 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (st *starting) bindListener(p ListenerSpec, sec securitySettings, node int32, named bool) error {
	ln := st.own
	st.own = nil // adopted: closed with st.lns from now on
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", p.Addr); err != nil {
			if named {
				return fmt.Errorf("minikafka: listen on %s (listener %s): %w", p.Addr, p.Name, err)
			}
			return fmt.Errorf("minikafka: listen on %s: %w", p.Addr, err)
		}
	}
	bound, _ := ln.Addr().(*net.TCPAddr)
	if bound == nil {
		bound = &net.TCPAddr{}
	}
	bl := boundListener{spec: p, ln: ln, node: node}
	bl.host, bl.port = advertise(p.Addr, p.Advertised, bound)
	if p.Security == SSL || p.Security == SASLSSL {
		bl.tls = sec.tls
	}
	if strings.HasPrefix(p.Security, "SASL_") {
		bl.preAuthMax = sec.preAuthMax
	}
	st.lns = append(st.lns, bl)
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
