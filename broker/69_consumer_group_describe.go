package broker

// ConsumerGroupDescribe v0–v1 (KIP-848): the group coordinator's
// (groups.Coordinator.ConsumerGroupDescribe). With the authorizer on a
// group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleConsumerGroupDescribe(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ConsumerGroupDescribeRequest)
	return protocol.Reply{Response: b.groups.ConsumerGroupDescribe(r, groupAccess(b.authorizer(req)))}
}
