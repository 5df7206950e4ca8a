package minikafka

import (
	"fmt"
	"net"
	"strconv"
)

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
