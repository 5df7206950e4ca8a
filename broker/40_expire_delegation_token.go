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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/dtoken"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleExpireDelegationToken(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ExpireDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	if resp.ErrorCode = b.tokenRefusal(req); resp.ErrorCode == 0 {
		resp.ExpiryTimestamp, resp.ErrorCode = b.tokenChange(req, "expire", b.tokens.Expire, r.HMAC, r.ExpiryPeriodMillis)
	} else if resp.ErrorCode == kerr.DelegationTokenRequestNotAllowed.Code {
		resp.ExpiryTimestamp = -1
	}
	return protocol.Reply{Response: resp}
}

// tokenChange renews or expires (change) the token with hmac for the
// request's principal: the new expiry and the answer's code.
func (b *Broker) tokenChange(req *protocol.Request, what string, change func(dtoken.Principal, []byte, int64) (int64, error), hmac []byte, period int64) (int64, int16) {
	exp, err := change(b.tokenPrincipal(req), hmac, period)
	return exp, b.tokenErrCode(req, what, err)
}
