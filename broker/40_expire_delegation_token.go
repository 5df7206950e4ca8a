package broker

// ExpireDelegationToken v1–v2 (KIP-48).
//
// Behavior, as Kafka's KafkaApis and DelegationTokenControlManager: the
// refusals are RenewDelegationToken's (39_renew_delegation_token.go). A
// negative expiry_time_period_ms removes the token at once and answers
// the time of removal as the expiry timestamp (Kafka 4.4 does); otherwise
// the token expires that long from now, never past its max timestamp (0:
// now, so it can no longer log in or be renewed).
//
// Version notes: v0 dropped in Kafka 4 (KIP-896); v2 is flexible.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/dtoken"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleExpireDelegationToken(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ExpireDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	switch {
	case !b.tokenRequestsAllowed(req):
		resp.ErrorCode, resp.ExpiryTimestamp = kerr.DelegationTokenRequestNotAllowed.Code, -1
		return protocol.Reply{Response: resp}
	case b.tokens == nil:
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return protocol.Reply{Response: resp}
	}
	exp, err := b.tokens.Expire(b.tokenPrincipal(req), r.HMAC, r.ExpiryPeriodMillis)
	resp.ErrorCode, resp.ExpiryTimestamp = b.tokenErrCode(req, "expire", err), exp
	return protocol.Reply{Response: resp}
}

// tokenErrCode is the Kafka code of a token change's error; a refusal is
// logged at debug, a failure to store at error.
func (b *Broker) tokenErrCode(req *protocol.Request, what string, err error) int16 {
	var code int16
	switch {
	case err == nil:
		return 0
	case errors.Is(err, dtoken.ErrNotFound):
		code = kerr.DelegationTokenNotFound.Code
	case errors.Is(err, dtoken.ErrExpired):
		code = kerr.DelegationTokenExpired.Code
	case errors.Is(err, dtoken.ErrOwnerMismatch):
		code = kerr.DelegationTokenOwnerMismatch.Code
	case errors.Is(err, dtoken.ErrPrincipalType):
		code = kerr.InvalidPrincipalType.Code
	default:
		b.logReq(slog.LevelError, req, "delegation token "+what+" failed", "err", err)
		return errCode(err)
	}
	b.logRoutine(req, "delegation token "+what+" refused", "principal", b.tokenPrincipal(req).String(), "reason", err)
	return code
}
