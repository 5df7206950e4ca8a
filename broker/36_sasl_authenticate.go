package broker

// SaslAuthenticate v0–v2.
//
// Behavior:
//   - After SaslHandshake v1 each request carries one client token of the
//     chosen mechanism; the answer carries the server's token. When the
//     exchange completes the connection is authenticated and may send
//     anything; the last answer's session_lifetime_ms (v1+) is
//     SASLConfig.MaxReauth in milliseconds (0 by default, Kafka's
//     connections.max.reauth.ms: no re-authentication required), 0 on the
//     answers before it.
//   - Bad credentials or a malformed token: SASL_AUTHENTICATION_FAILED
//     with Kafka's message, then the connection is closed; likewise a
//     re-authentication as another user ("Cannot change principals ...").
//   - SASL off or already authenticated (no re-authentication begun):
//     ILLEGAL_SASL_STATE, as Kafka; the connection stays open (an ended
//     session is closed before this, sasl.go).
//
// Version notes: v2 is flexible; v1 added session_lifetime_ms.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleSaslAuthenticate(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.SASLAuthenticateRequest)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = req.Version
	if !b.saslActive(req) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		resp.ErrorMessage = kmsg.StringPtr("SaslAuthenticate request received after successful authentication")
		b.logRoutine(req, "SaslAuthenticate outside of SASL authentication")
		return protocol.Reply{Response: resp}
	}
	st := saslState(req.Conn)
	out, done, ferr := b.saslStep(req, st, r.SASLAuthBytes)
	if ferr != nil {
		b.saslLogFailure(req, st, ferr)
		return saslFailed(req.Version, ferr)
	}
	resp.SASLAuthBytes = out
	if done {
		resp.SessionLifetimeMillis = st.LifetimeMillis(b.sasl.Lifetime(), time.Now())
	}
	return protocol.Reply{Response: resp}
}
