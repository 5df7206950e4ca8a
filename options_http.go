package minikafka

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// WithMetricsAddr serves Prometheus metrics (text format) at
// http://addr/metrics: requests per API, produced and fetched bytes, open
// connections, and per forwarded partition the forwarding lag, spool bytes
// and pressure, records forwarded and upstream errors. Port 0 picks a free
// port (see Broker.MetricsAddr). Default: no metrics endpoint.
func WithMetricsAddr(addr string) Option {
	return optionFunc(func(c *config) { c.metricsAddr = addr })
}

// httpConfig holds WithHTTPAddr and WithHTTPAddrAny; the listener is in
// http.go.
type httpConfig struct {
	addr string
	any  bool
}

// WithHTTPAddr serves the broker's HTTP side on addr: the web console at
// /, its JSON API under /api/, Prometheus metrics at /metrics, /healthz
// (200 while the process is up) and /readyz (200 once storage is recovered
// and every listener bound, 503 before and while shutting down). Port 0
// picks a free port (see Broker.HTTPAddr). Default: off.
//
// The console can delete topics and move offsets and asks for no
// password, so it stays on loopback unless told otherwise: an address
// with only a port (":8080") listens on 127.0.0.1, and the wildcard hosts
// 0.0.0.0 and :: are refused unless WithHTTPAddrAny is given too (with
// it, ":8080" means every interface). A named host or address listens
// there.
func WithHTTPAddr(addr string) Option {
	return optionFunc(func(c *config) { c.http.addr = addr })
}

// WithHTTPAddrAny allows WithHTTPAddr to listen on every interface (the
// console is then reachable by anyone who can reach the machine).
func WithHTTPAddrAny() Option {
	return optionFunc(func(c *config) { c.http.any = true })
}

// bindAddr is the address to listen on: a port alone means loopback
// unless any is set; a wildcard needs any.
func (h httpConfig) bindAddr() (string, error) {
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil {
		return "", fmt.Errorf("http address %q: %w", h.addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("http address %q: bad port", h.addr)
	}
	wildcard := host == "0.0.0.0" || host == "::" || host == "[::]"
	switch {
	case host == "" && !h.any:
		host = "127.0.0.1"
	case wildcard && !h.any:
		return "", fmt.Errorf("http address %q listens on every interface, and the console has no password: give WithHTTPAddrAny (-http-addr-any) to mean it, or a loopback address", h.addr)
	}
	return net.JoinHostPort(host, port), nil
}

// check reports what is wrong with the HTTP options.
func (h httpConfig) check() []error {
	if h.addr == "" {
		return nil
	}
	if _, err := h.bindAddr(); err != nil {
		return []error{err}
	}
	return nil
}

// adminConfig holds WithAdminAddr and WithAdminToken.
type adminConfig struct {
	addr  string
	token string
}

// WithAdminAddr serves the control API (faults, inspection, waits,
// seeding; see the README's reference) at http://addr/v1/..., with
// /healthz and /metrics beside it. Port 0 picks a free port (see
// Broker.AdminAddr). A port alone (":9644") means 127.0.0.1; any other
// address than loopback needs WithAdminToken. Default: off.
func WithAdminAddr(addr string) Option {
	return optionFunc(func(c *config) { c.admin.addr = addr })
}

// WithAdminToken makes the control API require "Authorization: Bearer
// <token>" on every /v1/ request. Required when WithAdminAddr is not a
// loopback address.
func WithAdminToken(token string) Option {
	return optionFunc(func(c *config) { c.admin.token = token })
}

// bindAddr is the address to listen on: a port alone means loopback;
// anything that is not loopback needs a token.
func (a adminConfig) bindAddr() (string, error) {
	host, port, err := net.SplitHostPort(a.addr)
	if err != nil {
		return "", fmt.Errorf("admin address %q: %w", a.addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("admin address %q: bad port", a.addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && a.token == "" {
		return "", fmt.Errorf("admin address %q is not loopback and the control API can break the broker: give a token (WithAdminToken, -admin-token-file)", a.addr)
	}
	return net.JoinHostPort(host, port), nil
}

func (a adminConfig) check() []error {
	if a.addr == "" {
		if a.token != "" {
			return []error{errors.New("an admin token without an admin address (WithAdminAddr, -admin-addr)")}
		}
		return nil
	}
	if _, err := a.bindAddr(); err != nil {
		return []error{err}
	}
	return nil
}
