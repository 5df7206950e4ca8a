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
// ILLEGAL_SASL_STATE (Kafka's getErrorResponse, errresp.For here), then
// the connection closes. SaslHandshake v1 is followed by
// SaslAuthenticate requests; v0 by bare size-prefixed tokens (protocol's
// raw mode). An unknown mechanism is answered UNSUPPORTED_SASL_MECHANISM
// with the enabled list, bad credentials SASL_AUTHENTICATION_FAILED with a
// message (framed) — then the connection is closed. Raw-mode failures just
// close, as Kafka does. Each failure is logged once with the client's
// address and user name, never a password or proof.
//
// The mechanisms, the credentials derived at start and the SCRAM store
// are broker/internal/sasl's (its doc says how each mechanism and the
// store work), and so are a session's rules (sasl.Session: its end, the
// re-authentication pace, keeping the principal); this file keeps the
// per-connection state machine, which hands each token to a
// sasl.Exchange.
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
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/errresp"
	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/protocol"
)

// SASL mechanism names.
const (
	SASLPlain       = sasl.Plain
	SASLScramSHA256 = sasl.ScramSHA256
	SASLScramSHA512 = sasl.ScramSHA512
	// SASLOAuthBearer needs SASLConfig.OAuth; it is not in
	// SASLMechanisms, which are enabled by default.
	SASLOAuthBearer = sasl.OAuthBearer
)

// SASLMechanisms lists the mechanisms minikafka serves with passwords.
var SASLMechanisms = sasl.Mechanisms

// DefaultSCRAMIterations is Kafka's minimum (and kafka-configs' default)
// for SCRAM-SHA-256 and -512.
const DefaultSCRAMIterations = sasl.DefaultSCRAMIterations

// PreAuthMaxRequestBytes is Kafka's sasl.server.max.receive.size: the frame
// cap before a connection has authenticated.
const PreAuthMaxRequestBytes = 512 << 10

// SASLConfig requires SASL authentication on every connection: the
// enabled mechanisms, users and passwords, SCRAM iterations, MaxReauth
// (connections.max.reauth.ms) and OAUTHBEARER's validation.
type SASLConfig = sasl.Config

// OAuthConfig configures OAUTHBEARER's token validation; the names are
// Kafka's broker options.
type OAuthConfig = sasl.OAuthConfig

// minReauthInterval is Kafka's limit of one re-authentication a second
// per connection.
const minReauthInterval = sasl.MinReauthInterval

type saslPhase uint8

const (
	saslInitial      saslPhase = iota // ApiVersions or SaslHandshake
	saslHandshake                     // after ApiVersions: SaslHandshake only
	saslAuthenticate                  // tokens for the chosen mechanism
	saslDone
	saslReauthBadMech // re-authentication asked for another mechanism: the next frame closes
)

// saslConn is one connection's progress, in ConnInfo.Auth; the session
// its exchanges leave (principal, end, re-authentication pace) is
// sasl.Session's.
type saslConn struct {
	phase   saslPhase
	mech    string
	framed  bool // SaslHandshake v1: tokens come in SaslAuthenticate requests
	user    string
	ex      *sasl.Exchange // the exchange under way; nil between exchanges
	reauth  bool           // the exchange under way is a re-authentication
	badMech string         // why saslReauthBadMech closes
	sasl.Session
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
	return errresp.For(req.Body, kerr.IllegalSaslState.Code)
}

// sessionGate serves an authenticated connection (Kafka's SocketServer
// checks): a SaslHandshake may begin a re-authentication; after the
// session's end anything else closes the connection.
func (b *Broker) sessionGate(req *protocol.Request, st *saslConn) (protocol.Reply, bool) {
	if !st.Ends() {
		return protocol.Reply{}, true
	}
	now := time.Now()
	if req.Key == 17 && st.BeginReauth(now) {
		st.reauth, st.phase = true, saslHandshake
		b.logRoutine(req, "SASL re-authentication begins", "mechanism", st.mech, "user", st.Principal)
		return protocol.Reply{}, true
	}
	if ago, expired := st.Expired(now); expired {
		b.logReq(slog.LevelInfo, req, "SASL session expired without re-authentication; closing connection",
			"mechanism", st.mech, "user", st.Principal, "expired_ago", ago.Round(time.Millisecond))
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

// saslStep feeds one client token to the connection's exchange; when the
// exchange completes the session begins (saslComplete).
func (b *Broker) saslStep(req *protocol.Request, st *saslConn, token []byte) (out []byte, done bool, err *sasl.Failure) {
	if st.ex == nil {
		st.ex = b.sasl.NewExchange(st.mech, b.scram)
	}
	out, done, err = st.ex.Step(token)
	if u, ok := st.ex.User(); ok {
		st.user = u
	}
	if err == nil && done {
		err = b.saslComplete(req, st)
	}
	if err != nil && err.Generic {
		err.Msg = sasl.GenericMessage(st.exchange(), st.mech)
	}
	return out, done, err
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

func (b *Broker) saslLogFailure(req *protocol.Request, st *saslConn, f *sasl.Failure) {
	b.logBad(req, "SASL "+st.exchange()+" failed; closing connection",
		"mechanism", st.mech, "user", st.user, "reason", f.Reason)
}

// saslComplete ends a successful exchange: the session begins
// (sasl.Session.Complete, which refuses a re-authentication as another
// user).
func (b *Broker) saslComplete(req *protocol.Request, st *saslConn) *sasl.Failure {
	if f := st.Complete(st.ex, st.user, st.reauth, b.sasl.Lifetime(), time.Now()); f != nil {
		return f
	}
	what := "SASL authenticated"
	if st.reauth {
		what = "SASL re-authenticated"
	}
	st.phase, st.ex, st.reauth = saslDone, nil, false
	req.Conn.SetAuthenticated()
	// Request memory is shared fairly between principals, not connections.
	req.Conn.SetBudgetOwner(st.user)
	b.logRoutine(req, what, "mechanism", st.mech, "user", st.user, "session_lifetime", b.sasl.Lifetime())
	return nil
}

// saslFailed is SaslAuthenticate's error answer; the connection closes
// after it is written.
func saslFailed(version int16, f *sasl.Failure) protocol.Reply {
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = version
	resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
	resp.ErrorMessage = kmsg.StringPtr(f.Msg)
	return protocol.Reply{Response: resp, Err: f}
}
