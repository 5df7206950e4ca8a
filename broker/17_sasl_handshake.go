package broker

// SaslHandshake v0–v1.
//
// Behavior:
//   - SASL on, before authentication: a mechanism from the enabled list
//     starts the exchange (v1: SaslAuthenticate requests follow; v0: bare
//     size-prefixed tokens). Any other mechanism gets
//     UNSUPPORTED_SASL_MECHANISM with the enabled list and the connection
//     is closed after the answer, as Kafka does.
//   - Re-authentication (KIP-368, sasl.go): on an authenticated
//     connection whose session has an end, the broker's gate lets a
//     handshake through as above, at most once a second. The same
//     mechanism restarts the exchange; another enabled one is answered
//     without error but the next request closes the connection (Kafka's
//     REAUTH_BAD_MECHANISM).
//   - SASL off (a plaintext listener), or the connection authenticated and
//     not re-authenticating (sessions without an end, or a second
//     handshake within a second): ILLEGAL_SASL_STATE, as Kafka's KafkaApis
//     answers; the connection stays open.

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleSaslHandshake(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.SASLHandshakeRequest)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.Version = req.Version
	if !b.saslActive(req) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		b.logRoutine(req, "SaslHandshake outside of SASL authentication", "mechanism", r.Mechanism)
		return protocol.Reply{Response: resp}
	}
	st := saslState(req.Conn)
	resp.SupportedMechanisms = slices.Clone(b.sasl.Mechanisms())
	if !b.sasl.Enabled(r.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		b.logBad(req, "unsupported SASL mechanism; closing connection", "mechanism", r.Mechanism, "enabled", b.sasl.Mechanisms())
		return protocol.Reply{Response: resp, Err: fmt.Errorf("unsupported SASL mechanism %q", r.Mechanism)}
	}
	st.framed = req.Version >= 1
	if st.reauth && r.Mechanism != st.mech {
		st.phase = saslReauthBadMech
		st.badMech = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", r.Mechanism, st.mech)
		return protocol.Reply{Response: resp, SASLRaw: !st.framed}
	}
	st.phase, st.mech = saslAuthenticate, r.Mechanism
	return protocol.Reply{Response: resp, SASLRaw: !st.framed}
}
