package broker

// SASL authentication, as Kafka's SaslServerAuthenticator does it.
//
// With Config.SASL set, every client connection starts unauthenticated and
// walks this state machine (per connection, in protocol.ConnInfo.Auth):
//
//	initial ──ApiVersions──► handshake ──SaslHandshake──► authenticate ──tokens──► done
//	   └───────────────SaslHandshake──────────────────────┘
//
// Before the handshake, any other request closes the connection without an
// answer (a second ApiVersions too, as in Kafka). After SaslHandshake v1,
// a request other than SaslAuthenticate gets its own error response with
// ILLEGAL_SASL_STATE (Kafka's getErrorResponse, errorResponse here), then
// the connection closes. SaslHandshake v1 is followed by
// SaslAuthenticate requests; v0 by bare size-prefixed tokens (protocol's
// raw mode). An unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM
// with the enabled list, bad credentials SASL_AUTHENTICATION_FAILED with a
// message (framed) — then the connection is closed. Raw-mode failures just
// close, as Kafka does. Each failure is logged once with the client's
// address and user name, never a password or proof.
//
// Credentials are derived at start: SCRAM ones (RFC 5802, salt random, 4096
// iterations) per mechanism, and for PLAIN a salted SHA-256 of the
// password, so the plaintext passwords are not kept. SCRAM credentials
// can be changed at run time with AlterUserScramCredentials; each SCRAM
// exchange looks its user up then (scram_store.go).
//
// Re-authentication (KIP-368). With SASLConfig.MaxReauth (Kafka's
// connections.max.reauth.ms) > 0, a session ends that long after its
// authentication completed; SaslAuthenticate v1+ tells the client so
// (session_lifetime_ms). On an authenticated connection with a session end,
// a SaslHandshake starts a re-authentication, at most one a second (a
// quicker one is answered ILLEGAL_SASL_STATE, as Kafka's KafkaApis does),
// expired or not; it then runs like the first exchange (a request
// pipelined behind the handshake gets ILLEGAL_SASL_STATE and the close) and
// must keep the mechanism and the user:
// another enabled mechanism is answered but the next request closes the
// connection without an answer, another user gets SASL_AUTHENTICATION_FAILED
// ("Cannot change principals ..."). Requests sent before the handshake are
// answered first, in order. Once the session has ended, any request other
// than SaslHandshake closes the connection without an answer (logged), as
// Kafka's SocketServer does; clients that cannot re-authenticate (raw
// tokens, SaslAuthenticate v0) are cut off that way too. With MaxReauth 0
// sessions never end (session_lifetime_ms 0).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/oauth"
	"github.com/minikafka/minikafka/protocol"
)

// SASL mechanism names.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
	// SASLOAuthBearer needs SASLConfig.OAuth (sasl_oauth.go); it is not
	// in SASLMechanisms, which are enabled by default.
	SASLOAuthBearer = "OAUTHBEARER"
)

// SASLMechanisms lists the mechanisms minikafka serves.
var SASLMechanisms = []string{SASLPlain, SASLScramSHA256, SASLScramSHA512}

// DefaultSCRAMIterations is Kafka's minimum (and kafka-configs' default)
// for SCRAM-SHA-256 and -512.
const DefaultSCRAMIterations = 4096

// PreAuthMaxRequestBytes is Kafka's sasl.server.max.receive.size: the frame
// cap before a connection has authenticated.
const PreAuthMaxRequestBytes = 512 << 10

// SASLConfig requires SASL authentication on every connection.
type SASLConfig struct {
	// Mechanisms are the enabled mechanisms (SASLMechanisms' names);
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
	// OAuth enables OAUTHBEARER (sasl_oauth.go); with it Users may be
	// empty.
	OAuth *OAuthConfig
}

// minReauthInterval is Kafka's limit of one re-authentication a second
// per connection.
const minReauthInterval = time.Second

// saslServer holds the derived credentials.
type saslServer struct {
	mechanisms []string
	plain      map[string]plainCred
	scram      map[string]map[string]*scramCred // mechanism → user
	lifetime   time.Duration                    // MaxReauth in whole milliseconds
	oauth      *oauth.Config                    // OAUTHBEARER's validator; nil: not enabled
}

type plainCred struct {
	salt [16]byte
	hash [sha256.Size]byte
}

func plainHash(salt [16]byte, pass string) [sha256.Size]byte {
	return sha256.Sum256(append(salt[:], pass...))
}

// newSASLServer validates cfg and derives every credential.
func newSASLServer(cfg SASLConfig) (*saslServer, error) {
	s := &saslServer{plain: map[string]plainCred{}, scram: map[string]map[string]*scramCred{}}
	mechs := cfg.Mechanisms
	if len(mechs) == 0 {
		mechs = SASLMechanisms
		if cfg.OAuth != nil {
			mechs = append(slices.Clone(mechs), SASLOAuthBearer)
		}
	}
	if err := s.setupOAuth(cfg, mechs); err != nil {
		return nil, err
	}
	for _, m := range mechs {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == SASLOAuthBearer && s.oauth != nil {
			if !slices.Contains(s.mechanisms, m) {
				s.mechanisms = append(s.mechanisms, m)
			}
			continue
		}
		if !slices.Contains(SASLMechanisms, m) {
			return nil, fmt.Errorf("broker: unknown SASL mechanism %q (want %s)", m, strings.Join(SASLMechanisms, ", "))
		}
		if !slices.Contains(s.mechanisms, m) {
			s.mechanisms = append(s.mechanisms, m)
		}
	}
	if len(cfg.Users) == 0 && s.oauth == nil {
		return nil, errors.New("broker: SASL enabled without users")
	}
	if cfg.MaxReauth < 0 || cfg.MaxReauth > 0 && cfg.MaxReauth < time.Millisecond {
		return nil, fmt.Errorf("broker: SASL MaxReauth %v: want 0 (off) or at least 1ms", cfg.MaxReauth)
	}
	s.lifetime = cfg.MaxReauth.Truncate(time.Millisecond)
	iters := cfg.Iterations
	if iters == 0 {
		iters = DefaultSCRAMIterations
	}
	if iters < DefaultSCRAMIterations {
		return nil, fmt.Errorf("broker: %d SCRAM iterations is less than the minimum %d", iters, DefaultSCRAMIterations)
	}
	users := make([]string, 0, len(cfg.Users))
	for u := range cfg.Users {
		if u == "" {
			return nil, errors.New("broker: SASL user with an empty name")
		}
		users = append(users, u)
	}
	sort.Strings(users)
	for _, m := range s.mechanisms {
		if m == SASLOAuthBearer {
			continue
		}
		for _, u := range users {
			pass := cfg.Users[u]
			if m == SASLPlain {
				var c plainCred
				if _, err := rand.Read(c.salt[:]); err != nil {
					return nil, err
				}
				c.hash = plainHash(c.salt, pass)
				s.plain[u] = c
				continue
			}
			c, err := newScramCred(scramHashes[m], pass, iters)
			if err != nil {
				return nil, err
			}
			if s.scram[m] == nil {
				s.scram[m] = map[string]*scramCred{}
			}
			s.scram[m][u] = c
		}
	}
	return s, nil
}

type saslPhase uint8

const (
	saslInitial      saslPhase = iota // ApiVersions or SaslHandshake
	saslHandshake                     // after ApiVersions: SaslHandshake only
	saslAuthenticate                  // tokens for the chosen mechanism
	saslDone
	saslReauthBadMech // re-authentication asked for another mechanism: the next frame closes
)

// saslConn is one connection's progress, in ConnInfo.Auth.
type saslConn struct {
	phase  saslPhase
	mech   string
	framed bool // SaslHandshake v1: tokens come in SaslAuthenticate requests
	user   string
	scram  *scramServer

	principal  string    // the authenticated user, kept through re-authentication
	reauth     bool      // the exchange under way is a re-authentication
	expires    time.Time // end of the session; zero: never
	lastReauth time.Time // start of the last re-authentication
	badMech    string    // why saslReauthBadMech closes

	oauthErr, oauthReason string    // OAUTHBEARER: the error sent, awaiting the client's %x01
	tokenExp              time.Time // OAUTHBEARER: the token's expiry, which ends the session
}

// authFailure is a failed exchange: msg goes to the client (Kafka's text),
// reason only to the log. generic marks genericFailure's text, which names
// the exchange (authentication or re-authentication).
type authFailure struct {
	msg, reason string
	generic     bool
}

func (e *authFailure) Error() string { return e.reason }

// genericFailure is Kafka's answer when the reason must not leak to an
// unauthenticated client (unknown user, wrong proof, malformed message).
func genericFailure(mech, reason string) *authFailure {
	return &authFailure{msg: genericMessage("authentication", mech), reason: reason, generic: true}
}

func genericMessage(exchange, mech string) string {
	return "Authentication failed during " + exchange + " due to invalid credentials with SASL mechanism " + mech
}

func (st *saslConn) exchange() string {
	if st.reauth {
		return "re-authentication"
	}
	return "authentication"
}

func saslState(ci *protocol.ConnInfo) *saslConn {
	st, _ := ci.Auth.(*saslConn)
	if st == nil {
		st = &saslConn{}
		ci.Auth = st
	}
	return st
}

// saslActive reports whether req's connection must authenticate (and has
// not yet): SASL on, a network connection (the embedding program's own
// requests are trusted).
func (b *Broker) saslActive(req *protocol.Request) bool {
	return b.saslApplies(req) && saslState(req.Conn).phase != saslDone
}

// saslApplies reports whether req's connection must authenticate: SASL is
// configured, the request came over the network (not from the embedding
// program), and its listener is a SASL one (a PLAINTEXT or SSL listener
// beside SASL ones is not).
func (b *Broker) saslApplies(req *protocol.Request) bool {
	return b.sasl != nil && req.Conn != nil && req.Conn.FromNetwork() && b.listenerWantsSASL(req)
}

// saslGate runs before dispatch. It returns ok when the request goes on
// to the API table; otherwise reply is the answer (or the close).
func (b *Broker) saslGate(ctx context.Context, req *protocol.Request) (reply protocol.Reply, ok bool) {
	if !b.saslApplies(req) {
		return reply, true
	}
	st := saslState(req.Conn)
	if st.phase == saslDone {
		return b.sessionGate(req, st)
	}
	if st.phase == saslReauthBadMech {
		// Kafka's REAUTH_BAD_MECHANISM: whatever comes next fails the
		// re-authentication without an answer.
		b.logBad(req, "SASL re-authentication failed; closing connection", "reason", st.badMech)
		return protocol.Reply{Err: errors.New(st.badMech)}, false
	}
	if req.Raw {
		return b.saslRawToken(req, st), false
	}
	switch {
	case st.phase == saslInitial && req.Key == 18:
		// Kafka answers one ApiVersions before the handshake (several
		// when the version was unsupported: the KIP-511 retry).
		a := lookupAPI(18)
		reply = a.fn(b, ctx, req)
		if r, _ := reply.Response.(*kmsg.ApiVersionsResponse); r != nil && r.ErrorCode == 0 {
			st.phase = saslHandshake
		}
		return reply, false
	case (st.phase == saslInitial || st.phase == saslHandshake) && req.Key == 17:
		return reply, true
	case st.phase == saslAuthenticate && st.framed && req.Key == 36:
		return reply, true
	case st.phase == saslAuthenticate && st.framed:
		// Kafka parses the request and answers with its own error
		// response, then closes.
		if resp := illegalStateResponse(req); resp != nil {
			b.logBad(req, "request during SASL "+st.exchange()+": ILLEGAL_SASL_STATE; closing connection",
				"mechanism", st.mech)
			return protocol.Reply{Response: resp, Err: fmt.Errorf("api key %d during SASL authentication", req.Key)}, false
		}
	}
	b.logBad(req, "request before SASL authentication completed; closing connection",
		"phase", st.phase.String(), "mechanism", st.mech)
	return protocol.Reply{Err: fmt.Errorf("api key %d during SASL authentication", req.Key)}, false
}

// illegalStateResponse is req's ILLEGAL_SASL_STATE answer, or nil where
// Kafka has none and just closes: a version it does not parse, or produce
// with acks=0 (whose getErrorResponse is null).
func illegalStateResponse(req *protocol.Request) kmsg.Response {
	a := lookupAPI(req.Key)
	if a == nil || req.Body == nil {
		return nil
	}
	if p, ok := req.Body.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return nil
	}
	if req.Version < a.min || req.Version > a.max {
		if req.Key != 18 {
			return nil
		}
		// An ApiVersions newer than ours is parsed as v0 (KIP-511).
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	}
	return errorResponse(req.Body, kerr.IllegalSaslState.Code)
}

// sessionGate serves an authenticated connection (Kafka's SocketServer
// checks): a SaslHandshake may begin a re-authentication; after the
// session's end anything else closes the connection.
func (b *Broker) sessionGate(req *protocol.Request, st *saslConn) (protocol.Reply, bool) {
	if st.expires.IsZero() {
		return protocol.Reply{}, true
	}
	now := time.Now()
	if req.Key == 17 && (st.lastReauth.IsZero() || now.Sub(st.lastReauth) >= minReauthInterval) {
		st.lastReauth, st.reauth, st.phase = now, true, saslHandshake
		b.logRoutine(req, "SASL re-authentication begins", "mechanism", st.mech, "user", st.principal)
		return protocol.Reply{}, true
	}
	if now.After(st.expires) {
		b.logReq(slog.LevelInfo, req, "SASL session expired without re-authentication; closing connection",
			"mechanism", st.mech, "user", st.principal, "expired_ago", now.Sub(st.expires).Round(time.Millisecond))
		return protocol.Reply{Err: errors.New("SASL session expired")}, false
	}
	return protocol.Reply{}, true
}

func (p saslPhase) String() string {
	switch p {
	case saslInitial:
		return "initial"
	case saslHandshake:
		return "handshake"
	case saslAuthenticate:
		return "authenticate"
	case saslReauthBadMech:
		return "re-authentication with another mechanism"
	}
	return "done"
}

// saslStep feeds one client token to the connection's mechanism; when the
// exchange completes the session begins (saslComplete).
func (b *Broker) saslStep(req *protocol.Request, st *saslConn, token []byte) (out []byte, done bool, err *authFailure) {
	out, done, err = b.mechStep(st, token)
	if err == nil && done {
		err = b.saslComplete(req, st)
	}
	if err != nil && err.generic {
		err.msg = genericMessage(st.exchange(), st.mech)
	}
	return out, done, err
}

// mechStep runs the mechanism on one token.
func (b *Broker) mechStep(st *saslConn, token []byte) (out []byte, done bool, err *authFailure) {
	switch st.mech {
	case SASLPlain:
		authz, user, pass, perr := parsePlain(token)
		if perr != nil {
			return nil, false, genericFailure(SASLPlain, perr.Error())
		}
		st.user = user
		switch {
		case user == "":
			return nil, false, &authFailure{msg: "Authentication failed: username not specified", reason: "empty user name"}
		case pass == "":
			return nil, false, &authFailure{msg: "Authentication failed: password not specified", reason: "empty password"}
		}
		c, known := b.sasl.plain[user]
		// Hash even for an unknown user, so timing does not tell.
		h := plainHash(c.salt, pass)
		if !known || subtle.ConstantTimeCompare(h[:], c.hash[:]) != 1 {
			reason := "wrong password"
			if !known {
				reason = "unknown user"
			}
			return nil, false, &authFailure{msg: "Authentication failed: Invalid username or password", reason: reason}
		}
		if authz != "" && authz != user {
			return nil, false, &authFailure{msg: "Authentication failed: Client requested an authorization id that is different from username", reason: "authorization id differs from user"}
		}
		return []byte{}, true, nil
	case SASLScramSHA256, SASLScramSHA512:
		if st.scram == nil {
			st.scram = &scramServer{mech: st.mech, hash: scramHashes[st.mech], lookup: b.scramLookup(st.mech)}
		}
		out, done, err := st.scram.step(token)
		st.user = st.scram.user
		return out, done, err
	case SASLOAuthBearer:
		return b.oauthStep(st, token)
	}
	return nil, false, genericFailure(st.mech, "no mechanism chosen")
}

// saslRawToken serves a bare token after SaslHandshake v0.
func (b *Broker) saslRawToken(req *protocol.Request, st *saslConn) protocol.Reply {
	if st.phase != saslAuthenticate || st.framed {
		b.logBad(req, "unexpected raw SASL token; closing connection")
		return protocol.Reply{Err: errors.New("unexpected raw SASL token")}
	}
	token := req.Body.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes
	out, done, ferr := b.saslStep(req, st, token)
	if ferr != nil {
		b.saslLogFailure(req, st, ferr)
		return protocol.Reply{Err: ferr}
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SASLAuthBytes = out
	return protocol.Reply{Response: resp, SASLRaw: !done}
}

func (b *Broker) saslLogFailure(req *protocol.Request, st *saslConn, f *authFailure) {
	b.logBad(req, "SASL "+st.exchange()+" failed; closing connection",
		"mechanism", st.mech, "user", st.user, "reason", f.reason)
}

// saslComplete ends a successful exchange: the session begins (and ends
// MaxReauth later). A re-authentication must keep the user (Kafka's
// principal).
func (b *Broker) saslComplete(req *protocol.Request, st *saslConn) *authFailure {
	if st.reauth && st.user != st.principal {
		return &authFailure{
			msg:    fmt.Sprintf("Cannot change principals during re-authentication from User.%s: User.%s", st.principal, st.user),
			reason: "re-authentication as another user (was " + st.principal + ")",
		}
	}
	what := "SASL authenticated"
	if st.reauth {
		what = "SASL re-authenticated"
	}
	st.phase, st.scram, st.principal, st.reauth = saslDone, nil, st.user, false
	st.expires = time.Time{}
	if b.sasl.lifetime > 0 {
		st.expires = time.Now().Add(b.sasl.lifetime)
	}
	// A token's expiry ends the session too (Kafka's credential lifetime).
	if !st.tokenExp.IsZero() && (st.expires.IsZero() || st.tokenExp.Before(st.expires)) {
		st.expires = st.tokenExp
	}
	req.Conn.SetAuthenticated()
	// Request memory is shared fairly between principals, not connections.
	req.Conn.SetBudgetOwner(st.user)
	b.logRoutine(req, what, "mechanism", st.mech, "user", st.user, "session_lifetime", b.sasl.lifetime)
	return nil
}

// sessionLifetimeMillis is session_lifetime_ms for a completed exchange:
// until the session's end, 0 without one.
func (b *Broker) sessionLifetimeMillis(st *saslConn) int64 {
	if st.tokenExp.IsZero() || st.expires.IsZero() {
		return b.sasl.lifetime.Milliseconds()
	}
	return max(time.Until(st.expires).Milliseconds(), 1)
}

// saslFailed is SaslAuthenticate's error answer; the connection closes
// after it is written.
func saslFailed(version int16, f *authFailure) protocol.Reply {
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = version
	resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
	resp.ErrorMessage = kmsg.StringPtr(f.msg)
	return protocol.Reply{Response: resp, Err: f}
}
