package minikafka

// The control API (WithAdminAddr, -admin-addr): JSON over HTTP for tests
// written in any language to steer the broker: faults (admin_faults.go),
// inspection (admin_inspect.go), seeding and waits (admin_seed.go), the
// simulated cluster (admin_cluster.go). It has a listener of
// its own, off by default, because it can break the broker on purpose:
// it binds loopback unless told otherwise, and anywhere else it needs a
// bearer token (WithAdminToken). It also serves /healthz and /metrics so a
// test harness needs one address.
//
// Every endpoint is an adminRoute registered by its file's init; errors
// are JSON {"error": "..."} with a 4xx status for the caller's mistakes
// and 5xx for the broker's, so a bad request never takes anything down.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

// adminRoute is one endpoint: pattern is a net/http ServeMux pattern
// ("POST /v1/faults"); handle returns what is written as JSON (nil: 204)
// or an error (an *adminError sets the status; any other error is a 500).
type adminRoute struct {
	pattern string
	handle  func(b *Broker, r *http.Request) (any, error)
}

// adminRoutes is filled by the init of each admin_*.go file.
var adminRoutes []adminRoute

// adminError is an error answer with its HTTP status.
type adminError struct {
	status int
	msg    string
}

func (e *adminError) Error() string { return e.msg }

// badRequest is a 400 answer.
func badRequest(format string, args ...any) error {
	return &adminError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// notFound is a 404 answer.
func notFound(format string, args ...any) error {
	return &adminError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// maxAdminBody bounds a request body: seeding many records is the
// largest legitimate one.
const maxAdminBody = 64 << 20

// decodeBody reads r's JSON body into v, refusing unknown fields (a
// misspelt field must not silently mean its default) and trailing data.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxAdminBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("empty body: want a JSON object")
		}
		return badRequest("bad JSON body: %v", err)
	}
	if dec.More() {
		return badRequest("bad JSON body: more than one JSON value")
	}
	return nil
}

// listenAdmin binds the control API and serves h on it; nil when off.
func listenAdmin(cfg adminConfig, h http.Handler, log *slog.Logger) (*httpServer, error) {
	if cfg.addr == "" {
		return nil, nil
	}
	addr, err := cfg.bindAddr()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minikafka: admin: listen on %s: %w", addr, err)
	}
	// No write timeout: waits and held faults answer late on purpose
	// (each bounds itself with its own deadline).
	return serveHTTP(ln, h, 0, log), nil
}

// adminHandler is the mux of every route, behind the token check.
func adminHandler(b *Broker, token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		b.metrics.writeTo(w)
	})
	for _, rt := range adminRoutes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			if token != "" && !validBearer(r, token) {
				writeAdminJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong bearer token"})
				return
			}
			v, err := rt.handle(b, r)
			if err != nil {
				var ae *adminError
				if errors.As(err, &ae) {
					writeAdminJSON(w, ae.status, map[string]string{"error": ae.msg})
					return
				}
				b.log.Warn("admin request failed", "pattern", rt.pattern, "err", err)
				writeAdminJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
				return
			}
			if v == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			writeAdminJSON(w, http.StatusOK, v)
		})
	}
	// Unknown paths answer JSON too, naming the path.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAdminJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	return mux
}

func validBearer(r *http.Request, token string) bool {
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) < len(prefix) || h[:len(prefix)] != prefix {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(prefix):]), []byte(token)) == 1
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func pathPartition(r *http.Request) (int32, error) {
	p, err := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	if err != nil || p < 0 {
		return 0, badRequest("partition %q: want a non-negative integer", r.PathValue("partition"))
	}
	return int32(p), nil
}

// maxAdminWait bounds a wait's timeout so a forgotten request does not
// hold a connection for ever.
const maxAdminWait = 10 * time.Minute

// waitBody runs wait under the request's timeout_ms (required, at most
// maxAdminWait); a timeout is 408 naming what was awaited.
func waitBody(r *http.Request, timeoutMs int64, wait func(ctx context.Context) error) (any, error) {
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > maxAdminWait {
		return nil, badRequest("want 0 < timeout_ms <= %d", maxAdminWait.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(timeoutMs)*time.Millisecond)
	defer cancel()
	if err := wait(ctx); err != nil {
		return nil, &adminError{http.StatusRequestTimeout, err.Error()}
	}
	return map[string]bool{"ok": true}, nil
}
