package minikafka

// The HTTP server every HTTP listener uses (the console's, the control
// API's, the metrics endpoint's and the schema registry's), with the same
// bounds on each.

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

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

// httpServer is one HTTP listener and the server on it.
type httpServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve returns
	once sync.Once
}

// serveHTTP serves h on ln within the bounds above. writeTimeout 0 lets
// an answer take as long as it needs (the control API's waits bound
// themselves); log, when not nil, gets the server's own errors at debug.
func serveHTTP(ln net.Listener, h http.Handler, writeTimeout time.Duration, log *slog.Logger) *httpServer {
	s := &httpServer{ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
	}
	if log != nil {
		s.srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(netutil.LimitListener(ln, maxHTTPConns)) // ErrServerClosed after stop
	}()
	return s
}

// stop closes the listener, lets requests in flight finish for up to
// grace (a wait or a long poll that does not is cut off), and waits for
// the server to return. Idempotent; nothing to do on nil.
func (s *httpServer) stop(grace time.Duration) {
	if s == nil {
		return
	}
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			s.srv.Close()
		}
		<-s.done
	})
}

// addr is the bound address, nil for no server.
func (s *httpServer) addr() net.Addr {
	if s == nil {
		return nil
	}
	return s.ln.Addr()
}
