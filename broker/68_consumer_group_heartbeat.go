package broker

// ConsumerGroupHeartbeat v0–v1 (KIP-848).
//
// Behavior: joins (epoch 0), heartbeats, and leaves (epoch -1; -2 for a
// static member that will be back) a consumer group whose assignment the
// broker computes with the uniform (sticky, balanced) or range assignor;
// see group_consumer.go for the reconciliation. Errors as Kafka:
// UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID,
// GROUP_ID_NOT_FOUND when the group is a classic group with members,
// INVALID_REQUEST for a malformed request (validateConsumerHeartbeat),
// UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION. A member's topic names
// and regex are two subscriptions, as in Kafka: it gets the union, and an
// empty regex (librdkafka sends one beside its names) is no regex. The response's heartbeat interval
// is group.consumer.heartbeat.interval.ms (GroupConfig), a tenth of it
// while the group reconciles (a departure from Kafka, which always sends
// the configured value; see heartbeatInterval).
//
// With the authorizer on a member needs READ on the group and DESCRIBE on
// every topic it names (GROUP_ or TOPIC_AUTHORIZATION_FAILED), and its
// regex matches only the topics its principal may DESCRIBE, as Kafka's
// coordinator resolves regexes with the member's permissions. An ACL
// change reaches the assignment at the group's next epoch.
//
// Version notes: v1 has the client choose the member id (required on
// join) and adds regex subscriptions.

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
