package protocol

// SetRefusing takes the server down for clients without unbinding its
// port (a test's "broker down"): every open connection is closed and new
// ones are closed as soon as accepted, until SetRefusing(false). Keeping
// the listener means the broker comes back on the same port.
func (s *Server) SetRefusing(on bool) {
	s.refusing.Store(on)
	if !on {
		return
	}
	s.mu.Lock()
	for c := range s.conns {
		c.abort()
	}
	s.mu.Unlock()
}

// Refusing reports whether SetRefusing(true) is in force.
func (s *Server) Refusing() bool { return s.refusing.Load() }
