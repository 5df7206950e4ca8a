package broker

// OffsetDelete v0: the group coordinator's (groups.Coordinator.OffsetDelete).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetDelete(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.OffsetDelete(req.Body.(*kmsg.OffsetDeleteRequest))}
}
