// Package listeners holds the broker's listeners as clients see them:
// the advertised address, the named listeners of Kafka's
// advertised.listeners (one set per node in a simulated cluster), which
// of them require SASL, and which address to hand a client for a node
// given the listener its request came in on (Kafka answers with the
// endpoint of that listener).
//
// It knows nothing of requests or connections: the broker passes the
// listener name and node a connection carries, and whether the cluster
// has more than one node.
package listeners

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Listener is one named listener as clients see it (an entry of Kafka's
// advertised.listeners and listener.security.protocol.map).
type Listener struct {
	// Name matches protocol.Config.ListenerName of the listener's server.
	Name string
	// Host and Port are the advertised address.
	Host string
	Port int32
	// SASL requires connections on this listener to authenticate
	// (SASL_PLAINTEXT, SASL_SSL); it needs Config.SASL.
	SASL bool
	// Node is the node the listener belongs to (protocol.Config.Node of
	// its server); every node of a cluster has the same listener names.
	Node int32
}

// Set is the advertised address and the listeners. Its methods are safe
// for concurrent use: each part is replaced whole.
type Set struct {
	host atomic.Pointer[string]
	port atomic.Int32
	ls   atomic.Pointer[[]Listener] // nil: the one advertised listener
}

// SetAdvertised changes the advertised address.
func (s *Set) SetAdvertised(host string, port int32) {
	s.host.Store(&host)
	s.port.Store(port)
}

// Advertised returns the advertised host and port (the first listener's).
func (s *Set) Advertised() (string, int32) { return *s.host.Load(), s.port.Load() }

// Set replaces the listeners; the first one also becomes Advertised. A
// name given twice for a node is refused, as is a SASL listener when
// haveSASL is false.
func (s *Set) Set(ls []Listener, haveSASL bool) error {
	type key struct {
		name string
		node int32
	}
	seen := map[key]bool{}
	for _, l := range ls {
		switch {
		case seen[key{l.Name, l.Node}]:
			return fmt.Errorf("broker: listener %q given twice (node %d)", l.Name, l.Node)
		case l.SASL && !haveSASL:
			return fmt.Errorf("broker: listener %q requires SASL but no SASL users are configured", l.Name)
		}
		seen[key{l.Name, l.Node}] = true
	}
	if len(ls) == 0 {
		s.ls.Store(nil)
		return nil
	}
	ls = slices.Clone(ls)
	s.ls.Store(&ls)
	s.SetAdvertised(ls[0].Host, ls[0].Port)
	return nil
}

// List returns a copy of the listeners; nil with the single advertised
// listener.
func (s *Set) List() []Listener {
	if p := s.ls.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// Named reports whether listeners were set.
func (s *Set) Named() bool { return s.ls.Load() != nil }

// Find returns the listener named name of node (of any node when the
// cluster is a single one).
func (s *Set) Find(name string, node int32, multi bool) (Listener, bool) {
	p := s.ls.Load()
	if p == nil {
		return Listener{}, false
	}
	for _, l := range *p {
		if l.Name == name && (l.Node == node || !multi) {
			return l, true
		}
	}
	return Listener{}, false
}

// NodeAddr is node's advertised address on the listener named name, or
// on its first listener when it has none of that name. Without named
// listeners only firstNode (the cluster's first) has an address, the
// advertised one.
func (s *Set) NodeAddr(node int32, name string, firstNode int32, multi bool) (string, int32, bool) {
	p := s.ls.Load()
	if p == nil {
		if node == firstNode {
			h, port := s.Advertised()
			return h, port, true
		}
		return "", -1, false
	}
	var first *Listener
	for i, l := range *p {
		if l.Node != node && multi {
			continue
		}
		if l.Name == name {
			return l.Host, l.Port, true
		}
		if first == nil {
			first = &(*p)[i]
		}
	}
	if first == nil {
		return "", -1, false
	}
	return first.Host, first.Port, true
}

// WantsSASL reports whether a connection of listener name on node must
// authenticate, given that SASL is configured: with listeners set, only
// those marked SASL do (a connection of an unknown listener must, failing
// closed); without, every connection does. known is false for a
// connection that carries no listener.
func (s *Set) WantsSASL(name string, node int32, known, multi bool) bool {
	if !s.Named() {
		return true
	}
	if !known {
		return true
	}
	l, ok := s.Find(name, node, multi)
	return !ok || l.SASL
}
