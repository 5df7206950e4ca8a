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
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
	}
	if b.acls == nil {
		for i := range resp.Results {
			resp.Results[i].ErrorCode = kerr.SecurityDisabled.Code
			resp.Results[i].ErrorMessage = kmsg.StringPtr(noAuthorizer)
		}
		return protocol.Reply{Response: resp}
	}
	var filters []acl.Filter
	var at []int
	for i, f := range r.Filters {
		af := acl.Filter{ResourceType: f.ResourceType, Name: f.ResourceName, Pattern: f.ResourcePatternType,
			Principal: f.Principal, Host: f.Host, Operation: f.Operation, Permission: f.PermissionType}
		if err := af.Validate(); err != nil {
			b.logBad(req, "DeleteAcls filter refused", "err", err)
			resp.Results[i].ErrorCode = kerr.InvalidRequest.Code
			resp.Results[i].ErrorMessage = kmsg.StringPtr(err.Error())
			continue
		}
		filters = append(filters, af)
		at = append(at, i)
	}
	if len(filters) == 0 {
		return protocol.Reply{Response: resp}
	}
	var removed [][]acl.Binding
	err := b.acls.change(func(s *acl.Set) *acl.Set {
		next, rm := s.Delete(filters)
		removed = rm
		return next
	})
	if err != nil {
		b.log.Error("storing ACLs failed", "err", err)
		for _, i := range at {
			resp.Results[i].ErrorCode = errCode(err)
			resp.Results[i].ErrorMessage = kmsg.StringPtr(err.Error())
		}
		return protocol.Reply{Response: resp}
	}
	for j, i := range at {
		for _, bd := range removed[j] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = bd.ResourceType, bd.Name, bd.Pattern
			m.Principal, m.Host, m.Operation, m.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			b.log.Info("ACL deleted", "binding", bd.String())
		}
	}
	return protocol.Reply{Response: resp}
}
