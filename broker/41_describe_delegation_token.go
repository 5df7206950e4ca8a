package broker

// DescribeDelegationToken v1–v3 (KIP-48).
//
// Behavior, as Kafka's KafkaApis (DelegationTokenManager.filterToken):
//   - DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over a connection authenticated
//     with a token or without an authenticated principal;
//     DELEGATION_TOKEN_AUTH_DISABLED without SASL; both with no tokens.
//   - An empty owners list lists nothing; a null one every token the
//     principal may see; otherwise the tokens owned, requested or
//     renewable by one of the owners.
//   - A principal sees the tokens it owns, requested or may renew, and
//     with the authorizer on any other token it has Describe on
//     (DELEGATION_TOKEN resource, the token ID) or DescribeTokens on its
//     owner (USER resource, User:<owner>); denials are not logged, it is a
//     listing. Without the authorizer every token is visible.
//   - Each token carries its HMAC, as Kafka's answer does. An expired
//     token is listed until the hourly sweep drops it.
//
// Version notes: v0 dropped in Kafka 4 (KIP-896); v2 is flexible; v3
// added the requester (KIP-373).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/dtoken"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeDelegationToken(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	resp.TokenDetails = []kmsg.DescribeDelegationTokenResponseTokenDetail{}
	if resp.ErrorCode = b.tokenRefusal(req); resp.ErrorCode != 0 {
		return protocol.Reply{Response: resp}
	}
	var owners []dtoken.Principal
	if r.Owners != nil {
		owners = make([]dtoken.Principal, 0, len(r.Owners))
	}
	for _, o := range r.Owners {
		owners = append(owners, dtoken.Principal{Type: o.PrincipalType, Name: o.PrincipalName})
	}
	az := b.authorizer(req)
	visible := func(t *dtoken.Token) bool {
		return az.visible(kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeDelegationToken, t.ID) ||
			az.visible(kmsg.ACLOperationDescribeTokens, kmsg.ACLResourceTypeUser, t.Owner.String())
	}
	for _, t := range b.tokens.Describe(b.tokenPrincipal(req), owners, visible) {
		d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		d.PrincipalType, d.PrincipalName = t.Owner.Type, t.Owner.Name
		d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = t.Requester.Type, t.Requester.Name
		d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.Issue, t.Expiry, t.Max
		d.TokenID, d.HMAC = t.ID, t.HMAC
		for _, rn := range t.Renewers {
			x := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
			x.PrincipalType, x.PrincipalName = rn.Type, rn.Name
			d.Renewers = append(d.Renewers, x)
		}
		resp.TokenDetails = append(resp.TokenDetails, d)
	}
	return protocol.Reply{Response: resp}
}
