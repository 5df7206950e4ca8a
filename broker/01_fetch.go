package broker

// Fetch v4–v18.
//
// Reads whole batches from each partition's log, bounded by the request's
// MaxBytes and each partition's PartitionMaxBytes; the first partition that
// has data returns at least one batch even if it exceeds both (KIP-74), so
// a consumer never stalls on a large batch. Every partition reports its
// high watermark, last stable offset (the first offset of the oldest open
// transaction, else the high watermark; txn.go) and log start offset.
// read_committed (isolation level 1) reads only below the last stable
// offset and lists the aborted transactions overlapping what it returns,
// which clients use to drop aborted records. An offset outside [log start, log
// end] is OFFSET_OUT_OF_RANGE.
//
// Long poll: if fewer than MinBytes are available and MaxWaitMillis > 0,
// the reply's Wait func (run on the connection's writer goroutine) blocks
// on the partitions' logstore Changed() channels, the max-wait timer, the
// connection context and broker shutdown — no polling. Channels are taken
// before the read that found too little, so an append in between is never
// missed. As Kafka does, any partition error answers at once.
//
// Fetch sessions (KIP-227): this broker does not keep sessions. A
// sessionless fetch (epoch -1) is answered in full; a request to open a
// session (epoch 0) is answered in full with session ID 0, which is how
// Kafka declines when its session cache is full, and clients then keep
// sending full fetches; an incremental fetch (epoch > 0) names a session we
// never created: FETCH_SESSION_ID_NOT_FOUND, and the client starts over.
//
// Partitions without data carry an empty, not null, records field, as
// Kafka's; librdkafka 2.0 fails on null.
//
// Version notes: v7 sessions, v9 CurrentLeaderEpoch (FENCED_LEADER_EPOCH /
// UNKNOWN_LEADER_EPOCH against our single epoch 0), v11 rack and preferred
// read replica (always -1), v12 flexible, v13 topic IDs (UNKNOWN_TOPIC_ID).

import (
	"context"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// leaderEpoch is the single leader epoch of every partition.
const leaderEpoch int32 = 0

type fetchPart struct {
	p      *partition
	offset int64
	max    int32
	out    *kmsg.FetchResponseTopicPartition
	rr     *logstore.ReadResult // the data, pinned until the response is written
	failed bool                 // has an error; not read again
}

type fetchState struct {
	b        *Broker
	parts    []fetchPart
	maxBytes int64
	total    int64
	errored  bool
	// committed: read_committed isolation.
	committed bool
}

func (b *Broker) handleFetch(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.FetchRequest)
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.Version = req.Version

	if r.SessionEpoch > 0 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return protocol.Reply{Response: resp}
	}
	resp.SessionID = 0

	fs := &fetchState{b: b, maxBytes: int64(r.MaxBytes), committed: r.IsolationLevel == 1}
	resp.Topics = make([]kmsg.FetchResponseTopic, len(r.Topics))
	n := 0
	for i := range r.Topics {
		n += len(r.Topics[i].Partitions)
	}
	fs.parts = make([]fetchPart, 0, n)
	for ti := range r.Topics {
		rt := &r.Topics[ti]
		st := &resp.Topics[ti]
		*st = kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		var t *topic
		if req.Version >= 13 {
			t = b.lookupTopic("", rt.TopicID)
		} else {
			t = b.lookupTopic(rt.Topic, [16]byte{})
		}
		if t != nil {
			st.Topic = t.name
		}
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			sp := &st.Partitions[pi]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			// Kafka always sends a non-null (possibly empty) records
			// field; librdkafka 2.0 trips on null.
			sp.RecordBatches = []byte{}
			var p *partition
			switch {
			case t == nil && req.Version >= 13:
				sp.ErrorCode = kerr.UnknownTopicID.Code
			case t == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				if p = t.partition(rp.Partition); p == nil {
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				}
			}
			if sp.ErrorCode == 0 && req.Version >= 9 {
				sp.ErrorCode = checkLeaderEpoch(rp.CurrentLeaderEpoch)
			}
			if sp.ErrorCode != 0 {
				fs.errored = true
				fs.parts = append(fs.parts, fetchPart{out: sp, failed: true})
				continue
			}
			fs.parts = append(fs.parts, fetchPart{p: p, offset: rp.FetchOffset, max: rp.PartitionMaxBytes, out: sp})
		}
	}

	wait := time.Duration(r.MaxWaitMillis) * time.Millisecond
	var chans []<-chan struct{}
	if wait > 0 && !fs.errored {
		chans = fs.changed(nil)
	}
	fs.read()
	if wait <= 0 || fs.errored || fs.total >= int64(r.MinBytes) || len(fs.parts) == 0 {
		fs.logErrors(req)
		return protocol.Reply{Response: fs.response(resp)}
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
				return fs.response(resp), nil // max wait elapsed, or shutting down
			}
			chans = fs.changed(chans[:0])
			fs.read()
			if fs.errored || fs.total >= int64(r.MinBytes) {
				fs.logErrors(req)
				return fs.response(resp), nil
			}
		}
	}}
}

// checkLeaderEpoch compares a client's CurrentLeaderEpoch with ours.
func checkLeaderEpoch(e int32) int16 {
	switch {
	case e < 0:
		return 0 // no check requested
	case e > leaderEpoch:
		return kerr.UnknownLeaderEpoch.Code
	case e < leaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	}
	return 0
}

// changed appends the Changed channel of every partition without an error.
func (fs *fetchState) changed(dst []<-chan struct{}) []<-chan struct{} {
	for i := range fs.parts {
		if fp := &fs.parts[i]; !fp.failed {
			if f := fs.b.forwardOf(fp.p); f != nil {
				dst = append(dst, f.sp.Changed())
			} else {
				dst = append(dst, fp.p.log.Changed())
			}
		}
	}
	return dst
}

// read (re)reads every partition without an error. Each pass starts over:
// a partition whose data was too little for MinBytes may have grown, and
// the byte budget and the first-batch rule apply to the whole answer.
func (fs *fetchState) read() {
	fs.total = 0
	for i := range fs.parts {
		if fp := &fs.parts[i]; fp.rr != nil {
			fp.rr.Release()
			fp.rr = nil
		}
	}
	for i := range fs.parts {
		fp := &fs.parts[i]
		if fp.failed {
			continue
		}
		limit := int64(fp.max)
		if rem := fs.maxBytes - fs.total; rem < limit {
			limit = rem
		}
		if limit < 0 {
			limit = 0
		}
		minOne := fs.total == 0
		out := fp.out
		if fs.b.lookupTopic(fp.p.topic.name, [16]byte{}) != fp.p.topic {
			// Deleted while we waited (its closed log woke us).
			out.ErrorCode = kerr.UnknownTopicOrPartition.Code
			fp.failed, fs.errored = true, true
			continue
		}
		if fs.readForwarded(fp, limit, minOne) {
			continue
		}
		lso := fs.b.txns.lastStable(fp.p)
		opts := readOptions(fp.offset, int(limit), minOne)
		if fs.committed {
			if lso <= fp.offset && fp.offset >= fp.p.log.LogStartOffset() && fp.offset <= fp.p.log.LogEndOffset() {
				// Nothing stable to read yet (and MaxOffset 0
				// would mean "up to the high watermark").
				out.HighWatermark = fp.p.log.HighWatermark()
				out.LastStableOffset = lso
				out.LogStartOffset = fp.p.log.LogStartOffset()
				continue
			}
			opts.MaxOffset = lso
		}
		rr, err := fp.p.log.Read(opts)
		if err != nil {
			out.ErrorCode = errCode(err)
			out.HighWatermark = fp.p.log.HighWatermark()
			out.LastStableOffset = min(lso, out.HighWatermark)
			out.LogStartOffset = fp.p.log.LogStartOffset()
			fp.failed = true
			fs.errored = true
			continue
		}
		out.HighWatermark = rr.HighWatermark
		out.LastStableOffset = min(lso, rr.HighWatermark)
		out.LogStartOffset = rr.LogStartOffset
		if rr.Size > 0 && fs.committed {
			out.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			for _, a := range fs.b.txns.abortedIn(fp.p, fp.offset, lso) {
				at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				at.ProducerID, at.FirstOffset = a.pid, a.first
				out.AbortedTransactions = append(out.AbortedTransactions, at)
			}
		}
		if rr.Size > 0 {
			fp.rr = rr
			fs.total += rr.Size
		} else {
			rr.Release()
		}
	}
}

// response wraps resp so that the record bytes go from the files straight
// to the connection (fetchBody), or returns resp when there are none.
func (fs *fetchState) response(resp *kmsg.FetchResponse) kmsg.Response {
	if fs.total == 0 {
		return resp
	}
	reads := make([]*logstore.ReadResult, len(fs.parts))
	for i := range fs.parts {
		reads[i] = fs.parts[i].rr
	}
	fb := &fetchBody{FetchResponse: resp, reads: reads}
	if fs.total < copyFetchBelow {
		// Small: one copy beats the extra syscalls of sendfile, and the
		// connection can coalesce the response with others.
		return fb.materialize()
	}
	return fb
}

// copyFetchBelow is the response data size under which record bytes are
// copied into the response rather than sent from the files.
const copyFetchBelow = 32 << 10

func (fs *fetchState) logErrors(req *protocol.Request) {
	if !fs.errored {
		return
	}
	for i := range fs.parts {
		if c := fs.parts[i].out.ErrorCode; c != 0 {
			switch c {
			case kerr.UnknownTopicID.Code, kerr.UnknownTopicOrPartition.Code, kerr.OffsetOutOfRange.Code,
				kerr.NotLeaderForPartition.Code, kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
				// Consumers meet these as topics are deleted or
				// retention moves on, and retry quickly.
				fs.b.logRoutine(req, "fetch partition error", "partition", fs.parts[i].out.Partition, "error", kerr.ErrorForCode(c))
			default:
				fs.b.logBad(req, "fetch partition error", "partition", fs.parts[i].out.Partition, "error", kerr.ErrorForCode(c))
			}
			return
		}
	}
}

// waitAny blocks until one of chans is closed (true), or the timer fires,
// ctx ends, the broker closes or the server drains (false).
func waitAny(ctx context.Context, closing, draining <-chan struct{}, timer <-chan time.Time, chans []<-chan struct{}) bool {
	if len(chans) == 1 {
		select {
		case <-chans[0]:
			return true
		case <-timer:
		case <-ctx.Done():
		case <-closing:
		case <-draining:
		}
		return false
	}
	const fixed = 4
	cases := make([]reflect.SelectCase, 0, len(chans)+fixed)
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(closing)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(draining)})
	for _, c := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	i, _, _ := reflect.Select(cases)
	return i >= fixed
}

func readOptions(offset int64, maxBytes int, minOne bool) logstore.ReadOptions {
	return logstore.ReadOptions{Offset: offset, MaxBytes: maxBytes, MinOneBatch: minOne}
}
