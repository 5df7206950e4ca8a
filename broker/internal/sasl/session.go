package sasl

import (
	"fmt"
	"time"
)

// MinReauthInterval is Kafka's limit of one re-authentication a second
// per connection.
const MinReauthInterval = time.Second

// Session is what a connection's completed exchanges leave behind: who
// authenticated, with what, and when the session ends (KIP-368). The
// broker keeps one per connection beside its state machine; a connection
// serves one request at a time, so Session has no lock.
type Session struct {
	// Principal is the authenticated user, kept through
	// re-authentication; "" until the first exchange completes.
	Principal string
	// TokenID is the delegation token the session authenticated with;
	// "" for a password.
	TokenID string

	expires    time.Time // end of the session; zero: never
	tokenExp   time.Time // the credential's expiry (OAUTHBEARER, delegation token)
	lastReauth time.Time // start of the last re-authentication
}

// Complete ends x, a successful exchange that authenticated user, at now:
// the session begins and ends lifetime later (Server.Lifetime; 0: never)
// or at the credential's expiry, whichever is first. A re-authentication
// (reauth) must keep the principal, else it fails with Kafka's message.
func (s *Session) Complete(x *Exchange, user string, reauth bool, lifetime time.Duration, now time.Time) *Failure {
	if reauth && user != s.Principal {
		return &Failure{
			Msg:    fmt.Sprintf("Cannot change principals during re-authentication from User.%s: User.%s", s.Principal, user),
			Reason: "re-authentication as another user (was " + s.Principal + ")",
		}
	}
	s.Principal, s.tokenExp, s.TokenID = user, x.Expires(), x.TokenID()
	s.expires = time.Time{}
	if lifetime > 0 {
		s.expires = now.Add(lifetime)
	}
	// A token's expiry ends the session too (Kafka's credential lifetime).
	if !s.tokenExp.IsZero() && (s.expires.IsZero() || s.tokenExp.Before(s.expires)) {
		s.expires = s.tokenExp
	}
	return nil
}

// Ends reports whether the session has an end; one without never expires
// and cannot be re-authenticated.
func (s *Session) Ends() bool { return !s.expires.IsZero() }

// BeginReauth reports whether a re-authentication may begin at now (at
// most one a second, expired or not) and if so notes it.
func (s *Session) BeginReauth(now time.Time) bool {
	if !s.lastReauth.IsZero() && now.Sub(s.lastReauth) < MinReauthInterval {
		return false
	}
	s.lastReauth = now
	return true
}

// Expired reports whether the session has ended at now, and how long ago.
func (s *Session) Expired(now time.Time) (ago time.Duration, expired bool) {
	return now.Sub(s.expires), s.Ends() && now.After(s.expires)
}

// LifetimeMillis is SaslAuthenticate's session_lifetime_ms for the
// exchange just completed: lifetime's, or until the session's end when a
// credential's expiry shortened it, 0 without an end.
func (s *Session) LifetimeMillis(lifetime time.Duration, now time.Time) int64 {
	if s.tokenExp.IsZero() || s.expires.IsZero() {
		return lifetime.Milliseconds()
	}
	return max(s.expires.Sub(now).Milliseconds(), 1)
}
