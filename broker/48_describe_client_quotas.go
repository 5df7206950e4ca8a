package broker

// DescribeClientQuotas v0–v1 (KIP-546).
//
// Behavior, as Kafka's ClientQuotasImage.describe: each filter component
// names an entity type (user, client-id, ip) and a match: EXACT (match_type
// 0, with a name), DEFAULT (1: the type's default) or SPECIFIED (2: the
// type with any name, default included). An entity matches when it has
// every component's type as the component says; with strict it has no
// other type. A type given twice, an unknown type or match type, EXACT
// without a name, or ip beside user or client-id is INVALID_REQUEST for
// the whole request (entries null). Entries are sorted by entity (Kafka's
// order is a hash map's). Quotas are described whether or not anything
// enforces them (ip quotas are not enforced here).

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/quota"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeClientQuotas(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.Version = req.Version
	filter := make([]quota.FilterPart, len(r.Components))
	for i, c := range r.Components {
		filter[i] = quota.FilterPart{Type: c.EntityType, Match: int8(c.MatchType), Name: c.Match}
	}
	entries, err := b.quotas.Set().Describe(filter, r.Strict)
	if err != nil {
		var inv *quota.InvalidError
		resp.ErrorCode = kerr.UnknownServerError.Code
		if errors.As(err, &inv) {
			resp.ErrorCode = kerr.InvalidRequest.Code
		}
		resp.ErrorMessage = kmsg.StringPtr(err.Error())
		b.logBad(req, "describe client quotas rejected", "reason", err)
		return protocol.Reply{Response: resp}
	}
	resp.Entries = make([]kmsg.DescribeClientQuotasResponseEntry, 0, len(entries))
	for _, e := range entries {
		re := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range e.Entity {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = p.Type, p.Name
			re.Entity = append(re.Entity, ee)
		}
		for _, k := range quotaValueKeys(e.Values) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, e.Values[k]
			re.Values = append(re.Values, v)
		}
		resp.Entries = append(resp.Entries, re)
	}
	return protocol.Reply{Response: resp}
}
