package broker

// Fetch v4–v18.
//
// Reads whole batches from each partition's store (its log, or its spool
// when forwarded: partition_store.go), bounded by the request's
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
// on the partitions' Changed channels (log or spool), the max-wait timer, the
// connection context and broker shutdown — no polling. Channels are taken
// before the read that found too little, so an append in between is never
// missed. As Kafka does, any partition error answers at once.
//
// With the authorizer on, a topic needs READ, else its partitions answer
// TOPIC_AUTHORIZATION_FAILED (checked before existence, as in Kafka).
//
// Fetch sessions (KIP-227, v7+): fetchsession.go. An incremental request
// reads every partition of its session and answers with those that have
// records, an error or a changed offset.
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
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/fetchsession"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

type fetchPart struct {
	p      *partition
	offset int64
	max    int32
	out    *kmsg.FetchResponseTopicPartition
	rr     *logstore.ReadResult // the data, pinned until the response is written
	failed bool                 // has an error; not read again

	key         fetchsession.Key // topic (by name or ID, as requested) and partition
	topicName   string           // resolved name, for the response
	leaderEpoch int32
	group       int // parts of one response topic share a group
}

func (fp *fetchPart) hasRecords() bool {
	return (fp.rr != nil && fp.rr.Size > 0) || len(fp.out.RecordBatches) > 0
}

type fetchState struct {
	b        *Broker
	version  int16
	parts    []fetchPart
	maxBytes int64
	total    int64
	errored  bool
	// committed: read_committed isolation.
	committed bool
	session   fetchsession.Ctx
	az        *authz // nil: nothing to check
	ctx       context.Context

	// With several nodes (cluster.go): the node asked, the consumer's
	// rack (KIP-392), and the leaders named in NOT_LEADER answers, whose
	// endpoints v16+ responses carry (KIP-951).
	req     *protocol.Request
	node    int32
	routed  bool
	rack    string
	leaders []int32
}

func (b *Broker) handleFetch(ctx context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.FetchRequest)
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.Version = req.Version

	sc, sessionParts, code := b.fetchSessions.Begin(r, req.Version, b.now)
	if code != 0 {
		resp.ErrorCode = code
		b.logRoutine(req, "fetch session error", "session", r.SessionID, "epoch", r.SessionEpoch, "error", kerr.ErrorForCode(code))
		return protocol.Reply{Response: resp}
	}
	fs := &fetchState{b: b, version: req.Version, maxBytes: int64(r.MaxBytes), committed: r.IsolationLevel == 1, session: sc, az: b.authorizer(req), ctx: ctx}
	fs.node, fs.routed = b.reqNode(req)
	fs.req, fs.rack = req, r.Rack
	if sc.Incremental() {
		outs := make([]kmsg.FetchResponseTopicPartition, len(sessionParts))
		fs.parts = make([]fetchPart, 0, len(sessionParts))
		group := 0
		for i := range sessionParts {
			sp := &sessionParts[i]
			if i > 0 && (sp.Key.Topic != sessionParts[i-1].Key.Topic || sp.Key.TopicID != sessionParts[i-1].Key.TopicID) {
				group++
			}
			fs.addPart(sp.Key, sp.Offset, sp.MaxBytes, sp.LeaderEpoch, group, &outs[i])
		}
	} else {
		n := 0
		for i := range r.Topics {
			n += len(r.Topics[i].Partitions)
		}
		outs := make([]kmsg.FetchResponseTopicPartition, n)
		fs.parts = make([]fetchPart, 0, n)
		for ti := range r.Topics {
			rt := &r.Topics[ti]
			for pi := range rt.Partitions {
				rp := &rt.Partitions[pi]
				k := fetchsession.Key{Topic: rt.Topic, TopicID: rt.TopicID, Partition: rp.Partition}
				if req.Version >= 13 {
					k.Topic = ""
				} else {
					k.TopicID = [16]byte{}
				}
				fs.addPart(k, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, ti, &outs[len(fs.parts)])
			}
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

// addPart resolves one requested partition; unknown topics, partitions
// and leader epochs become that partition's error.
func (fs *fetchState) addPart(k fetchsession.Key, offset int64, maxBytes, leaderEpoch int32, group int, sp *kmsg.FetchResponseTopicPartition) {
	*sp = kmsg.NewFetchResponseTopicPartition()
	sp.Partition = k.Partition
	// Kafka always sends a non-null (possibly empty) records field;
	// librdkafka 2.0 trips on null.
	sp.RecordBatches = []byte{}
	fp := fetchPart{offset: offset, max: maxBytes, out: sp, key: k, topicName: k.Topic, leaderEpoch: leaderEpoch, group: group}
	t := fs.b.lookupTopic(k.Topic, k.TopicID)
	name := k.Topic
	if t != nil {
		name = t.name
	}
	switch {
	case t == nil && fs.version >= 13:
		sp.ErrorCode = kerr.UnknownTopicID.Code
	case !fs.az.topic(opRead, name):
		// Authorization before existence, as in Kafka.
		sp.ErrorCode = errTopicAuth
	case t == nil:
		sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
	default:
		fp.topicName = t.name
		if fp.p = t.partition(k.Partition); fp.p == nil {
			sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		} else if code := partitionFault(fs.ctx, t.name, k.Partition); code != 0 {
			// An injected fault (a paused partition): this partition
			// alone, as a leader change shows on one partition.
			sp.ErrorCode, sp.HighWatermark = code, -1
		} else if fs.routed {
			fs.route(&fp)
		}
	}
	if sp.ErrorCode == 0 && fs.version >= 9 && fp.p != nil {
		sp.ErrorCode = leaderEpochCode(fp.p, leaderEpoch)
	}
	if fs.routed && (sp.ErrorCode == kerr.NotLeaderForPartition.Code || sp.ErrorCode == kerr.FencedLeaderEpoch.Code) && fs.version >= 12 {
		pl := fp.p.place.Load()
		sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = pl.Leader, pl.Epoch
		if pl.Leader >= 0 {
			fs.leaders = append(fs.leaders, pl.Leader)
		}
	}
	if sp.ErrorCode != 0 {
		fs.errored = true
		fp.failed = true
	}
	fs.parts = append(fs.parts, fp)
}

// route checks that the node asked may serve fp (cluster.go): its leader,
// or from v11 any in-sync replica (KIP-392). A leader asked by a consumer
// in another rack than its own, with the rack-aware selector on, names
// an in-sync replica in the consumer's rack instead of reading.
func (fs *fetchState) route(fp *fetchPart) {
	b, sp := fs.b, fp.out
	if fs.version < 11 {
		sp.ErrorCode = b.leaderCode(fs.node, true, fp.p)
	} else {
		sp.ErrorCode = b.replicaCode(fs.node, true, fp.p)
	}
	if sp.ErrorCode != 0 || !b.cfg.RackAwareReplicaSelector || fs.rack == "" || fs.version < 11 {
		return
	}
	pl := fp.p.place.Load()
	if pl.Leader != fs.node || b.cl.Rack(fs.node) == fs.rack {
		return
	}
	for _, r := range pl.ISR {
		if r != fs.node && b.cl.Rack(r) == fs.rack && b.cl.IsUp(r) {
			st := b.storeOf(fp.p)
			sp.PreferredReadReplica = r
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = st.highWatermark(), st.lastStable(), st.logStart()
			// Answered: no records, and no waiting for them.
			fp.failed, fs.errored = true, true
			return
		}
	}
}

// changed appends the Changed channel of every partition without an error.
func (fs *fetchState) changed(dst []<-chan struct{}) []<-chan struct{} {
	for i := range fs.parts {
		if fp := &fs.parts[i]; !fp.failed {
			dst = append(dst, fs.b.storeOf(fp.p).changed())
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
		st := fs.b.storeOf(fp.p)
		out.RecordBatches = out.RecordBatches[:0] // each pass of a long poll reads anew
		lso := st.lastStable()
		opts := readOptions(fp.offset, int(limit), minOne)
		if fs.committed {
			if lso <= fp.offset && fp.offset >= st.logStart() && fp.offset <= st.logEnd() {
				// Nothing stable to read yet (and MaxOffset 0
				// would mean "up to the high watermark").
				out.HighWatermark = st.highWatermark()
				out.LastStableOffset = lso
				out.LogStartOffset = st.logStart()
				continue
			}
			opts.MaxOffset = lso
		}
		res, err := st.read(opts)
		if err != nil {
			out.ErrorCode = errCode(err)
			out.HighWatermark = st.highWatermark()
			out.LastStableOffset = min(lso, out.HighWatermark)
			out.LogStartOffset = st.logStart()
			fp.failed = true
			fs.errored = true
			continue
		}
		out.HighWatermark = res.highWatermark
		out.LastStableOffset = min(lso, res.highWatermark)
		out.LogStartOffset = res.logStart
		size := int64(len(res.data))
		if res.rr != nil {
			size += res.rr.Size
		}
		if size > 0 && fs.committed {
			out.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			for _, a := range fs.b.txns.abortedIn(fp.p, fp.offset, lso) {
				at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				at.ProducerID, at.FirstOffset = a.PID, a.First
				out.AbortedTransactions = append(out.AbortedTransactions, at)
			}
		}
		switch {
		case len(res.data) > 0: // copied (a spool)
			out.RecordBatches = res.data
		case res.rr != nil && res.rr.Size > 0: // pinned file ranges (a log)
			fp.rr = res.rr
		case res.rr != nil:
			res.rr.Release()
		}
		fs.total += size
	}
}

// sent is what the response says of part i, for the fetch session.
func (fs *fetchState) sent(i int) fetchsession.Sent {
	fp := &fs.parts[i]
	return fetchsession.Sent{Key: fp.key, Offset: fp.offset, MaxBytes: fp.max, LeaderEpoch: fp.leaderEpoch,
		HasRecords: fp.hasRecords(), ErrorCode: fp.out.ErrorCode, HighWatermark: fp.out.HighWatermark,
		LastStable: fp.out.LastStableOffset, LogStart: fp.out.LogStartOffset}
}

// response settles the fetch session (which partitions the answer
// carries, the session ID), fills resp's topics and wraps resp so that the
// record bytes go from the files straight to the connection (fetchBody),
// or returns resp when there are none.
func (fs *fetchState) response(resp *kmsg.FetchResponse) kmsg.Response {
	omit, id := fs.b.fetchSessions.Finish(fs.session, len(fs.parts), fs.sent, fs.b.now)
	resp.SessionID = id
	if fs.version >= 16 {
		resp.Brokers = resp.Brokers[:0]
		for i, n := range fs.leaders {
			if slices.Contains(fs.leaders[:i], n) {
				continue
			}
			if host, port, ok := fs.b.addrFor(fs.req, n); ok {
				br := kmsg.NewFetchResponseBroker()
				br.NodeID, br.Host, br.Port, br.Rack = n, host, port, fs.b.rackPtr(n)
				resp.Brokers = append(resp.Brokers, br)
			}
		}
	}
	resp.Topics = resp.Topics[:0]
	var reads []*logstore.ReadResult
	if fs.total > 0 {
		reads = make([]*logstore.ReadResult, 0, len(fs.parts))
	}
	lastGroup := -1
	for i := range fs.parts {
		fp := &fs.parts[i]
		if omit != nil && omit[i] {
			if fp.rr != nil { // has data, so never left out; but never leak a pin
				fp.rr.Release()
				fp.rr = nil
			}
			continue
		}
		if len(resp.Topics) == 0 || fp.group != lastGroup {
			lastGroup = fp.group
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = fp.topicName, fp.key.TopicID
			resp.Topics = append(resp.Topics, t)
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, *fp.out)
		if reads != nil {
			reads = append(reads, fp.rr)
		}
	}
	if fs.total == 0 {
		return resp
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
