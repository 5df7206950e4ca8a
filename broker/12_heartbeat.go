package broker

// Heartbeat v0–v4: the group coordinator's (groups.Coordinator.Heartbeat).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	return protocol.Reply{Response: b.groups.Heartbeat(req.Body.(*kmsg.HeartbeatRequest))}
}
