package broker

// ShareGroupDescribe v1 (KIP-932).
//
// Behavior: each group's state (Empty or Stable), epochs, the "simple"
// assignor and its members with their assignments; GROUP_ID_NOT_FOUND
// for an unknown group or one that is not a share group, as Kafka.
// Authorized operations are not computed (INT32_MIN, "not requested").

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleShareGroupDescribe(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.share.Describe(req.Body.(*kmsg.ShareGroupDescribeRequest))}
}
