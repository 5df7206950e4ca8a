package broker

// The request log (broker/internal/reqlog keeps the ring): the last N
// requests the broker answered, for a test to see what its client did
// without a packet capture. Off (one nil-pointer load per request) until
// EnableRequestLog; the root package turns it on with the control API.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/reqlog"
	"github.com/minikafka/minikafka/protocol"
)

// RequestLogEntry is one answered request.
type RequestLogEntry = reqlog.Entry

// EnableRequestLog keeps the last n requests (n <= 0 turns it off).
func (b *Broker) EnableRequestLog(n int) { b.reqlog.Enable(n) }

// RequestLog returns the logged requests, oldest first; nil when off.
func (b *Broker) RequestLog() []RequestLogEntry { return b.reqlog.Entries() }

// serveLogged is Serve with the request log on.
func (b *Broker) serveLogged(ctx context.Context, req *protocol.Request, r *reqlog.Ring) protocol.Reply {
	e := RequestLogEntry{Time: time.Now(), Key: req.Key, Version: req.Version}
	if req.ClientID != nil {
		e.ClientID = *req.ClientID
	}
	if req.Conn != nil {
		e.ConnID, e.Listener = req.Conn.ID, req.Conn.Listener
		if req.Conn.Remote != nil {
			e.Remote = req.Conn.Remote.String()
		}
	}
	reply := b.serve(ctx, req)
	if reply.Wait == nil {
		r.Done(e, reply.Response, reply.Err)
		return reply
	}
	wait := reply.Wait
	reply.Wait = func() (kmsg.Response, error) {
		resp, err := wait()
		r.Done(e, resp, err)
		return resp, err
	}
	return reply
}
