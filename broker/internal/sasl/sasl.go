package sasl

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker/internal/oauth"
)

// Mechanism names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	// OAuthBearer needs Config.OAuth (oauth.go); it is not in Mechanisms,
	// which are enabled by default.
	OAuthBearer = "OAUTHBEARER"
)

// Mechanisms lists the mechanisms served with passwords.
var Mechanisms = []string{Plain, ScramSHA256, ScramSHA512}

// DefaultSCRAMIterations is Kafka's minimum (and kafka-configs' default)
// for SCRAM-SHA-256 and -512.
const DefaultSCRAMIterations = 4096

// Config requires SASL authentication on every connection.
type Config struct {
	// Mechanisms are the enabled mechanisms (Mechanisms' names);
	// empty enables all of them.
	Mechanisms []string
	// Users maps user names to passwords.
	Users map[string]string
	// Iterations for SCRAM credentials; 0 means DefaultSCRAMIterations,
	// fewer than 4096 is refused as Kafka does.
	Iterations int
	// MaxReauth is Kafka's connections.max.reauth.ms: when > 0 (at least
	// a millisecond), a session lasts that long and the client must
	// re-authenticate on the connection before it ends (KIP-368); 0 means
	// sessions never end.
	MaxReauth time.Duration
	// OAuth enables OAUTHBEARER (oauth.go); with it Users may be empty.
	OAuth *OAuthConfig

	// Delegation tokens (KIP-48, broker/internal/dtoken) are on with
	// SASL. DelegationTokenSecret is Kafka's delegation.token.secret.key,
	// the key of the tokens' HMACs; empty: one is generated on first start
	// and kept in the data dir. DelegationTokenMaxLifetime is
	// delegation.token.max.lifetime.ms (0: 7 days),
	// DelegationTokenExpiryTime delegation.token.expiry.time.ms (0: 1 day).
	DelegationTokenSecret      string
	DelegationTokenMaxLifetime time.Duration
	DelegationTokenExpiryTime  time.Duration
}

// Server holds the enabled mechanisms and the credentials derived at
// start. It is read-only once built and shared by every connection.
type Server struct {
	mechanisms []string
	plain      map[string]plainCred
	scram      map[string]map[string]*Cred // mechanism → user
	lifetime   time.Duration               // MaxReauth in whole milliseconds
	oauth      *oauth.Config               // OAUTHBEARER's validator; nil: not enabled
	now        func() time.Time
}

// NewServer validates cfg and derives every credential; now is the clock
// tokens are checked against (nil: time.Now).
func NewServer(cfg Config, now func() time.Time) (*Server, error) {
	if now == nil {
		now = time.Now
	}
	s := &Server{plain: map[string]plainCred{}, scram: map[string]map[string]*Cred{}, now: now}
	mechs := cfg.Mechanisms
	if len(mechs) == 0 {
		mechs = Mechanisms
		if cfg.OAuth != nil {
			mechs = append(slices.Clone(mechs), OAuthBearer)
		}
	}
	if err := s.setupOAuth(cfg, mechs); err != nil {
		return nil, err
	}
	for _, m := range mechs {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == OAuthBearer && s.oauth != nil {
			if !slices.Contains(s.mechanisms, m) {
				s.mechanisms = append(s.mechanisms, m)
			}
			continue
		}
		if !slices.Contains(Mechanisms, m) {
			return nil, fmt.Errorf("unknown SASL mechanism %q (want %s)", m, strings.Join(Mechanisms, ", "))
		}
		if !slices.Contains(s.mechanisms, m) {
			s.mechanisms = append(s.mechanisms, m)
		}
	}
	if len(cfg.Users) == 0 && s.oauth == nil {
		return nil, errors.New("SASL enabled without users")
	}
	if cfg.MaxReauth < 0 || cfg.MaxReauth > 0 && cfg.MaxReauth < time.Millisecond {
		return nil, fmt.Errorf("SASL MaxReauth %v: want 0 (off) or at least 1ms", cfg.MaxReauth)
	}
	s.lifetime = cfg.MaxReauth.Truncate(time.Millisecond)
	iters := cfg.Iterations
	if iters == 0 {
		iters = DefaultSCRAMIterations
	}
	if iters < DefaultSCRAMIterations {
		return nil, fmt.Errorf("%d SCRAM iterations is less than the minimum %d", iters, DefaultSCRAMIterations)
	}
	users := make([]string, 0, len(cfg.Users))
	for u := range cfg.Users {
		if u == "" {
			return nil, errors.New("SASL user with an empty name")
		}
		users = append(users, u)
	}
	sort.Strings(users)
	for _, m := range s.mechanisms {
		if m == OAuthBearer {
			continue
		}
		for _, u := range users {
			pass := cfg.Users[u]
			if m == Plain {
				var c plainCred
				if _, err := rand.Read(c.salt[:]); err != nil {
					return nil, err
				}
				c.hash = plainHash(c.salt, pass)
				s.plain[u] = c
				continue
			}
			c, err := newCred(scramHashes[m], pass, iters)
			if err != nil {
				return nil, err
			}
			if s.scram[m] == nil {
				s.scram[m] = map[string]*Cred{}
			}
			s.scram[m][u] = c
		}
	}
	return s, nil
}

// Mechanisms returns the enabled mechanisms, in configuration order; the
// caller must not modify the slice.
func (s *Server) Mechanisms() []string { return s.mechanisms }

// Enabled reports whether mech is one of the enabled mechanisms.
func (s *Server) Enabled(mech string) bool { return slices.Contains(s.mechanisms, mech) }

// Lifetime is a session's length (MaxReauth in whole milliseconds); 0:
// sessions never end.
func (s *Server) Lifetime() time.Duration { return s.lifetime }

// Failure is a failed exchange: Msg goes to the client (Kafka's text),
// Reason only to the log. Generic marks GenericMessage's text, which names
// the exchange (authentication or re-authentication): the caller, which
// knows which it is, rewrites Msg.
type Failure struct {
	Msg, Reason string
	Generic     bool
}

func (e *Failure) Error() string { return e.Reason }

// genericFailure is Kafka's answer when the reason must not leak to an
// unauthenticated client (unknown user, wrong proof, malformed message).
func genericFailure(mech, reason string) *Failure {
	return &Failure{Msg: GenericMessage("authentication", mech), Reason: reason, Generic: true}
}

// GenericMessage is Kafka's text for a failure whose reason is not told:
// exchange is "authentication" or "re-authentication".
func GenericMessage(exchange, mech string) string {
	return "Authentication failed during " + exchange + " due to invalid credentials with SASL mechanism " + mech
}

// Exchange is one authentication exchange on a connection: the chosen
// mechanism's state between the client's messages. It is not safe for
// concurrent use (a connection sends one token at a time).
type Exchange struct {
	srv   *Server
	store *Store
	mech  string

	user      string
	userKnown bool
	scram     *scramServer

	oauthErr, oauthReason string    // OAUTHBEARER: the error sent, awaiting the client's %x01
	expires               time.Time // OAUTHBEARER: the token's expiry; SCRAM tokenauth: the delegation token's
	tokenID               string    // SCRAM tokenauth: the delegation token that authenticated
}

// TokenID is the delegation token a completed SCRAM exchange
// authenticated with (tokenauth=true), "" for a password.
func (x *Exchange) TokenID() string { return x.tokenID }

// NewExchange starts an exchange with mech, one of the enabled
// mechanisms. SCRAM credentials are looked up in store at the client's
// first message (a nil store: the start-up credentials only).
func (s *Server) NewExchange(mech string, store *Store) *Exchange {
	return &Exchange{srv: s, store: store, mech: mech}
}

// User is the user name the client gave, once the mechanism has read one
// (ok false before, and for OAUTHBEARER until a token is valid).
func (x *Exchange) User() (user string, ok bool) { return x.user, x.userKnown }

// Expires is when the credential of a completed exchange stops being
// valid (an OAUTHBEARER token's exp, a delegation token's expiry); zero
// when it does not expire.
func (x *Exchange) Expires() time.Time { return x.expires }

// Step feeds one client message to the mechanism: out is the server's
// answer, done reports the exchange complete and successful. After a
// Failure the exchange is over and the connection must close.
func (x *Exchange) Step(token []byte) (out []byte, done bool, f *Failure) {
	switch x.mech {
	case Plain:
		return x.plainStep(token)
	case ScramSHA256, ScramSHA512:
		if x.scram == nil {
			x.scram = &scramServer{mech: x.mech, hash: scramHashes[x.mech], lookup: x.scramLookup()}
			if x.store != nil {
				x.scram.tokens = x.store.tokenSource()
			}
		}
		out, done, f := x.scram.step(token)
		x.user, x.userKnown = x.scram.user, true
		if done && f == nil && x.scram.tokenID != "" {
			x.tokenID, x.expires = x.scram.tokenID, x.scram.expires
		}
		return out, done, f
	case OAuthBearer:
		if x.srv.oauth != nil {
			return x.oauthStep(token)
		}
	}
	return nil, false, genericFailure(x.mech, "no mechanism chosen")
}

func (x *Exchange) scramLookup() func(user string) *Cred {
	if x.store != nil {
		return func(user string) *Cred { return x.store.Get(user, x.mech) }
	}
	creds := x.srv.scram[x.mech]
	return func(user string) *Cred { return creds[user] }
}

type plainCred struct {
	salt [16]byte
	hash [sha256.Size]byte
}

func plainHash(salt [16]byte, pass string) [sha256.Size]byte {
	return sha256.Sum256(append(salt[:], pass...))
}
