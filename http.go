package minikafka

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/console"
	"github.com/minikafka/minikafka/protocol"
	"golang.org/x/net/netutil"
)

// HTTP server bounds: a client that sends its request slowly, or never
// reads the answer, is cut off; at most maxHTTPConns connections are
// served at once (more wait in the kernel's accept queue).
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpWriteTimeout      = 30 * time.Second
	httpIdleTimeout       = 60 * time.Second
	httpMaxHeaderBytes    = 32 << 10
	maxHTTPConns          = 128
)

// httpSide is the HTTP listener and what it serves.
type httpSide struct {
	ln       net.Listener
	srv      *http.Server
	done     chan struct{}
	loopback bool // bound to loopback: the console checks Host (DNS rebinding)
	log      *slog.Logger

	b        atomic.Pointer[Broker] // set once Start is done: ready
	stopping atomic.Bool

	// The console and its in-process Kafka connection (attach).
	con   *console.Console
	pipes *pipeListener
	kafka *protocol.Server
	kdone chan struct{}

	stopOnce sync.Once
}

// listenHTTP binds the HTTP listener and starts serving health; nil when
// cfg has no address.
func listenHTTP(cfg httpConfig, log *slog.Logger) (*httpSide, error) {
	if cfg.addr == "" {
		return nil, nil
	}
	addr, err := cfg.bindAddr()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minikafka: http: listen on %s: %w", addr, err)
	}
	h := &httpSide{ln: ln, done: make(chan struct{}), log: log}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		h.loopback = ta.IP.IsLoopback()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		b := h.b.Load()
		if b == nil {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		b.metrics.writeTo(w)
	})
	mux.HandleFunc("/", h.console)
	h.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(h.done)
		_ = h.srv.Serve(netutil.LimitListener(ln, maxHTTPConns)) // ErrServerClosed after stop
	}()
	return h, nil
}

func (h *httpSide) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case h.stopping.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
	case h.b.Load() == nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "starting: recovering storage and binding listeners")
	default:
		fmt.Fprintln(w, "ready")
	}
}

// console serves the pages and the API once the broker is ready.
func (h *httpSide) console(w http.ResponseWriter, r *http.Request) {
	if h.loopback && !loopbackHost(r.Host) {
		// A name that resolves to 127.0.0.1 only through a hostile
		// DNS answer must not reach the console from the browser.
		http.Error(w, "console on loopback: use localhost or 127.0.0.1 in the address", http.StatusMisdirectedRequest)
		return
	}
	if h.b.Load() == nil || h.con == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, `{"error":"the broker is starting"}`)
		return
	}
	h.con.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// attach starts the console on b and marks the broker ready.
func (h *httpSide) attach(b *Broker) error {
	if h == nil {
		return nil
	}
	h.pipes = newPipeListener()
	srv, err := protocol.Listen(protocol.Config{Listener: h.pipes, ListenerName: "console", Logger: b.log}, trusted{b.brk})
	if err != nil {
		return err
	}
	h.kafka, h.kdone = srv, make(chan struct{})
	go func() {
		defer close(h.kdone)
		_ = srv.Serve()
	}()
	ccfg := console.Config{Broker: consoleSource{b}, Dial: h.pipes.dial, Logger: b.log}
	if b.registry != nil {
		ccfg.Schemas = b.registry.reg // schemaregistry.go
	}
	con, err := console.New(ccfg)
	if err != nil {
		return err
	}
	h.con = con
	h.b.Store(b)
	return nil
}

// stop closes the HTTP listener, then the console and its Kafka
// connection (idempotent).
func (h *httpSide) stop() {
	if h == nil {
		return
	}
	h.stopOnce.Do(func() {
		h.stopping.Store(true)
		shutdownHTTP(h.srv, h.done, 2*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if h.con != nil {
			h.con.Close()
		}
		if h.kafka != nil {
			_ = h.kafka.Close(ctx)
			<-h.kdone
		}
	})
}

// addr is the bound address, nil when off.
func (h *httpSide) addr() net.Addr {
	if h == nil {
		return nil
	}
	return h.ln.Addr()
}

// HTTPAddr is the bound address of WithHTTPAddr's listener, nil without
// one.
func (b *Broker) HTTPAddr() net.Addr { return b.http.addr() }

// trusted hands the console's requests to the broker as the embedding
// program's own: they came over a pipe only the console can dial, so
// the listeners' SASL does not apply (as for Start's own requests). They
// bypass the metrics counters, so the console's reads do not show up as
// client traffic in its own rate charts.
type trusted struct{ brk *broker.Broker }

func (t trusted) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := *req
	r.Conn = &protocol.ConnInfo{ID: req.Conn.ID, Remote: consoleAddr{}}
	return t.brk.Serve(ctx, &r)
}

type consoleAddr struct{}

func (consoleAddr) Network() string { return "pipe" }
func (consoleAddr) String() string  { return "console" }

// pipeListener is a net.Listener whose connections are net.Pipes that
// dial makes: a Kafka listener with no port.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return consoleAddr{} }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	server.Close()
	client.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, net.ErrClosed
}

// consoleSource is what the console reads of the broker directly.
type consoleSource struct{ b *Broker }

func (s consoleSource) Info() console.Info {
	b := s.b
	info := console.Info{
		NodeID:          b.brk.NodeID(),
		ClusterID:       b.brk.ClusterID(),
		Started:         b.started,
		DataDir:         b.osDataDir,
		ProduceRequests: b.metrics.requests[0].Load(),
		FetchRequests:   b.metrics.requests[1].Load(),
		ProduceBytes:    b.metrics.produceBytes.Load(),
		FetchBytes:      b.metrics.fetchBytes.Load(),
	}
	for _, l := range b.listeners {
		info.Listeners = append(info.Listeners, console.Listener{Name: l.Name, Security: l.Security, Addr: l.Addr.String(), Advertised: l.Advertised})
	}
	for _, srv := range b.srvs {
		info.Connections += srv.Conns()
	}
	for _, n := range b.Nodes() {
		info.Nodes = append(info.Nodes, console.Node{ID: n.ID, Rack: n.Rack, Up: n.Up, Addr: n.Addr})
	}
	return info
}

func (s consoleSource) ForwardStats() []uplink.ForwardStat { return s.b.brk.ForwardStats() }
func (s consoleSource) ForwardGroupOffsets() []uplink.GroupOffsetSync {
	return s.b.brk.ForwardGroupOffsets()
}

// shutdownHTTP stops srv, letting requests in flight finish for up to
// grace (a wait or a long poll that does not is cut off), then waits for
// its Serve loop, which closes done, to return.
func shutdownHTTP(srv *http.Server, done <-chan struct{}, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
	<-done
}
