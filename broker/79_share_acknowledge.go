package broker

// ShareAcknowledge v1–v2 (KIP-932, KIP-1222).
//
// Behavior: acknowledges records the member acquired (accept, release,
// reject, gap; v2 with IsRenewAck also renew) within its share session;
// epoch -1 closes the session afterwards and releases what is left.
// Errors as Kafka: INVALID_SHARE_SESSION_EPOCH (epoch 0, or not the
// session's), SHARE_SESSION_NOT_FOUND, INVALID_REQUEST (malformed
// batches), INVALID_RECORD_STATE (records not acquired by the member),
// UNKNOWN_TOPIC_ID, GROUP_ID_NOT_FOUND (a consumer group's ID).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleShareAcknowledge(_ context.Context, req *protocol.Request) protocol.Reply {
	node, routed := b.reqNode(req) // the node's own share session, as ShareFetch
	if !routed {
		node = -1
	}
	resp := b.share.Acknowledge(req.Body.(*kmsg.ShareAcknowledgeRequest), node)
	if resp.ErrorCode != 0 {
		b.logBad(req, "share acknowledge refused", "error", kerr.ErrorForCode(resp.ErrorCode))
	}
	return protocol.Reply{Response: resp}
}
