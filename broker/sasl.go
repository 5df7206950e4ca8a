package broker

// SASL authentication, as Kafka's SaslServerAuthenticator does it.
//
// With Config.SASL set, every client connection starts unauthenticated and
// walks this state machine (per connection, in protocol.ConnInfo.Auth):
//
//	initial ──ApiVersions──► handshake ──SaslHandshake──► authenticate ──tokens──► done
//	   └───────────────SaslHandshake──────────────────────┘
//
// Before done, any other request closes the connection without an answer
// (a second ApiVersions too, as in Kafka). SaslHandshake v1 is followed by
// SaslAuthenticate requests; v0 by bare size-prefixed tokens (protocol's
// raw mode). An unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM
// with the enabled list, bad credentials SASL_AUTHENTICATION_FAILED with a
// message (framed) — then the connection is closed. Raw-mode failures just
// close, as Kafka does. Each failure is logged once with the client's
// address and user name, never a password or proof.
//
// Credentials are derived at start: SCRAM ones (RFC 5802, salt random, 4096
// iterations) per mechanism, and for PLAIN a salted SHA-256 of the
// password, so the plaintext passwords are not kept. Sessions never expire
// (session_lifetime_ms 0: Kafka's connections.max.reauth.ms default).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// SASL mechanism names.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
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
}

// saslServer holds the derived credentials.
type saslServer struct {
	mechanisms []string
	plain      map[string]plainCred
	scram      map[string]map[string]*scramCred // mechanism → user
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
	}
	for _, m := range mechs {
		m = strings.ToUpper(strings.TrimSpace(m))
		if !slices.Contains(SASLMechanisms, m) {
			return nil, fmt.Errorf("broker: unknown SASL mechanism %q (want %s)", m, strings.Join(SASLMechanisms, ", "))
		}
		if !slices.Contains(s.mechanisms, m) {
			s.mechanisms = append(s.mechanisms, m)
		}
	}
	if len(cfg.Users) == 0 {
		return nil, errors.New("broker: SASL enabled without users")
	}
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
)

// saslConn is one connection's progress, in ConnInfo.Auth.
type saslConn struct {
	phase  saslPhase
	mech   string
	framed bool // SaslHandshake v1: tokens come in SaslAuthenticate requests
	user   string
	scram  *scramServer
}

// authFailure is a failed exchange: msg goes to the client (Kafka's text),
// reason only to the log.
type authFailure struct{ msg, reason string }

func (e *authFailure) Error() string { return e.reason }

// genericFailure is Kafka's answer when the reason must not leak to an
// unauthenticated client (unknown user, wrong proof, malformed message).
func genericFailure(mech, reason string) *authFailure {
	return &authFailure{
		msg:    "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech,
		reason: reason,
	}
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
	if b.sasl == nil || req.Conn == nil || !req.Conn.FromNetwork() {
		return false
	}
	if !b.listenerWantsSASL(req) { // a PLAINTEXT or SSL listener beside SASL ones
		return false
	}
	return saslState(req.Conn).phase != saslDone
}

// saslGate runs before dispatch. It returns ok when the request goes on
// to the API table; otherwise reply is the answer (or the close).
func (b *Broker) saslGate(ctx context.Context, req *protocol.Request) (reply protocol.Reply, ok bool) {
	if !b.saslActive(req) {
		return reply, true
	}
	st := saslState(req.Conn)
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
	}
	b.logBad(req, "request before SASL authentication completed; closing connection",
		"phase", st.phase.String(), "mechanism", st.mech)
	return protocol.Reply{Err: fmt.Errorf("api key %d during SASL authentication", req.Key)}, false
}

func (p saslPhase) String() string {
	switch p {
	case saslInitial:
		return "initial"
	case saslHandshake:
		return "handshake"
	case saslAuthenticate:
		return "authenticate"
	}
	return "done"
}

// saslStep feeds one client token to the connection's mechanism.
func (b *Broker) saslStep(st *saslConn, token []byte) (out []byte, done bool, err *authFailure) {
	switch st.mech {
	case SASLPlain:
		authz, user, pass, perr := parsePlain(token)
		if perr != nil {
			return nil, false, genericFailure(SASLPlain, perr.Error())
		}
		st.user = user
		switch {
		case user == "":
			return nil, false, &authFailure{"Authentication failed: username not specified", "empty user name"}
		case pass == "":
			return nil, false, &authFailure{"Authentication failed: password not specified", "empty password"}
		}
		c, known := b.sasl.plain[user]
		// Hash even for an unknown user, so timing does not tell.
		h := plainHash(c.salt, pass)
		if !known || subtle.ConstantTimeCompare(h[:], c.hash[:]) != 1 {
			reason := "wrong password"
			if !known {
				reason = "unknown user"
			}
			return nil, false, &authFailure{"Authentication failed: Invalid username or password", reason}
		}
		if authz != "" && authz != user {
			return nil, false, &authFailure{"Authentication failed: Client requested an authorization id that is different from username", "authorization id differs from user"}
		}
		return []byte{}, true, nil
	case SASLScramSHA256, SASLScramSHA512:
		if st.scram == nil {
			st.scram = &scramServer{mech: st.mech, hash: scramHashes[st.mech], creds: b.sasl.scram[st.mech]}
		}
		out, done, err := st.scram.step(token)
		st.user = st.scram.user
		return out, done, err
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
	out, done, ferr := b.saslStep(st, token)
	if ferr != nil {
		b.logBad(req, "SASL authentication failed; closing connection",
			"mechanism", st.mech, "user", st.user, "reason", ferr.reason)
		return protocol.Reply{Err: ferr}
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SASLAuthBytes = out
	if done {
		b.saslAuthenticated(req, st)
	}
	return protocol.Reply{Response: resp, SASLRaw: !done}
}

func (b *Broker) saslAuthenticated(req *protocol.Request, st *saslConn) {
	st.phase, st.scram = saslDone, nil
	req.Conn.SetAuthenticated()
	b.logRoutine(req, "SASL authenticated", "mechanism", st.mech, "user", st.user)
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
