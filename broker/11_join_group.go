package broker

// JoinGroup v0–v9.
//
// Behavior:
//   - A session timeout outside group.min.session.timeout.ms and
//     group.max.session.timeout.ms (GroupConfig) is INVALID_SESSION_TIMEOUT.
//   - An empty member id from a v4+ client without a group.instance.id is
//     answered with MEMBER_ID_REQUIRED and a fresh id to rejoin with (the id
//     is pending until it rejoins or its session timeout passes).
//   - A new or changed member starts a rebalance; the response waits until
//     every known member has rejoined or the rebalance timeout passes
//     (members that did not rejoin are dropped). The first rebalance of an
//     Empty group waits group.initial.rebalance.delay.ms
//     (Config.GroupInitialRebalanceDelay).
//   - A known member rejoining a Stable group with unchanged protocols (and
//     not the leader) gets the current generation back without a rebalance.
//   - Static members (group.instance.id): a rejoin with an unknown member id
//     replaces the old id, which is fenced from then on
//     (FENCED_INSTANCE_ID); if the group is Stable and the protocol the
//     group would select is unchanged, no rebalance happens and the member
//     gets its old assignment from SyncGroup.
//   - The protocol is chosen by vote among the protocols every member
//     supports; INCONSISTENT_GROUP_PROTOCOL if a joiner has none in common.
//
// Version notes: v1 adds the rebalance timeout (v0 uses the session
// timeout), v5 the instance id, v7 the protocol type in the response, v9
// SkipAssignment (always false here: the leader always assigns).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleJoinGroup(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.JoinGroupRequest)
	if b.share.Exists(r.Group) { // one group ID namespace (share.go)
		b.logBad(req, "join of a share group's ID", "group", r.Group)
		return protocol.Reply{Response: groups.RefuseJoin(r)}
	}
	return groupReply(b.groups.JoinGroup(ctx, groupClient(req), r))
}

// groupReply is the reply to a request the coordinator answers now (resp)
// or, parked until its group moves on, with wait.
func groupReply[T kmsg.Response](resp T, wait func() (T, error)) protocol.Reply {
	if wait == nil {
		return protocol.Reply{Response: resp}
	}
	return protocol.Reply{Wait: func() (kmsg.Response, error) {
		resp, err := wait()
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return resp, nil
	}}
}

// groupClient is who sent a group request, as the coordinator sees it.
func groupClient(req *protocol.Request) groups.Client {
	var cl groups.Client
	if req.ClientID != nil {
		cl.ID = *req.ClientID
	}
	if req.Conn != nil {
		if req.Conn.Remote != nil {
			cl.Host = "/" + req.Conn.Remote.String()
		}
		cl.Draining = req.Conn.Draining()
	}
	return cl
}
