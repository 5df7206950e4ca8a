package protocol

// Conns returns how many client connections are open (metrics).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
