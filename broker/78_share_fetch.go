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
	"encoding/binary"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/protocol"
)

type shareSessionKey struct{ group, member string }

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
		chans = b.shareChans(f, chans)
	}
	var pooled []*[]byte // read buffers the response gives back once written
	if b.shareRead(f, &pooled) || wait <= 0 || len(f.Targets) == 0 {
		return protocol.Reply{Response: newShareFetchBody(f.Response(), pooled)}
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
				return newShareFetchBody(f.Response(), pooled), nil
			}
			chans = b.shareChans(f, chans[:0])
			if b.shareRead(f, &pooled) {
				return newShareFetchBody(f.Response(), pooled), nil
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

// shareRead acquires and reads; true if any record was acquired. The
// response's record bytes stay within the request's MaxBytes except for
// its first batch (Kafka's log read returns at least one); records past
// what fits are given back unacquired.
func (b *Broker) shareRead(f *share.Fetch, pooled *[]*[]byte) bool {
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
		data, next, err := b.readShareRecords(p, a.First, a.Last, pooled)
		if fit := batchesWithin(data, f.BytesLeft, !f.Sent); len(fit) < len(data) {
			data = fit
			next = a.First
			if len(fit) > 0 {
				next = batchesEnd(fit)
			}
		}
		if next <= a.Last {
			f.GiveBack(a, next)
		}
		if err != nil && len(data) == 0 {
			a.Out.ErrorCode = errCode(err)
			b.log.Warn("share fetch read failed", "topic", a.Target.Topic, "partition", a.Target.Partition, "err", err)
			continue
		}
		if len(data) == 0 {
			continue
		}
		if f.ReadCommitted {
			if ab := abortedRanges(b, p, data); len(ab) > 0 {
				f.Archive(a, ab)
			}
		}
		f.BytesLeft -= len(data)
		f.Sent = true
		if a.Out.Records == nil {
			a.Out.Records = data
		} else {
			a.Out.Records = append(a.Out.Records, data...)
		}
		got = got || len(a.Out.AcquiredRecords) > 0
	}
	return got
}

// batchesWithin cuts data after the last whole batch that ends within n
// bytes, keeping the first batch anyway when minOne.
func batchesWithin(data []byte, n int, minOne bool) []byte {
	if len(data) <= n {
		return data
	}
	pos := 0
	for len(data)-pos >= 27 {
		sz := int(binary.BigEndian.Uint32(data[pos+8:pos+12])) + 12
		if sz > len(data)-pos || sz < 27 || (pos+sz > n && !(pos == 0 && minOne)) {
			break
		}
		pos += sz
	}
	return data[:pos]
}

// abortedRanges lists the offsets of data's batches that belong to
// aborted transactions: a transactional data batch whose producer
// aborted a transaction that began at or before it and whose abort
// marker follows it. A share consumer cannot drop them itself (the
// response names no aborted transactions), so under read_committed the
// share-partition archives them, as Kafka does.
func abortedRanges(b *Broker, p *partition, data []byte) [][2]int64 {
	if len(data) < 27 {
		return nil
	}
	aborted := b.txns.abortedIn(p, int64(binary.BigEndian.Uint64(data[0:8])), batchesEnd(data))
	if len(aborted) == 0 {
		return nil
	}
	var out [][2]int64
	for len(data) >= 61 {
		sz := int(binary.BigEndian.Uint32(data[8:12])) + 12
		if sz > len(data) || sz < 61 {
			break
		}
		base := int64(binary.BigEndian.Uint64(data[0:8]))
		last := base + int64(int32(binary.BigEndian.Uint32(data[23:27])))
		attrs := binary.BigEndian.Uint16(data[21:23])
		pid := int64(binary.BigEndian.Uint64(data[43:51]))
		if attrs&0x10 != 0 && attrs&0x20 == 0 { // transactional, not control
			for _, a := range aborted {
				if a.PID == pid && a.First <= base && base < a.Last {
					out = append(out, [2]int64{base, last})
					break
				}
			}
		}
		data = data[sz:]
	}
	return out
}
