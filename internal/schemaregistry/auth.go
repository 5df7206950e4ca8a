package schemaregistry

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
)

// HTTP basic authentication (Config.Authenticate). A password check is
// deliberately slow (a SCRAM credential is a PBKDF2 derivation), so
// successes are remembered for a while, keyed by a hash of the user and
// password, and at most two checks run at once (the rest wait).
const (
	authCacheTTL  = time.Minute
	authCacheSize = 1024
)

type authCache struct {
	slots chan struct{}
	mu    sync.Mutex
	ok    map[[32]byte]time.Time // hash of user and password → expiry
}

func newAuthCache() *authCache {
	return &authCache{slots: make(chan struct{}, 2), ok: map[[32]byte]time.Time{}}
}

// allowed checks req's basic credentials with check.
func (a *authCache) allowed(req *http.Request, check func(user, pass string) bool) bool {
	user, pass, ok := req.BasicAuth()
	if !ok || user == "" {
		return false
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	now := time.Now()
	a.mu.Lock()
	exp, hit := a.ok[key]
	a.mu.Unlock()
	if hit && now.Before(exp) {
		return true
	}
	select {
	case a.slots <- struct{}{}:
	case <-req.Context().Done():
		return false
	}
	good := check(user, pass)
	<-a.slots
	if good {
		a.mu.Lock()
		if len(a.ok) >= authCacheSize {
			clear(a.ok)
		}
		a.ok[key] = now.Add(authCacheTTL)
		a.mu.Unlock()
	}
	return good
}
