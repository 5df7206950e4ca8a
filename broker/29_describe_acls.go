package broker

// DescribeAcls v0–v3.
//
// Behavior: this broker has no authorizer, and answers as Kafka does when
// none is configured: SECURITY_DISABLED, "No Authorizer is configured on
// the broker". Admin tools (kadm, kafka-acls, UIs) then report that ACLs
// are off instead of failing on a missing API. v0 is kept for librdkafka
// 2.0 and kafka-python 2.0, although Kafka 4 dropped it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

// noAuthorizer is Kafka's message for ACL requests to a broker without an
// authorizer.
const noAuthorizer = "No Authorizer is configured on the broker"

func (b *Broker) handleDescribeAcls(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	resp.ErrorCode = kerr.SecurityDisabled.Code
	resp.ErrorMessage = kmsg.StringPtr(noAuthorizer)
	return protocol.Reply{Response: resp}
}
