package minikafka

// Listeners: their specs (WithListeners, ParseListeners) and the checks
// on them, binding them at Start, and what Broker.Listeners reports.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Security protocols of a listener, as in Kafka's
// listener.security.protocol.map.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

var securityProtocols = []string{Plaintext, SSL, SASLPlaintext, SASLSSL}

// ListenerSpec is one named listener: Kafka's listeners,
// advertised.listeners and listener.security.protocol.map entries for one
// name.
type ListenerSpec struct {
	// Name identifies the listener (e.g. "INTERNAL"); names are case
	// insensitive and reported in upper case.
	Name string
	// Addr is the bind address, host:port; port 0 picks a free port.
	Addr string
	// Advertised is the host:port handed to clients that came in on this
	// listener (Metadata, FindCoordinator, DescribeCluster). Empty host:
	// the listen host (localhost if it is empty or 0.0.0.0/::); port 0 or
	// no Advertised at all: the bound port.
	Advertised string
	// Security is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; empty means
	// Name when Name is one of them (Kafka's default map). SSL listeners
	// use WithTLS's config, SASL ones WithSASL's users.
	Security string
}

// ListenerInfo is a running listener.
type ListenerInfo struct {
	Name     string
	Security string
	// Addr is the bound address (with the real port).
	Addr net.Addr
	// Advertised is the host:port clients on this listener are given.
	Advertised string
	// Node is the node ID of the cluster node the listener belongs to
	// (WithNodes); every node has each listener.
	Node int32
}

// ParseListeners reads Kafka's listeners, advertised.listeners and
// listener.security.protocol.map syntax:
//
//	listeners:  INTERNAL://:9092,EXTERNAL://0.0.0.0:29092
//	advertised: INTERNAL://minikafka:9092,EXTERNAL://localhost:29092
//	protocols:  INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL
//
// advertised and protocols may be empty. A listener not in advertised is
// advertised as ListenerSpec.Advertised "" says; a name that is a security
// protocol maps to it unless protocols says otherwise. The result is
// checked as Start checks WithListeners.
func ParseListeners(listeners, advertised, protocols string) ([]ListenerSpec, error) {
	var specs []ListenerSpec
	index := map[string]int{}
	eps, err := parseEndpoints("listeners", listeners)
	if err != nil {
		return nil, err
	}
	for _, ep := range eps {
		index[ep[0]] = len(specs)
		specs = append(specs, ListenerSpec{Name: ep[0], Addr: ep[1]})
	}
	if len(specs) == 0 {
		return nil, errors.New("listeners: none given")
	}
	if eps, err = parseEndpoints("advertised listeners", advertised); err != nil {
		return nil, err
	}
	for _, ep := range eps {
		i, ok := index[ep[0]]
		if !ok {
			return nil, fmt.Errorf("advertised listener %s is not one of the listeners (%s)", ep[0], names(specs))
		}
		specs[i].Advertised = ep[1]
	}
	seen := map[string]bool{}
	for _, entry := range splitComma(protocols) {
		name, proto, ok := strings.Cut(entry, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		switch {
		case !ok || name == "":
			return nil, fmt.Errorf("listener security protocol map: %q: want NAME:PROTOCOL", entry)
		case !slices.Contains(securityProtocols, proto):
			return nil, fmt.Errorf("listener security protocol map: %q: unknown security protocol %q (want %s)", entry, proto, strings.Join(securityProtocols, ", "))
		case seen[name]:
			return nil, fmt.Errorf("listener security protocol map: %s given twice", name)
		}
		seen[name] = true
		// Entries for names that are not listeners are allowed, as
		// Kafka's default map lists all four protocols.
		if i, ok := index[name]; ok {
			specs[i].Security = proto
		}
	}
	if err := checkListeners(specs); err != nil {
		return nil, err
	}
	return specs, nil
}

// parseEndpoints splits "NAME://host:port,..." into {NAME, host:port}.
func parseEndpoints(what, s string) ([][2]string, error) {
	var out [][2]string
	seen := map[string]bool{}
	for _, entry := range splitComma(s) {
		name, addr, ok := strings.Cut(entry, "://")
		name = strings.ToUpper(name)
		if !ok {
			return nil, fmt.Errorf("%s: %q: want NAME://host:port", what, entry)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: %s given twice", what, name)
		}
		seen[name] = true
		out = append(out, [2]string{name, addr})
	}
	return out, nil
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func names(specs []ListenerSpec) string {
	var ns []string
	for _, s := range specs {
		ns = append(ns, s.Name)
	}
	return strings.Join(ns, ", ")
}

// checkListeners validates specs and fills in Name's case and Security.
func checkListeners(specs []ListenerSpec) error {
	var errs []error
	seen := map[string]bool{}
	type bind struct{ host, name string }
	ports := map[int][]bind{}
	for i := range specs {
		s := &specs[i]
		s.Name = strings.ToUpper(strings.TrimSpace(s.Name))
		s.Security = strings.ToUpper(strings.TrimSpace(s.Security))
		if !validListenerName(s.Name) {
			errs = append(errs, fmt.Errorf("listener name %q: want letters, digits, '_' or '-'", s.Name))
			continue
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("listener %s given twice", s.Name))
		}
		seen[s.Name] = true
		if s.Security == "" && slices.Contains(securityProtocols, s.Name) {
			s.Security = s.Name
		}
		switch {
		case s.Security == "":
			errs = append(errs, fmt.Errorf("listener %s: no security protocol (map it to one of %s)", s.Name, strings.Join(securityProtocols, ", ")))
		case !slices.Contains(securityProtocols, s.Security):
			errs = append(errs, fmt.Errorf("listener %s: unknown security protocol %q (want %s)", s.Name, s.Security, strings.Join(securityProtocols, ", ")))
		}
		host, port, err := splitPort(s.Addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("listener %s: address %q: %v", s.Name, s.Addr, err))
			continue
		}
		if s.Advertised != "" {
			if h, _, err := splitPort(s.Advertised); err != nil {
				errs = append(errs, fmt.Errorf("listener %s: advertised address %q: %v", s.Name, s.Advertised, err))
			} else if isUnspecified(h) {
				// Kafka refuses it too: no client can connect to it.
				errs = append(errs, fmt.Errorf("listener %s: advertised address %q: cannot advertise the unspecified address; give a host clients can reach", s.Name, s.Advertised))
			}
		}
		if port == 0 {
			continue
		}
		// Two listeners cannot share a port unless both name distinct
		// addresses (an IPv4 and an IPv6 one, say).
		for _, o := range ports[port] {
			if o.host == host || o.host == "" || host == "" || isUnspecified(o.host) || isUnspecified(host) {
				errs = append(errs, fmt.Errorf("listeners %s and %s both use port %d", o.name, s.Name, port))
				break
			}
		}
		ports[port] = append(ports[port], bind{host, s.Name})
	}
	if len(specs) == 0 {
		errs = append(errs, errors.New("WithListeners: no listeners"))
	}
	return errors.Join(errs...)
}

func validListenerName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func splitPort(hostport string) (string, int, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, errors.New("want host:port")
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return host, int(port), nil
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
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

// boundListener is a listener bound by Start.
type boundListener struct {
	spec       ListenerSpec
	ln         net.Listener
	host       string // advertised
	port       int
	tls        *tls.Config
	preAuthMax int32
	node       int32 // the cluster node it belongs to (WithNodes)
}

// shiftPort adds i to addr's port unless it is 0 or absent.
func shiftPort(addr string, i int) string {
	if i == 0 || addr == "" {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	n, err := strconv.Atoi(port)
	if err != nil || n == 0 {
		return addr
	}
	return net.JoinHostPort(host, strconv.Itoa(n+i))
}

func closeListeners(ls []boundListener) {
	for _, l := range ls {
		l.ln.Close()
	}
}
