package sasl

import (
	"testing"
	"time"
)

// TestSession: a session ends after its lifetime, a re-authentication
// must keep the principal and may begin at most once a second, and
// without a lifetime the session never ends.
func TestSession(t *testing.T) {
	now := time.Unix(1000, 0)
	var s Session
	if f := s.Complete(&Exchange{}, "alice", false, time.Minute, now); f != nil || s.Principal != "alice" || !s.Ends() {
		t.Fatalf("first exchange: %v, %+v", f, s)
	}
	if got := s.LifetimeMillis(time.Minute, now); got != 60000 {
		t.Fatalf("lifetime %d ms", got)
	}
	if _, expired := s.Expired(now.Add(59 * time.Second)); expired {
		t.Fatal("expired early")
	}
	if ago, expired := s.Expired(now.Add(61 * time.Second)); !expired || ago != time.Second {
		t.Fatalf("expired %v, %v ago", expired, ago)
	}
	if !s.BeginReauth(now) || s.BeginReauth(now.Add(500*time.Millisecond)) || !s.BeginReauth(now.Add(time.Second)) {
		t.Fatal("re-authentication pace is not one a second")
	}
	if f := s.Complete(&Exchange{}, "bob", true, time.Minute, now); f == nil || s.Principal != "alice" {
		t.Fatalf("re-authentication as another user: %v, principal %q", f, s.Principal)
	}
	if f := s.Complete(&Exchange{}, "alice", true, 0, now); f != nil || s.Ends() || s.LifetimeMillis(0, now) != 0 {
		t.Fatalf("without a lifetime: %v, ends %v", f, s.Ends())
	}
}
