package broker

// OffsetCommit v0–v10: the group coordinator's
// (groups.Coordinator.OffsetCommit says how it validates and stores). A
// commit to a share group's ID is refused (share.RefuseOffsetCommit).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetCommit(_ context.Context, req *protocol.Request) protocol.Reply {
	if r := req.Body.(*kmsg.OffsetCommitRequest); b.share.Exists(r.Group) { // a share group commits no offsets (share.go)
		b.logBad(req, "offset commit to a share group's ID", "group", r.Group)
		return protocol.Reply{Response: share.RefuseOffsetCommit(r)}
	}
	return protocol.Reply{Response: b.groups.OffsetCommit(req.Body.(*kmsg.OffsetCommitRequest))}
}
