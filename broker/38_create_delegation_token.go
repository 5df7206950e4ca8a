package broker

// CreateDelegationToken v1–v3 (KIP-48; the tokens are
// broker/internal/dtoken's).
//
// Behavior, as Kafka's KafkaApis and DelegationTokenControlManager:
//   - A connection that authenticated with a delegation token, or that
//     has no authenticated principal (PLAINTEXT, TLS without a client
//     certificate), is answered DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, with
//     -1 timestamps: a token cannot mint tokens.
//   - The owner is the requester unless owner_principal_name (v3) names
//     another; creating a token for another owner needs CreateTokens on
//     the USER resource User:<owner> (DELEGATION_TOKEN_AUTHORIZATION_FAILED
//     otherwise; always allowed without the authorizer).
//   - Tokens are on with SASL (SASLConfig.DelegationToken*); without it,
//     DELEGATION_TOKEN_AUTH_DISABLED; then a renewer that is not a User
//     principal is INVALID_PRINCIPAL_TYPE. These two come from Kafka's
//     controller and carry zero timestamps.
//   - The token expires after delegation.token.expiry.time.ms (1 day),
//     renewable until max_lifetime_ms (> 0) or
//     delegation.token.max.lifetime.ms (7 days), whichever is shorter.
//
// Version notes: v0 dropped in Kafka 4 (KIP-896); v2 is flexible; v3
// added the owner and the requester (KIP-373).

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/dtoken"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleCreateDelegationToken(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.CreateDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	requester := b.tokenPrincipal(req)
	owner := dtoken.OwnerOf(requester, r.OwnerPrincipalName, r.OwnerPrincipalType)
	resp.PrincipalType, resp.PrincipalName = owner.Type, owner.Name
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = requester.Type, requester.Name
	var renewers []dtoken.Principal
	for _, rn := range r.Renewers {
		renewers = append(renewers, dtoken.Principal{Type: rn.PrincipalType, Name: rn.PrincipalName})
	}
	refuse := func(code int16) protocol.Reply {
		resp.ErrorCode = code
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
		resp.HMAC = []byte{}
		return protocol.Reply{Response: resp}
	}
	switch {
	case !b.tokenRequestsAllowed(req):
		return refuse(kerr.DelegationTokenRequestNotAllowed.Code)
	case owner != requester && !b.authorizer(req).allowed(kmsg.ACLOperationCreateTokens, kmsg.ACLResourceTypeUser, owner.String()):
		return refuse(kerr.DelegationTokenAuthorizationFailed.Code)
	case b.tokens == nil:
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return protocol.Reply{Response: resp}
	}
	// The controller's refusals carry no timestamps (zero), unlike the
	// broker's own above (-1).
	tok, err := b.tokens.Create(owner, requester, renewers, r.MaxLifetimeMillis)
	if resp.ErrorCode = b.tokenErrCode(req, "create", err); err == nil {
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = tok.Issue, tok.Expiry, tok.Max
		resp.TokenID, resp.HMAC = tok.ID, tok.HMAC
		b.logRoutine(req, "delegation token created", "token_id", tok.ID, "owner", owner.String(), "requester", requester.String())
	}
	return protocol.Reply{Response: resp}
}

// tokenPrincipal is the request's principal as delegation tokens name it.
func (b *Broker) tokenPrincipal(req *protocol.Request) dtoken.Principal {
	return dtoken.Principal{Type: dtoken.UserType, Name: b.principalName(req)}
}

// tokenRefusal is the code refusing any token request before the manager
// is asked (0: ask it): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED as Kafka's
// allowTokenRequests (not over a connection authenticated with a token,
// nor one without an authenticated principal: PLAINTEXT, or TLS without a
// client certificate; the embedding program's own requests are trusted),
// then DELEGATION_TOKEN_AUTH_DISABLED without SASL.
func (b *Broker) tokenRefusal(req *protocol.Request) int16 {
	switch {
	case !b.tokenRequestsAllowed(req):
		return kerr.DelegationTokenRequestNotAllowed.Code
	case b.tokens == nil:
		return kerr.DelegationTokenAuthDisabled.Code
	}
	return 0
}

func (b *Broker) tokenRequestsAllowed(req *protocol.Request) bool {
	if req.Conn == nil || !req.Conn.FromNetwork() {
		return true
	}
	if b.saslApplies(req) {
		return saslState(req.Conn).TokenID == ""
	}
	return req.Conn.TLS != nil && len(req.Conn.TLS.PeerCertificates) > 0
}

// tokenErrCode is the Kafka code of a token change's error (dtoken.Code);
// a refusal is logged at debug, a failure to store at error.
func (b *Broker) tokenErrCode(req *protocol.Request, what string, err error) int16 {
	if err == nil {
		return 0
	}
	code, refused := dtoken.Code(err)
	if !refused {
		b.logReq(slog.LevelError, req, "delegation token "+what+" failed", "err", err)
		return errCode(err)
	}
	b.logRoutine(req, "delegation token "+what+" refused", "principal", b.tokenPrincipal(req).String(), "reason", err)
	return code
}
