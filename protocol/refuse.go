package protocol

import (
	"fmt"
	"net"
)

// SetRefusing takes the server down for clients (a test's "broker down"):
// every open connection is closed and a TCP listener is unbound, so new
// connections are refused (ECONNREFUSED) as by a stopped broker, until
// SetRefusing(false) binds the same address again. A listener of another
// kind (Config.Listener from a custom transport) stays bound and resets
// each new connection instead. An error means the address could not be
// bound again (another process took the port): the server stays down.
func (s *Server) SetRefusing(on bool) error {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if !on {
		if s.unbound {
			ln, err := net.Listen("tcp", s.lnAddr.String())
			if err != nil {
				return fmt.Errorf("protocol: binding %s again: %w", s.lnAddr, err)
			}
			s.ln, s.unbound = ln, false
			close(s.rebound)
			s.rebound = make(chan struct{})
		}
		s.refusing.Store(false)
		return nil
	}
	s.refusing.Store(true)
	if _, tcp := s.ln.Addr().(*net.TCPAddr); tcp && !s.unbound && !s.closing.Load() {
		s.unbound = true
		s.ln.Close() // Serve's Accept fails and waits for rebound
	}
	s.mu.Lock()
	for c := range s.conns {
		c.abort()
	}
	s.mu.Unlock()
	return nil
}

// Refusing reports whether SetRefusing(true) is in force.
func (s *Server) Refusing() bool { return s.refusing.Load() }

// listener is the listener to accept on now, and the channel closed when
// an unbound one is bound again.
func (s *Server) listener() (net.Listener, bool, chan struct{}) {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return s.ln, s.unbound, s.rebound
}
