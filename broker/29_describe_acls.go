package broker

// DescribeAcls v0–v3.
//
// Behavior: without an authorizer (Config.Authorizer nil) the answer is
// Kafka's SECURITY_DISABLED, "No Authorizer is configured on the broker",
// so admin tools (kadm, kafka-acls, UIs) report that ACLs are off. With
// one, the bindings the filter selects (acl.Store.Describe: ANY, MATCH,
// literal, prefixed), grouped by resource pattern; a filter with an
// UNKNOWN enum is INVALID_REQUEST, as Kafka's request parsing answers.
// Needs DESCRIBE on the cluster. v0 is kept for librdkafka 2.0 and
// kafka-python 2.0, although Kafka 4 dropped it.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/protocol"
)

// noAuthorizer is Kafka's message for ACL requests to a broker without an
// authorizer.
const noAuthorizer = "No Authorizer is configured on the broker"

func (b *Broker) handleDescribeAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	if b.acls == nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizer)
		return protocol.Reply{Response: resp}
	}
	groups, err := b.acls.Describe(acl.DescribeFilter(r))
	if err != nil {
		b.logBad(req, "DescribeAcls filter refused", "err", err)
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error())
	}
	for _, g := range groups {
		res := kmsg.NewDescribeACLsResponseResource()
		res.ResourceType, res.ResourceName, res.ResourcePatternType = g[0].ResourceType, g[0].Name, g[0].Pattern
		for _, bd := range g {
			e := kmsg.NewDescribeACLsResponseResourceACL()
			e.Principal, e.Host, e.Operation, e.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
			res.ACLs = append(res.ACLs, e)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return protocol.Reply{Response: resp}
}

// aclResults answers each ACL creation or deletion: nothing for a nil
// error, INVALID_REQUEST for a binding or filter acl refused (logged), the
// storage error's code for the rest (logged once, as stored).
func (b *Broker) aclResults(req *protocol.Request, what string, errs []error, stored error, set func(i int, code int16, msg *string)) {
	if stored != nil {
		b.log.Error("storing ACLs failed", "err", stored)
	}
	for i, err := range errs {
		var inv *acl.InvalidError
		switch {
		case err == nil:
		case errors.As(err, &inv):
			b.logBad(req, what+" refused", "err", err)
			set(i, kerr.InvalidRequest.Code, kmsg.StringPtr(err.Error()))
		default:
			set(i, errCode(err), kmsg.StringPtr(err.Error()))
		}
	}
}
