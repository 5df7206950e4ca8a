package broker

// RenewDelegationToken v1–v2 (KIP-48).
//
// Behavior, as Kafka's KafkaApis and DelegationTokenControlManager:
//   - DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (expiry -1) over a connection
//     authenticated with a token or without an authenticated principal
//     (38_create_delegation_token.go); DELEGATION_TOKEN_AUTH_DISABLED
//     without SASL.
//   - The token is named by its HMAC: DELEGATION_TOKEN_NOT_FOUND if none
//     has it, DELEGATION_TOKEN_EXPIRED if its expiry or max timestamp has
//     passed, DELEGATION_TOKEN_OWNER_MISMATCH unless the principal is its
//     owner or one of its renewers.
//   - The new expiry is now plus renew_period_ms when that is > 0 and
//     shorter than delegation.token.expiry.time.ms (else that), never past
//     the token's max timestamp.
//
// Version notes: v0 dropped in Kafka 4 (KIP-896); v2 is flexible.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleRenewDelegationToken(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.RenewDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	if resp.ErrorCode = b.tokenRefusal(req); resp.ErrorCode == 0 {
		resp.ExpiryTimestamp, resp.ErrorCode = b.tokenChange(req, "renew", b.tokens.Renew, r.HMAC, r.RenewTimeMillis)
	} else if resp.ErrorCode == kerr.DelegationTokenRequestNotAllowed.Code {
		resp.ExpiryTimestamp = -1
	}
	return protocol.Reply{Response: resp}
}
