package broker

// DeleteAcls v0–v3.
//
// Behavior: without an authorizer (see DescribeAcls), every filter is
// answered SECURITY_DISABLED with no matches, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDeleteAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DeleteACLsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range r.Filters {
		res := kmsg.NewDeleteACLsResponseResult()
		res.ErrorCode = kerr.SecurityDisabled.Code
		res.ErrorMessage = kmsg.StringPtr(noAuthorizer)
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Response: resp}
}
