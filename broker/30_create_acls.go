package broker

// CreateAcls v0–v3.
//
// Behavior: without an authorizer (see DescribeAcls), every creation is
// answered SECURITY_DISABLED and nothing is stored, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleCreateAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.CreateACLsRequest)
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	for range r.Creations {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = kerr.SecurityDisabled.Code
		res.ErrorMessage = kmsg.StringPtr(noAuthorizer)
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}
