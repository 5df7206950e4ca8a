package broker

// ShareGroupHeartbeat v1 (KIP-932).
//
// Behavior: joins (epoch 0, subscribed topics required), heartbeats, and
// leaves (epoch -1, its locks released) a share group whose assignment
// the broker computes with the simple assignor (share.Coordinator).
// Errors as Kafka: INVALID_REQUEST for a malformed request,
// GROUP_ID_NOT_FOUND when the ID is a classic or consumer group's,
// UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED.
//
// Version notes: v0 was KIP-932's early access, which Kafka 4.1 removed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

func shareClient(req *protocol.Request) share.Client {
	gc := groupClient(req)
	return share.Client{ID: gc.ID, Host: gc.Host}
}

func (b *Broker) handleShareGroupHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ShareGroupHeartbeatRequest)
	resp := b.share.Heartbeat(shareClient(req), r)
	if resp.ErrorCode != 0 && resp.ErrorCode != kerr.UnknownMemberID.Code && resp.ErrorCode != kerr.FencedMemberEpoch.Code {
		b.logBad(req, "share group heartbeat refused", "group", r.GroupID, "error", kerr.ErrorForCode(resp.ErrorCode))
	}
	return protocol.Reply{Response: resp}
}
