package minikafka

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/console"
)

// httpSide is WithHTTPAddr's listener and what it serves: health,
// readiness and metrics from the start, the console once attach has run.
type httpSide struct {
	server   *httpServer
	loopback bool // bound to loopback: the console checks Host (DNS rebinding)

	mx       atomic.Pointer[metrics] // set by attach, after con: ready
	stopping atomic.Bool

	// The console and its in-process Kafka connection (attach).
	con   *console.Console
	kafka *kafkaPipe

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
	h := &httpSide{}
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
		mx := h.mx.Load()
		if mx == nil {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		mx.writeTo(w)
	})
	mux.HandleFunc("/", h.console)
	h.server = serveHTTP(ln, mux, httpWriteTimeout, log)
	return h, nil
}

func (h *httpSide) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case h.stopping.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
	case h.mx.Load() == nil:
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
	if h.mx.Load() == nil { // attach sets con before mx
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

// attach starts the console, reading src, the metrics mx and the
// registry's schemas (nil without one), and marks the broker ready.
func (h *httpSide) attach(brk *broker.Broker, src console.Broker, mx *metrics, schemas console.Schemas, log *slog.Logger) error {
	if h == nil {
		return nil
	}
	kafka, err := openKafkaPipe("console", brk, log)
	if err != nil {
		return err
	}
	h.kafka = kafka
	con, err := console.New(console.Config{Broker: src, Dial: kafka.dial, Logger: log, Schemas: schemas})
	if err != nil {
		return err
	}
	h.con = con
	h.mx.Store(mx)
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
		h.server.stop(2 * time.Second)
		if h.con != nil {
			h.con.Close()
		}
		h.kafka.close()
	})
}

// addr is the bound address, nil when off.
func (h *httpSide) addr() net.Addr {
	if h == nil {
		return nil
	}
	return h.server.addr()
}
