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
// Departures: MaxBytes is not a hard limit, as every acquired record's
// batch is sent (a share consumer treats an acquired offset without a
// record as a gap); share.isolation.level=read_committed is refused with
// INVALID_CONFIG when set (share_configs.go), not implemented.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

type shareSessionKey struct{ group, member string }

func (b *Broker) handleShareFetch(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ShareFetchRequest)
	f := b.share.StartFetch(r)
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
		chans = b.shareChans(f, chans)
	}
	if b.shareRead(f) || wait <= 0 || len(f.Targets) == 0 {
		return protocol.Reply{Response: f.Response()}
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
				return f.Response(), nil
			}
			chans = b.shareChans(f, chans[:0])
			if b.shareRead(f) {
				return f.Response(), nil
			}
		}
	}}
}

// shareChans are what may make records acquirable: appends to the
// fetch's partitions and releases in the share coordinator.
func (b *Broker) shareChans(f *share.Fetch, dst []<-chan struct{}) []<-chan struct{} {
	dst = append(dst, b.share.Changed())
	for _, t := range f.Targets {
		if tp := b.lookupTopic(t.Topic, [16]byte{}); tp != nil {
			if p := tp.partition(t.Partition); p != nil {
				dst = append(dst, b.storeOf(p).changed())
			}
		}
	}
	return dst
}

// shareRead acquires and reads; true if any record was acquired.
func (b *Broker) shareRead(f *share.Fetch) bool {
	got := false
	for _, a := range f.Acquire() {
		var p *partition
		if t := b.lookupTopic(a.Target.Topic, [16]byte{}); t != nil {
			p = t.partition(a.Target.Partition)
		}
		if p == nil {
			f.GiveBack(a, a.First)
			a.Out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		data, next, err := b.readShareRecords(p, a.First, a.Last)
		if next <= a.Last {
			f.GiveBack(a, next)
		}
		if err != nil && len(data) == 0 {
			a.Out.ErrorCode = errCode(err)
			b.log.Warn("share fetch read failed", "topic", a.Target.Topic, "partition", a.Target.Partition, "err", err)
			continue
		}
		if a.Out.Records == nil {
			a.Out.Records = data
		} else {
			a.Out.Records = append(a.Out.Records, data...)
		}
		got = got || len(a.Out.AcquiredRecords) > 0
	}
	return got
}
