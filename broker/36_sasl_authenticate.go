package broker

// SaslAuthenticate v0–v2.
//
// Behavior:
//   - After SaslHandshake v1 each request carries one client token of the
//     chosen mechanism; the answer carries the server's token. When the
//     exchange completes the connection is authenticated and may send
//     anything; session_lifetime_ms (v1+) is 0: no re-authentication is
//     required, as with Kafka's default connections.max.reauth.ms.
//   - Bad credentials or a malformed token: SASL_AUTHENTICATION_FAILED
//     with Kafka's message, then the connection is closed.
//   - SASL off or already authenticated: ILLEGAL_SASL_STATE, as Kafka.
//
// Version notes: v2 is flexible; v1 added session_lifetime_ms.

import (
	"context"

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
	out, done, ferr := b.saslStep(st, r.SASLAuthBytes)
	if ferr != nil {
		b.logBad(req, "SASL authentication failed; closing connection",
			"mechanism", st.mech, "user", st.user, "reason", ferr.reason)
		return saslFailed(req.Version, ferr)
	}
	resp.SASLAuthBytes = out
	if done {
		b.saslAuthenticated(req, st)
	}
	return protocol.Reply{Response: resp}
}
