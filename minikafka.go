package minikafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

// memDataDir is the data dir's path inside the in-memory filesystem.
const memDataDir = "/minikafka"

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
	dataDir    string   // "" in memory
	metrics    *metrics // options_metrics.go

	listeners []ListenerInfo     // options_listeners.go
	srvs      []*protocol.Server // one per listener; srv is the first

	served    chan error
	unlock    func() // releases the data dir lock
	closeOnce sync.Once
	closeErr  error
}

// Start recovers the storage, binds the listener and starts serving. It
// returns once clients can connect. ctx bounds startup only: cancelling it
// later does not stop the broker (Close does).
func Start(ctx context.Context, opts ...Option) (*Broker, error) {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	syncPolicy, err := c.validate()
	if err != nil {
		if c.listener != nil {
			c.listener.Close()
		}
		return nil, err
	}
	upl, err := c.uplink.build()
	if err != nil {
		if c.listener != nil {
			c.listener.Close()
		}
		return nil, err
	}
	sec, err := c.security.build()
	if err != nil {
		if c.listener != nil {
			c.listener.Close()
		}
		return nil, err
	}
	plans, err := c.listenerPlans(sec) // options_listeners.go
	if err != nil {
		if c.listener != nil {
			c.listener.Close()
		}
		return nil, err
	}
	log := c.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	fsys, dataDir := c.fs, c.dataDir
	if dataDir == "" {
		dataDir = memDataDir
		if fsys == nil {
			fsys = vfs.NewMem()
		}
	} else if fsys == nil {
		// Absolute, so what we report and what we use stay the same
		// if the program changes directory later.
		if abs, err := filepath.Abs(dataDir); err == nil {
			dataDir = abs
		}
	}

	// Bind first: a busy port fails fast, before storage recovery.
	lns, err := bindListeners(plans, c.listener, sec)
	if err != nil {
		return nil, err
	}
	ln, advHost, advPort := lns[0].ln, lns[0].host, lns[0].port
	closeLns := func() { closeListeners(lns) }
	if err := ctx.Err(); err != nil {
		closeLns()
		return nil, err
	}
	var brokerListeners []broker.Listener
	for _, l := range lns {
		brokerListeners = append(brokerListeners, broker.Listener{Name: l.spec.Name, Host: l.host, Port: int32(l.port), SASL: l.preAuthMax > 0})
	}

	unlock := func() {}
	if c.dataDir != "" && fsys == nil {
		if unlock, err = lockDataDir(dataDir); err != nil {
			closeLns()
			if !errors.Is(err, ErrDataDirLocked) {
				err = fmt.Errorf("minikafka: locking data dir %s: %w", dataDir, err)
			}
			return nil, err
		}
	}

	brk, err := broker.New(broker.Config{
		DataDir:                    dataDir,
		FS:                         fsys,
		NodeID:                     c.nodeID,
		AdvertisedHost:             advHost,
		AdvertisedPort:             int32(advPort),
		Listeners:                  brokerListeners,
		ClusterID:                  c.clusterID,
		DefaultPartitions:          c.partitions,
		AutoCreateTopics:           c.autoCreate,
		Sync:                       syncPolicy,
		Logger:                     log,
		GroupInitialRebalanceDelay: c.rebalanceDelay,
		Uplink:                     upl,
		SASL:                       sec.sasl,
		PassCompressedRecords:      c.validation.passthrough,
		CleanerBackoff:             c.cleaner.backoff,
		CleanerDedupeBufferSize:    c.cleaner.dedupeBytes,

		// The group coordinator settings (options_groups.go).
		Groups: c.groups.GroupConfig,
	})
	if err != nil {
		closeLns()
		unlock()
		return nil, fmt.Errorf("minikafka: opening data dir %s: %w", dataDir, err)
	}
	brk.SetAdvertised(advHost, int32(advPort))

	mx := newMetrics(brk) // counts requests on their way to brk
	var srvs []*protocol.Server
	var infos []ListenerInfo
	budget := protocol.NewBudget(c.validation.queuedMaxRequestBytes) // one for all listeners
	for _, l := range lns {
		srv, err := protocol.Listen(protocol.Config{
			Budget:                 budget,
			Listener:               l.ln,
			ListenerName:           l.spec.Name,
			MaxRequestBytes:        c.maxRequest,
			SendBufferBytes:        c.sendBuffer,
			IdleTimeout:            c.idleTimeout,
			Logger:                 log,
			TLS:                    l.tls,
			PreAuthMaxRequestBytes: l.preAuthMax,
		}, mx)
		if err != nil {
			closeLns()
			brk.Close()
			unlock()
			return nil, err
		}
		srvs = append(srvs, srv)
		infos = append(infos, ListenerInfo{Name: l.spec.Name, Security: l.spec.Security, Addr: l.ln.Addr(),
			Advertised: net.JoinHostPort(l.host, strconv.Itoa(l.port))})
	}
	srv := srvs[0]
	b := &Broker{
		brk:        brk,
		srv:        srv,
		log:        log,
		listen:     ln.Addr(),
		advertised: net.JoinHostPort(advHost, strconv.Itoa(advPort)),
		served:     make(chan error, len(srvs)),
		unlock:     unlock,
		metrics:    mx,
		listeners:  infos,
		srvs:       srvs,
	}
	if c.dataDir != "" {
		b.dataDir = dataDir
	}
	for _, srv := range srvs {
		go func() {
			err := srv.Serve()
			if err != nil {
				log.Error("accepting connections failed", "err", err)
			}
			b.served <- err
		}()
	}

	// After Serve started: Close waits for it.
	if err := mx.start(c.metrics.addr, srvs...); err != nil {
		b.Close()
		return nil, err
	}
	if err := b.createTopics(ctx, c.topics); err != nil {
		b.Close()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// advertise picks the host and port Metadata hands out for a listener
// bound to listenAddr.
func advertise(listenAddr, advertisedAddr string, bound *net.TCPAddr) (string, int) {
	host, port := "", 0
	if advertisedAddr != "" {
		h, p, _ := net.SplitHostPort(advertisedAddr) // validated
		host = h
		port, _ = strconv.Atoi(p)
	}
	if host == "" {
		h, _, _ := net.SplitHostPort(listenAddr)
		host = h
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
			// Listening on every interface: clients on this
			// machine reach it as localhost.
			host = "localhost"
		}
	}
	if port == 0 {
		port = bound.Port
	}
	return host, port
}

// Addrs returns the bootstrap addresses clients should use (the advertised
// host:port), e.g. kgo.SeedBrokers(b.Addrs()...).
func (b *Broker) Addrs() []string { return []string{b.advertised} }

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
