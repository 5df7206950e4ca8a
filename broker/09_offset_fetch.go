package broker

// OffsetFetch v0–v10: the group coordinator's (groups.Coordinator.OffsetFetch).
//
// With the authorizer on, as Kafka: a group needs DESCRIBE
// (GROUP_AUTHORIZATION_FAILED, per group from v8); a named topic the
// principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED in its
// partitions, and a fetch of all offsets leaves such topics out.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/errresp"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleOffsetFetch(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	az := b.authorizer(req)
	if req.Version < 8 && !az.group(opDescribe, r.Group) {
		return protocol.Reply{Response: errresp.For(r, errGroupAuth)}
	}
	return protocol.Reply{Response: b.groups.OffsetFetch(r, groupAccess(az))}
}
