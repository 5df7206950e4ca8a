package broker

// ShareFetch v1–v2 (KIP-932, KIP-1206, KIP-1222).
//
// Behavior: runs the member's share session (epoch 0 opens it, tied to the
// connection: when that closes, the session ends and what the member holds
// is released at once, as Kafka does; N
// continues it and adds the request's partitions and drops the forgotten
// ones, -1 closes it and releases what the member holds in it), applies
// the piggy-backed acknowledgements (AcknowledgeErrorCode per partition),
// then acquires up to MaxRecords records over the session's partitions
// and answers their batches with the acquired ranges and delivery counts.
// With nothing to acquire it waits up to MaxWaitMillis for a produce, a
// release or an expired lock. v2's IsRenewAck only acknowledges (renew
// allowed) and fetches nothing. Errors as Kafka: INVALID_REQUEST,
// SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, GROUP_ID_NOT_FOUND
// (a consumer group's ID), UNKNOWN_TOPIC_ID, INVALID_RECORD_STATE.
//
// MaxBytes bounds the record bytes as Kafka's log read: the first batch
// goes out whatever its size, then whole batches while they fit (0: no
// records); records past the cut are not acquired. A partition with no
// records answers empty, non-null records, as Kafka. Under
// share.isolation.level=read_committed records are acquired up to the
// last stable offset and those of aborted transactions are archived.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

type shareSessionKey struct{ group, member string }

// A ShareFetch answer with pooled record buffers writes itself.
var (
	_ protocol.BodyWriter = (*share.FetchBody)(nil)
	_ protocol.Releaser   = (*share.FetchBody)(nil)
)

func (b *Broker) handleShareFetch(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ShareFetchRequest)
	node, routed := b.reqNode(req)
	if !routed {
		node = -1 // one node, or the embedding program's own request
	}
	f := b.share.StartFetch(r, node)
	if end := f.EndWithConnection(); end != nil && req.Conn != nil {
		// One session per member and connection: the key keeps the
		// callbacks of a client that reopens its session bounded.
		req.Conn.OnClose(shareSessionKey{*r.GroupID, *r.MemberID}, end) // both set: the session opened
	}
	if f.Done {
		resp := f.Response()
		if resp.ErrorCode != 0 {
			b.logBad(req, "share fetch refused", "error", kerr.ErrorForCode(resp.ErrorCode))
		}
		return protocol.Reply{Response: resp}
	}
	wait := time.Duration(r.MaxWaitMillis) * time.Millisecond
	var chans []<-chan struct{}
	if wait > 0 {
		chans = f.Changed(shareView{b}, chans)
	}
	var pooled []*[]byte // read buffers the response gives back once written
	if f.Read(shareView{b}, &pooled) || wait <= 0 || len(f.Targets) == 0 {
		return protocol.Reply{Response: share.NewFetchBody(f.Response(), pooled)}
	}
	deadline := time.Now().Add(wait)
	var draining <-chan struct{}
	if req.Conn != nil {
		draining = req.Conn.Draining()
	}
	return protocol.Reply{Wait: func() (kmsg.Response, error) {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		for {
			if !waitAny(ctx, b.closing, draining, timer.C, chans) {
				return share.NewFetchBody(f.Response(), pooled), nil
			}
			chans = f.Changed(shareView{b}, chans[:0])
			if f.Read(shareView{b}, &pooled) {
				return share.NewFetchBody(f.Response(), pooled), nil
			}
		}
	}}
}
