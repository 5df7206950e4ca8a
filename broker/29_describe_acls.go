package broker

// DescribeAcls v0–v3.
//
// Behavior: without an authorizer (Config.Authorizer nil) the answer is
// Kafka's SECURITY_DISABLED, "No Authorizer is configured on the broker",
// so admin tools (kadm, kafka-acls, UIs) report that ACLs are off. With
// one, the bindings the filter selects (acl.Filter: ANY, MATCH, literal,
// prefixed), grouped by resource pattern; a filter with an UNKNOWN enum is
// INVALID_REQUEST, as Kafka's request parsing answers. Needs DESCRIBE on
// the cluster. v0 is kept for librdkafka 2.0 and kafka-python 2.0,
// although Kafka 4 dropped it.

import (
	"context"

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
		resp.ErrorCode = kerr.SecurityDisabled.Code
		resp.ErrorMessage = kmsg.StringPtr(noAuthorizer)
		return protocol.Reply{Response: resp}
	}
	f := acl.Filter{ResourceType: r.ResourceType, Name: r.ResourceName, Pattern: r.ResourcePatternType,
		Principal: r.Principal, Host: r.Host, Operation: r.Operation, Permission: r.PermissionType}
	if err := f.Validate(); err != nil {
		b.logBad(req, "DescribeAcls filter refused", "err", err)
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ErrorMessage = kmsg.StringPtr(err.Error())
		return protocol.Reply{Response: resp}
	}
	type pattern struct {
		rt   acl.ResourceType
		name string
		pt   acl.PatternType
	}
	at := map[pattern]int{}
	for _, bd := range b.acls.set.Load().Filter(f) {
		k := pattern{bd.ResourceType, bd.Name, bd.Pattern}
		i, ok := at[k]
		if !ok {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = bd.ResourceType, bd.Name, bd.Pattern
			resp.Resources = append(resp.Resources, res)
			i = len(resp.Resources) - 1
			at[k] = i
		}
		e := kmsg.NewDescribeACLsResponseResourceACL()
		e.Principal, e.Host, e.Operation, e.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, e)
	}
	return protocol.Reply{Response: resp}
}
