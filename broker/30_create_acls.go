package broker

// CreateAcls v0–v3.
//
// Behavior: without an authorizer (see DescribeAcls) every creation is
// answered SECURITY_DISABLED and nothing is stored, as in Kafka. With one,
// each creation is validated as Kafka's AclControlManager does (an
// UNKNOWN or ANY enum, a MATCH pattern, an empty name, a cluster name
// other than kafka-cluster, an operation the resource type has no use for,
// a principal without "Type:" or an empty host is INVALID_REQUEST with
// Kafka's message); the valid ones are stored together, durably, before
// the answer (a failed write is KAFKA_STORAGE_ERROR for each). A binding
// that exists already is kept once. Needs ALTER on the cluster.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleCreateAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.CreateACLsRequest)
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
	}
	if b.acls == nil {
		for i := range resp.Results {
			resp.Results[i].ErrorCode = kerr.SecurityDisabled.Code
			resp.Results[i].ErrorMessage = kmsg.StringPtr(noAuthorizer)
		}
		return protocol.Reply{Response: resp}
	}
	var valid []acl.Binding
	var at []int
	for i, c := range r.Creations {
		bd := aclBindingOf(c)
		if err := bd.Validate(); err != nil {
			b.logBad(req, "CreateAcls binding refused", "binding", bd.String(), "err", err)
			resp.Results[i].ErrorCode = kerr.InvalidRequest.Code
			resp.Results[i].ErrorMessage = kmsg.StringPtr(err.Error())
			continue
		}
		valid = append(valid, bd)
		at = append(at, i)
	}
	if len(valid) == 0 {
		return protocol.Reply{Response: resp}
	}
	if err := b.acls.change(func(s *acl.Set) *acl.Set { return s.Create(valid) }); err != nil {
		b.log.Error("storing ACLs failed", "err", err)
		for _, i := range at {
			resp.Results[i].ErrorCode = errCode(err)
			resp.Results[i].ErrorMessage = kmsg.StringPtr(err.Error())
		}
		return protocol.Reply{Response: resp}
	}
	for _, bd := range valid {
		b.log.Info("ACL created", "binding", bd.String())
	}
	return protocol.Reply{Response: resp}
}
