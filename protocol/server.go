package protocol

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/ratelog"
)

// Defaults for Config fields left zero.
const (
	// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes.
	DefaultMaxRequestBytes int32 = 100 << 20
	// DefaultIdleTimeout is Kafka's connections.max.idle.ms.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxInFlight bounds the replies queued per connection; kgo
	// pipelines up to 5 produce requests per connection, Java up to 5.
	DefaultMaxInFlight = 32
	// DefaultTLSHandshakeTimeout bounds a TLS handshake (capped by the
	// idle timeout).
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultRequestReadTimeout bounds how long a request's bytes may take
	// to arrive once its length prefix has (Config.RequestReadTimeout).
	DefaultRequestReadTimeout = 30 * time.Second
)

// Request is one decoded request.
type Request struct {
	Key, Version  int16
	CorrelationID int32
	ClientID      *string
	// Body is the decoded request, its version set.
	Body kmsg.Request
	Conn *ConnInfo
	// Raw marks a bare SASL token read after a Reply with SASLRaw (the
	// unframed exchange that follows SaslHandshake v0): Key is 36, Version
	// 0, Body a SASLAuthenticateRequest holding the token and no header
	// was read (CorrelationID 0).
	Raw bool
	// Size is the frame's length in bytes (after the size prefix), what
	// Kafka's produce quota counts.
	Size int32
}

// ConnInfo identifies the connection a request arrived on.
type ConnInfo struct {
	ID     uint64
	Remote net.Addr
	// TLS is the connection's state after its TLS handshake; nil for a
	// plaintext connection.
	TLS *tls.ConnectionState
	// Auth belongs to the Handler (its authentication progress); protocol
	// never touches it. Serve calls for one connection never overlap, so
	// Serve may use it without locking.
	Auth any
	// Quota belongs to the Handler too (its per-connection quota cache),
	// under the same rule as Auth.
	Quota any
	// Authz belongs to the Handler too (its per-connection authorization
	// cache), under the same rule as Auth.
	Authz any
	c     *conn

	// Listener is the name of the listener (Config.ListenerName) the
	// connection came in on; "" for a ConnInfo not made by a Server.
	Listener string
	// Node is Config.Node of the server the connection came in on.
	Node int32

	// ClientSoftwareName and ClientSoftwareVersion are what the client
	// said of itself in ApiVersions v3+; the Handler sets them, under
	// the rule for Auth.
	ClientSoftwareName, ClientSoftwareVersion string
}

// FromNetwork reports whether the request came over a Server's connection
// (as opposed to a ConnInfo a program built to call its Handler itself).
func (ci *ConnInfo) FromNetwork() bool { return ci.c != nil }

// OnClose registers fn to run once the connection has closed and its
// last reply is written or dropped (state tied to a connection, such as a
// KIP-932 share session, ends with it). A later call with the same key
// replaces the earlier fn, so a client cannot grow the list; fn runs on
// the connection's goroutine, at most once. On a ConnInfo not made by a
// Server it does nothing; on a connection already closed fn runs now.
func (ci *ConnInfo) OnClose(key any, fn func()) {
	c := ci.c
	if c == nil {
		return
	}
	c.onCloseMu.Lock()
	if c.closed {
		c.onCloseMu.Unlock()
		fn()
		return
	}
	if c.onClose == nil {
		c.onClose = map[any]func(){}
	}
	c.onClose[key] = fn
	c.onCloseMu.Unlock()
}

// SetAuthenticated lifts Config.PreAuthMaxRequestBytes for this connection
// once the client has authenticated.
func (ci *ConnInfo) SetAuthenticated() {
	if ci.c != nil {
		ci.c.authed.Store(true)
	}
}

// SetBudgetOwner charges the connection's request frames to owner (the
// authenticated principal) for the Budget's fairness: connections of one
// principal share one fair share of request memory, so a principal cannot
// open many connections to crowd others out. Unset, each connection is its
// own owner.
func (ci *ConnInfo) SetBudgetOwner(owner string) {
	if ci.c != nil {
		o := "principal:" + owner
		ci.c.owner.Store(&o)
	}
}

// Draining is closed when the server begins a graceful shutdown: a long
// poll waiting in Reply.Wait should answer with what it has, so the
// shutdown does not wait out its max wait time. Nil (never ready) for a
// ConnInfo not made by a Server.
func (ci *ConnInfo) Draining() <-chan struct{} {
	if ci.c == nil {
		return nil
	}
	return ci.c.s.closed
}

// Mute stops the connection from being read for d from now (Kafka's
// channel throttling after a quota violation, KIP-219): replies already
// queued are still written, the next request is not read before the time
// is up. Overlapping mutes extend to the latest end.
func (ci *ConnInfo) Mute(d time.Duration) {
	if ci.c == nil || d <= 0 {
		return
	}
	until := time.Now().Add(d).UnixNano()
	for {
		old := ci.c.mutedUntil.Load()
		if old >= until || ci.c.mutedUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// Close closes the connection at once, dropping replies not yet written.
func (ci *ConnInfo) Close() {
	if ci.c != nil {
		ci.c.abort()
	}
}

// Handler serves requests. Serve is called on the connection's reader
// goroutine in arrival order; ctx is cancelled when the connection closes
// or stops being read for any reason but a graceful shutdown (client EOF,
// invalid request, handler error); see also ConnInfo.Draining.
// The byte slices of a Produce request (its record batches) belong to the
// connection once Serve returns a Reply without Wait: copy what must outlive
// Serve.
type Handler interface {
	Serve(ctx context.Context, req *Request) Reply
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) Reply

// Serve calls f.
func (f HandlerFunc) Serve(ctx context.Context, req *Request) Reply { return f(ctx, req) }

// Reply is a Handler's answer to one request. Response carries the response
// now, or Wait (called on the writer goroutine, in request order) produces
// it later. Both nil: no response is written (produce with acks=0). Err:
// the connection is closed after the replies before it are written (the
// handler logs why; the server traces it at debug level only, so a bad
// request is logged once); with Err and Response both set, Response is
// written last before the close (Kafka's answer to a failed SASL
// exchange). The response's version is
// written as set; the handler sets it (normally to the request's version).
type Reply struct {
	Response kmsg.Response
	Wait     func() (kmsg.Response, error)
	Err      error
	// SASLRaw makes the connection read its next frame as a bare SASL
	// token instead of a request (Request.Raw), as clients do after
	// SaslHandshake v0 (before KIP-152). A Raw request's response must be
	// a SASLAuthenticateResponse; only its token is written, as a bare
	// size-prefixed frame.
	SASLRaw bool
}

// BodyWriter may be implemented by a response to write its own body to
// the connection instead of being encoded with AppendTo, so that file bytes
// can go out without being copied through user space.
type BodyWriter interface {
	// BodyLen is the exact number of bytes WriteBody writes after head.
	BodyLen() int64
	// WriteBody writes head (the frame length and response header,
	// possibly preceded by earlier coalesced responses) and then exactly
	// BodyLen bytes of body to w. w is the connection itself: a
	// *net.TCPConn for TCP, a syscall.Conn a writer may sendfile(2) to;
	// a *tls.Conn under TLS, which is not one, so bytes go through the
	// encryption.
	WriteBody(w io.Writer, head []byte) error
}

// Releaser may be implemented by a response that holds resources (file
// references); Release is called once the response was written or dropped.
type Releaser interface {
	Release()
}

// Config configures a Server.
type Config struct {
	// Addr is the listen address, host:port; port 0 picks a free port.
	Addr string
	// MaxRequestBytes caps a request frame (default 100 MiB).
	MaxRequestBytes int32
	// IdleTimeout closes connections idle that long (default 10 min).
	IdleTimeout time.Duration
	// RequestReadTimeout is how long a request frame may take to arrive
	// after its length prefix, not counting time spent waiting for the
	// Budget (default DefaultRequestReadTimeout); a client that takes
	// longer is logged and its connection closed, so a request whose body
	// stops arriving holds its memory for a bounded time. Kafka has no
	// such bound (it waits for connections.max.idle.ms).
	RequestReadTimeout time.Duration
	// MaxInFlight bounds the replies queued per connection (default 32).
	MaxInFlight int
	// Logger receives connection-level events; nil discards them.
	Logger *slog.Logger
	// ConnThrottle, when set, is asked about each accepted connection
	// (its peer address): a positive answer means the connection is not
	// served and is closed after that long, as Kafka's acceptor delays
	// closing a connection over its IP's connection_creation_rate.
	ConnThrottle func(remote net.Addr) time.Duration
	// Listener, if set, is used instead of listening on Addr (tests,
	// custom transports).
	Listener net.Listener
	// ListenerName names this server's listener (Kafka's listener name,
	// e.g. "PLAINTEXT" or "EXTERNAL"); every ConnInfo carries it so the
	// Handler can answer with that listener's advertised address.
	ListenerName string
	// Node is the node ID of the cluster node this server is a listener
	// of, for a broker that simulates several nodes in one process; every
	// ConnInfo carries it, so the Handler knows which node was asked.
	Node int32
	// TLS, when set, makes every connection TLS; the handshake must finish
	// within TLSHandshakeTimeout. With ClientAuth set to
	// RequireAndVerifyClientCert, a client without a valid certificate is
	// refused during the handshake.
	TLS *tls.Config
	// TLSHandshakeTimeout defaults to DefaultTLSHandshakeTimeout.
	TLSHandshakeTimeout time.Duration
	// PreAuthMaxRequestBytes, when > 0, caps request frames on a
	// connection until the Handler calls ConnInfo.SetAuthenticated (Kafka's
	// sasl.server.max.receive.size: an unauthenticated client cannot make
	// the broker allocate 100 MiB).
	PreAuthMaxRequestBytes int32
	// Budget bounds the request bytes held in memory; Servers of one
	// broker share one, so the bound is broker-wide. Nil: a Budget of
	// DefaultQueuedMaxRequestBytes for this Server alone.
	Budget *Budget
	// SendBufferBytes is SO_SNDBUF for each accepted TCP connection
	// (Kafka's socket.send.buffer.bytes): 0 means
	// DefaultSendBufferBytes, a negative value leaves the OS's
	// autotuning.
	SendBufferBytes int
}

// DefaultSendBufferBytes is the send buffer each connection gets unless
// Config.SendBufferBytes says otherwise. On Linux loopback a consumer's
// fetch pattern (ask, read a large response, work, ask again) costs the
// broker about half the CPU per GiB with 256 KiB than with the kernel's
// autotuned buffer, which grows to MiBs: the data then waits in the
// receiver's queue, which the kernel compacts by copying
// (internal/bench/cmd/sendfilefloor shows it with no broker involved).
// Kafka's default is 100 KiB; at 256 KiB one connection still moves
// ~100 MiB/s over a 5 ms round trip.
const DefaultSendBufferBytes = 256 << 10

// Server is a Kafka wire server.
type Server struct {
	cfg Config
	h   Handler
	log *slog.Logger

	// ln is unbound while refusing (refuse.go); lnAddr is its address,
	// rebound is closed when it is bound again.
	lnMu    sync.Mutex
	ln      net.Listener
	lnAddr  net.Addr
	unbound bool
	rebound chan struct{}
	// budget is cfg.Budget or this Server's own.
	budget *Budget
	// clientLog rate-limits the warnings clients can cause.
	clientLog *ratelog.Limiter

	nextID   atomic.Uint64
	closing  atomic.Bool
	refusing atomic.Bool // refuse.go

	mu      sync.Mutex
	conns   map[*conn]struct{}
	closed  chan struct{} // closed once Close starts
	held    atomic.Int64  // connections closeLater holds
	conWG   sync.WaitGroup
	serving sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Listen binds the listener; Serve accepts connections.
func Listen(cfg Config, h Handler) (*Server, error) {
	if h == nil {
		return nil, errors.New("protocol: nil handler")
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.RequestReadTimeout <= 0 {
		cfg.RequestReadTimeout = DefaultRequestReadTimeout
	}
	if cfg.TLSHandshakeTimeout <= 0 {
		cfg.TLSHandshakeTimeout = min(DefaultTLSHandshakeTimeout, cfg.IdleTimeout)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, err
		}
	}
	budget := cfg.Budget
	if budget == nil {
		budget = NewBudget(0)
	}
	return &Server{
		cfg:       cfg,
		h:         h,
		ln:        ln,
		lnAddr:    ln.Addr(),
		rebound:   make(chan struct{}),
		log:       log,
		budget:    budget,
		clientLog: ratelog.New(log, 0),
		conns:     make(map[*conn]struct{}),
		closed:    make(chan struct{}),
	}, nil
}

// Addr is the bound address (with the real port when Addr had port 0).
func (s *Server) Addr() net.Addr { return s.lnAddr }

// Serve accepts connections until Close; it returns nil after Close and the
// accept error otherwise.
func (s *Server) Serve() error {
	// Registered under mu, which Close takes after setting closing and
	// before waiting, so Close never misses a Serve that started.
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return nil
	}
	s.serving.Add(1)
	s.mu.Unlock()
	defer s.serving.Done()
	var backoff time.Duration
	for {
		ln, _, _ := s.listener()
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			if cur, unbound, rebound := s.listener(); unbound {
				// Down (SetRefusing): wait to be bound again.
				select {
				case <-rebound:
				case <-s.closed:
					return nil
				}
				continue
			} else if cur != ln {
				continue // bound again meanwhile
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: back off
				// instead of spinning, as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
				select {
				case <-time.After(backoff):
				case <-s.closed:
					return nil
				}
				continue
			}
			return err
		}
		backoff = 0
		if s.cfg.ConnThrottle != nil {
			if d := s.cfg.ConnThrottle(nc.RemoteAddr()); d > 0 {
				s.closeLater(nc, d)
				continue
			}
		}
		s.startConn(nc)
	}
}

// maxHeldConns bounds the throttled connections held open at once; past
// it they are closed at once, so a flood cannot pile up sockets.
const maxHeldConns = 1024

// closeLater closes a connection refused by ConnThrottle after d (at once
// when too many are held, or when the server closes), without reading it.
func (s *Server) closeLater(nc net.Conn, d time.Duration) {
	if s.held.Add(1) > maxHeldConns {
		s.held.Add(-1)
		_ = nc.Close()
		return
	}
	go func() {
		defer s.held.Add(-1)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.closed:
		}
		_ = nc.Close()
	}()
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) startConn(nc net.Conn) {
	if s.refusing.Load() {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as close to a refused connect as a bound port gets
		}
		nc.Close()
		return
	}
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.conWG.Add(1)
	s.mu.Unlock()
	go c.run()
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.conWG.Done()
}

// Close stops accepting, stops reading new requests, writes the replies to
// requests already read, and closes every connection. If ctx ends first,
// the remaining connections are closed at once (their contexts cancelled)
// and ctx's error returned. Close is idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		close(s.closed)
		s.lnMu.Lock()
		s.ln.Close()
		s.lnMu.Unlock()
		s.mu.Lock()
		for c := range s.conns {
			c.stopReading()
		}
		s.mu.Unlock()

		done := make(chan struct{})
		go func() { s.conWG.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.closeErr = ctx.Err()
			s.mu.Lock()
			for c := range s.conns {
				c.abort()
			}
			s.mu.Unlock()
			<-done
		}
		s.serving.Wait()
		s.clientLog.Close()
	})
	return s.closeErr
}
