package broker

// JoinGroup v0–v9: the group coordinator's (groups.Coordinator.JoinGroup
// says how a join phase runs); an answer that waits for the join phase to
// end is sent from the connection's writer (groupReply). The ID of a share
// group is refused with GROUP_ID_NOT_FOUND.

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
