package broker

// DeleteAcls v0–v3.
//
// Behavior: without an authorizer (see DescribeAcls) every filter is
// answered SECURITY_DISABLED with no matches, as in Kafka. With one, every
// binding any valid filter selects is removed in one durable change, and
// each filter's result lists the bindings it matched; a filter with an
// UNKNOWN enum is INVALID_REQUEST for that filter alone. Needs ALTER on the
// cluster.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteACLsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(r.Filters))
	filters := make([]acl.Filter, len(r.Filters))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
		filters[i] = acl.DeleteFilter(&r.Filters[i])
		if b.acls == nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizer)
		}
	}
	if b.acls == nil {
		return protocol.Reply{Response: resp}
	}
	removed, errs, stored := b.acls.Delete(filters)
	b.aclResults(req, "DeleteAcls filter", errs, stored, func(i int, code int16, msg *string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, msg
	})
	for i, rm := range removed {
		for _, bd := range rm {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = bd.ResourceType, bd.Name, bd.Pattern
			m.Principal, m.Host, m.Operation, m.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			b.log.Info("ACL deleted", "binding", bd.String())
		}
	}
	return protocol.Reply{Response: resp}
}
