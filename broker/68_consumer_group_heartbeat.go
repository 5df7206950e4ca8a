package broker

// ConsumerGroupHeartbeat v0–v1 (KIP-848): the group coordinator's
// (groups.Coordinator.ConsumerGroupHeartbeat says how members join,
// reconcile and leave). The ID of a share group is refused with
// GROUP_ID_NOT_FOUND.
//
// With the authorizer on a member needs READ on the group and DESCRIBE on
// every topic it names (GROUP_ or TOPIC_AUTHORIZATION_FAILED), and its
// regex matches only the topics its principal may DESCRIBE, as Kafka's
// coordinator resolves regexes with the member's permissions. An ACL
// change reaches the assignment at the group's next epoch.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleConsumerGroupHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	if r := req.Body.(*kmsg.ConsumerGroupHeartbeatRequest); b.share.Exists(r.Group) { // one group ID namespace (share.go)
		b.logBad(req, "consumer group heartbeat to a share group's ID", "group", r.Group)
		return protocol.Reply{Response: groups.RefuseConsumerHeartbeat(r)}
	}
	cl := groupClient(req)
	if az := b.authorizer(req); az != nil {
		// Other members' heartbeats resolve this member's regex too, so
		// the filter decides from the immutable ACL set, not from the
		// connection's (unsynchronized) cache.
		principal, host := az.Principal(), az.Host()
		cl.TopicVisible = func(topic string) bool {
			return b.acls.Set().Authorize(principal, host, opDescribe, kmsg.ACLResourceTypeTopic, topic)
		}
	}
	return protocol.Reply{Response: b.groups.ConsumerGroupHeartbeat(cl, req.Body.(*kmsg.ConsumerGroupHeartbeatRequest))}
}
