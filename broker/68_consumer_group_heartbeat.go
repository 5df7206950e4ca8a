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
// Version notes: v1 has the client choose the member id (required on
// join) and adds regex subscriptions.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleConsumerGroupHeartbeat(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ConsumerGroupHeartbeatRequest)
	c := b.coord()
	if c == nil {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Reply{Response: resp}
	}
	if code, msg := validateConsumerHeartbeat(r); code != 0 {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		b.log.Info("invalid ConsumerGroupHeartbeat", "group", r.Group, "member", r.MemberID, "error", msg)
		return protocol.Reply{Response: resp}
	}
	var g *group
	if r.MemberEpoch == 0 {
		g = c.getOrCreate(r.Group)
	} else if g = c.get(r.Group); g == nil {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return protocol.Reply{Response: resp}
	}
	clientID, host := "", ""
	if req.ClientID != nil {
		clientID = *req.ClientID
	}
	if req.Conn != nil && req.Conn.Remote != nil {
		host = "/" + req.Conn.Remote.String()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return protocol.Reply{Response: g.consumerHeartbeat(r, clientID, host)}
}
