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
	bs := make([]acl.Binding, len(r.Creations))
	for i := range resp.Results {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		bs[i] = acl.BindingOf(&r.Creations[i])
		if b.acls == nil {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizer)
		}
	}
	if b.acls == nil {
		return protocol.Reply{Response: resp}
	}
	errs, stored := b.acls.Create(bs)
	b.aclResults(req, "CreateAcls binding", errs, stored, func(i int, code int16, msg *string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, msg
	})
	for i, err := range errs {
		if err == nil {
			b.log.Info("ACL created", "binding", bs[i].String())
		}
	}
	return protocol.Reply{Response: resp}
}
