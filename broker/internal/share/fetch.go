package share

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// defaultMaxRecords is what a ShareFetch without MaxRecords (v0) gets,
// Kafka's share.max.fetch.records default.
const defaultMaxRecords = 500

type ackBatch struct {
	first, last int64
	types       []int8
}

// validBatches checks the shape of one partition's acknowledgement
// batches: ordered, disjoint, one type or one per offset, known types.
func validBatches(bs []ackBatch, renew bool) bool {
	prev := int64(-1)
	for i, b := range bs {
		if b.first < 0 || b.last < b.first || (i > 0 && b.first <= prev) {
			return false
		}
		if len(b.types) != 1 && int64(len(b.types)) != b.last-b.first+1 {
			return false
		}
		for _, t := range b.types {
			if t < ackGap || t > ackRenew || (t == ackRenew && !renew) {
				return false
			}
		}
		prev = b.last
	}
	return true
}

// ackLocked applies one partition's acknowledgements for member; every
// batch is checked before any is applied, so a partition's acks apply
// wholly or not at all. It returns the partition's error code; a
// partition it changed goes into round, whose write answers for it.
func (c *Coordinator) ackLocked(g *group, member string, id [16]byte, p int32, bs []ackBatch, renew bool, round *ackRound, fail func(int16)) int16 {
	if !validBatches(bs, renew) {
		return kerr.InvalidRequest.Code
	}
	if _, ok := c.b.TopicName(id); !ok {
		return kerr.UnknownTopicID.Code
	}
	sp := g.parts[tp{id, p}]
	if sp == nil {
		return codeInvalidRecordState
	}
	for _, b := range bs {
		if code := sp.checkAck(member, b.first, b.last); code != 0 {
			return code
		}
	}
	limit := c.deliveryLimit(g.name)
	renewUntil := c.cfg.Now().Add(c.lockDuration(g.name))
	// Fetches waiting on this partition may go on when records became
	// available again or the window moved (its lock limit freed).
	released, start := false, sp.spso
	for _, b := range bs {
		for _, t := range b.types {
			released = released || t == ackRelease
		}
		sp.ack(b.first, b.last, b.types, limit, renewUntil)
	}
	round.dirty = append(round.dirty, sp)
	round.fail = append(round.fail, fail)
	round.wake = round.wake || released || sp.spso != start
	return 0
}

// ackRound is the share-partitions one request's acknowledgements
// changed: their states are written together, one append (and under
// durability "always" one fsync) for the request rather than one per
// partition.
type ackRound struct {
	dirty []*partition
	fail  []func(int16) // sets a partition's code when the write fails
	wake  bool
}

// finish writes the round's states before the request is answered; a
// failed write answers COORDINATOR_NOT_AVAILABLE for every partition in it.
func (c *Coordinator) finishAcks(g *group, round *ackRound) {
	if len(round.dirty) == 0 {
		return
	}
	if err := c.persist(g, round.dirty...); err != nil {
		for _, f := range round.fail {
			f(kerr.CoordinatorNotAvailable.Code)
		}
		return
	}
	if round.wake {
		c.signal()
	}
}

// sessionFor validates a request's share session epoch: 0 opens (or
// replaces) one, -1 closes, N continues the session whose next epoch is N.
func (g *group) sessionFor(k sessionKey, epoch int32) (*session, int16) {
	s := g.sessions[k]
	switch {
	case s != nil && s.left && epoch > 0:
		return nil, kerr.ShareSessionNotFound.Code
	case epoch == 0:
		s = &session{epoch: 0, parts: map[tp]struct{}{}}
		g.sessions[k] = s
		return s, 0
	case s == nil:
		return nil, kerr.ShareSessionNotFound.Code
	case epoch == -1:
		return s, 0
	case epoch != s.epoch:
		return nil, kerr.InvalidShareSessionEpoch.Code
	}
	return s, 0
}

func (s *session) bump() {
	if s.epoch == 1<<31-1 {
		s.epoch = 1
	} else {
		s.epoch++
	}
}

// closeSession releases what the member holds in the session's partitions.
func (c *Coordinator) closeSession(g *group, key sessionKey, s *session) {
	delete(g.sessions, key)
	var dirty []*partition
	for k := range s.parts {
		if sp := g.parts[k]; sp != nil && sp.releaseOwner(key.member, c.deliveryLimit(g.name)) {
			dirty = append(dirty, sp)
		}
	}
	if len(dirty) > 0 {
		c.persist(g, dirty...)
		c.signal()
	}
}

// Target is one partition a ShareFetch acquires from.
type Target struct {
	TopicID   [16]byte
	Topic     string
	Partition int32
}

// Acquired is records acquired for a ShareFetch on one partition, from
// First to Last; the broker adds their batches to Out.
type Acquired struct {
	Target      *Target
	First, Last int64
	Out         *kmsg.ShareFetchResponseTopicPartition
}

// Fetch is one ShareFetch in progress.
type Fetch struct {
	c       *Coordinator
	group   string
	key     sessionKey
	resp    *kmsg.ShareFetchResponse
	order   []tp
	outs    map[tp]*kmsg.ShareFetchResponseTopicPartition
	Targets []*Target
	max     int
	Done    bool     // answer now: an error, a closed session or a renewal
	opened  *session // the session this fetch opened (epoch 0), else nil
	// BytesLeft is what remains of the request's MaxBytes for record
	// data; the broker lowers it as it adds batches. As Kafka's log
	// read, the first batch of a response goes out whatever its size.
	BytesLeft int
	Sent      bool // some record batch is in the response
	// ReadCommitted: the group reads with share.isolation.level
	// read_committed (records up to the last stable offset; those of
	// aborted transactions are archived, never delivered).
	ReadCommitted bool
}

// EndWithConnection returns what the broker runs when the connection that
// opened this fetch's share session closes: the session ends and the
// records the member holds through it are released for redelivery at
// once, as Kafka does when a share session's connection goes away, rather
// than after the acquisition lock expires. Nil unless this fetch opened
// the session. A session opened again since (a reconnect) is left alone.
func (f *Fetch) EndWithConnection() func() {
	s := f.opened
	if s == nil {
		return nil
	}
	c, group, key := f.c, f.group, f.key
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if g := c.groups[group]; g != nil && g.sessions[key] == s {
			c.closeSession(g, key, s)
		}
	}
}

func (f *Fetch) out(id [16]byte, p int32) *kmsg.ShareFetchResponseTopicPartition {
	k := tp{id, p}
	o := f.outs[k]
	if o == nil {
		v := kmsg.NewShareFetchResponseTopicPartition()
		v.Partition = p
		v.CurrentLeader.LeaderID, v.CurrentLeader.LeaderEpoch = -1, -1
		o = &v
		f.outs[k] = o
		f.order = append(f.order, k)
	}
	return o
}

// StartFetch validates a ShareFetch, runs its session and applies its
// piggy-backed acknowledgements. Unless f.Done, the broker then calls
// Acquire (again after waiting, when nothing was acquired) and Response.
// node is the cluster node the request came to: its share session is that
// node's.
func (c *Coordinator) StartFetch(r *kmsg.ShareFetchRequest, node int32) *Fetch {
	f := &Fetch{c: c, resp: r.ResponseKind().(*kmsg.ShareFetchResponse), outs: map[tp]*kmsg.ShareFetchResponseTopicPartition{}}
	var group, memberID string
	if r.GroupID != nil {
		group = *r.GroupID
	}
	if r.MemberID != nil {
		memberID = *r.MemberID
	}
	f.group, f.key = group, sessionKey{memberID, node}
	fail := func(e *kerr.Error) *Fetch {
		f.resp.ErrorCode, f.Done = e.Code, true
		return f
	}
	if group == "" || memberID == "" || len(memberID) > 36 {
		return fail(kerr.InvalidRequest)
	}
	hasAcks := false
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
		}
	}
	renew := r.Version >= 2 && r.IsRenewAck
	if renew {
		if r.MaxBytes != 0 || r.MinBytes != 0 || r.MaxRecords != 0 || r.MaxWaitMillis != 0 {
			return fail(kerr.InvalidRequest)
		}
	}
	if r.ShareSessionEpoch == 0 && hasAcks {
		return fail(kerr.InvalidRequest)
	}
	if c.b.OtherGroup(group) {
		return fail(kerr.GroupIDNotFound)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f.resp.AcquisitionLockTimeoutMillis = int32(c.lockDuration(group).Milliseconds())
	g := c.getOrCreate(group)
	if old := g.sessions[f.key]; old != nil && old.left && r.ShareSessionEpoch == 0 {
		c.closeSession(g, f.key, old) // what the member held before it left
	}
	s, code := g.sessionFor(f.key, r.ShareSessionEpoch)
	if code != 0 {
		f.resp.ErrorCode, f.Done = code, true
		return f
	}
	if r.ShareSessionEpoch == 0 {
		f.opened = s
	}
	var round ackRound
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) > 0 {
				bs := make([]ackBatch, len(p.AcknowledgementBatches))
				for i, b := range p.AcknowledgementBatches {
					bs[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
				}
				o := f.out(t.TopicID, p.Partition)
				o.AcknowledgeErrorCode = c.ackLocked(g, memberID, t.TopicID, p.Partition, bs, renew, &round, func(code int16) { o.AcknowledgeErrorCode = code })
			}
			if r.ShareSessionEpoch != -1 && !(renew && len(p.AcknowledgementBatches) > 0) {
				s.parts[tp{t.TopicID, p.Partition}] = struct{}{}
				f.out(t.TopicID, p.Partition)
			}
		}
	}
	c.finishAcks(g, &round)
	if r.ShareSessionEpoch == -1 {
		c.closeSession(g, f.key, s)
		f.Done = true
		return f
	}
	for _, t := range r.ForgottenTopicsData {
		for _, p := range t.Partitions {
			delete(s.parts, tp{t.TopicID, p})
		}
	}
	s.bump()
	if renew {
		f.Done = true
		return f
	}
	f.max = int(r.MaxRecords)
	if f.max <= 0 {
		f.max = defaultMaxRecords
	}
	// MaxBytes 0 acquires nothing (Kafka answers no records), while
	// any positive limit still lets the first batch through.
	f.BytesLeft = max(int(r.MaxBytes), 0)
	f.ReadCommitted = c.readCommitted(group)
	for k := range s.parts {
		topic, ok := c.b.TopicName(k.id)
		if !ok {
			f.out(k.id, k.p).ErrorCode = kerr.UnknownTopicID.Code
			continue
		}
		if n, _ := c.b.PartitionCount(topic); k.p < 0 || k.p >= n {
			f.out(k.id, k.p).ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		if !c.b.Leads(node, topic, k.p) {
			// Share-partitions live with their leader, as in Kafka.
			f.out(k.id, k.p).ErrorCode = kerr.NotLeaderForPartition.Code
			continue
		}
		f.Targets = append(f.Targets, &Target{TopicID: k.id, Topic: topic, Partition: k.p})
	}
	// Start where the last fetch of the session did not, so that no
	// partition starves when MaxRecords is reached early.
	if n := len(f.Targets); n > 1 {
		i := int(s.epoch) % n
		f.Targets = append(f.Targets[i:], f.Targets[:i]...)
	}
	return f
}

// Acquire locks records on the fetch's targets, up to the request's
// MaxRecords in all, and persists their delivery counts.
func (f *Fetch) Acquire() []Acquired {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[f.group]
	if g == nil {
		return nil
	}
	deadline := c.cfg.Now().Add(c.lockDuration(f.group))
	left := f.max
	if f.BytesLeft <= 0 {
		return nil // no room for a record; the first batch needs MaxBytes > 0
	}
	var out []Acquired
	var dirty []*partition
	for _, t := range f.Targets {
		if left <= 0 {
			break
		}
		sp, _ := c.partitionFor(g, t.TopicID, t.Partition)
		if sp == nil {
			continue
		}
		_, hwm, _ := c.b.Offsets(t.Topic, t.Partition)
		if f.ReadCommitted {
			hwm = min(hwm, c.b.LastStable(t.Topic, t.Partition))
		}
		rs := sp.acquire(f.key.member, hwm, left, c.cfg.MaxRecordLocks, deadline)
		if len(rs) == 0 {
			continue
		}
		dirty = append(dirty, sp)
		o := f.out(t.TopicID, t.Partition)
		for _, r := range rs {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = r.first, r.last, r.count
			o.AcquiredRecords = append(o.AcquiredRecords, ar)
			left -= int(r.last - r.first + 1)
		}
		out = append(out, Acquired{Target: t, First: rs[0].first, Last: rs[len(rs)-1].last, Out: o})
	}
	if len(dirty) > 0 {
		if err := c.persist(g, dirty...); err != nil {
			// Not durable: give the records back and answer none.
			for _, a := range out {
				sp := g.parts[tp{a.Target.TopicID, a.Target.Partition}]
				for _, r := range a.Out.AcquiredRecords {
					sp.unacquire(r.FirstOffset, r.LastOffset)
				}
				a.Out.AcquiredRecords = nil
				a.Out.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			return nil
		}
	}
	return out
}

// GiveBack undoes the acquisition of a's records from offset from on,
// which the broker could not read (their delivery counts are lowered
// again, as they were not delivered).
func (f *Fetch) GiveBack(a Acquired, from int64) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[f.group]
	if g == nil {
		return
	}
	sp := g.parts[tp{a.Target.TopicID, a.Target.Partition}]
	if sp == nil {
		return
	}
	keep := a.Out.AcquiredRecords[:0]
	for _, r := range a.Out.AcquiredRecords {
		if r.FirstOffset >= from {
			sp.unacquire(r.FirstOffset, r.LastOffset)
			continue
		}
		if r.LastOffset >= from {
			sp.unacquire(from, r.LastOffset)
			r.LastOffset = from - 1
		}
		keep = append(keep, r)
	}
	a.Out.AcquiredRecords = keep
	// No signal: waking waiting fetches for records this one could not
	// read would only have them fail the same way.
	c.persist(g, sp)
}

// Archive archives a's acquired records in the given offset ranges
// (those of aborted transactions, under read_committed): they are done
// for the group and leave the response's acquired records.
func (f *Fetch) Archive(a Acquired, ranges [][2]int64) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[f.group]
	if g == nil {
		return
	}
	sp := g.parts[tp{a.Target.TopicID, a.Target.Partition}]
	if sp == nil {
		return
	}
	var keep []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	for _, r := range a.Out.AcquiredRecords {
		for o := r.FirstOffset; o <= r.LastOffset; {
			end, out := o, inRanges(o, ranges)
			for end < r.LastOffset && inRanges(end+1, ranges) == out {
				end++
			}
			if out {
				sp.archive(o, end)
			} else {
				kr := r
				kr.FirstOffset, kr.LastOffset = o, end
				keep = append(keep, kr)
			}
			o = end + 1
		}
	}
	a.Out.AcquiredRecords = keep
	sp.advance()
	if err := c.persist(g, sp); err == nil {
		c.signal() // SPSO may have moved past them
	}
}

func inRanges(o int64, ranges [][2]int64) bool {
	for _, r := range ranges {
		if o >= r[0] && o <= r[1] {
			return true
		}
	}
	return false
}

// Response assembles the answer. A partition with no records carries
// empty, not null, records, as Kafka's ShareFetchResponse always
// converts them: librdkafka refuses a null records field and drops
// the whole response with it.
func (f *Fetch) Response() *kmsg.ShareFetchResponse {
	idx := map[[16]byte]int{}
	for _, k := range f.order {
		i, ok := idx[k.id]
		if !ok {
			i = len(f.resp.Topics)
			idx[k.id] = i
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = k.id
			f.resp.Topics = append(f.resp.Topics, t)
		}
		o := f.outs[k]
		if o.Records == nil {
			o.Records = []byte{}
		}
		f.resp.Topics[i].Partitions = append(f.resp.Topics[i].Partitions, *o)
	}
	return f.resp
}

// Acknowledge serves ShareAcknowledge.
func (c *Coordinator) Acknowledge(r *kmsg.ShareAcknowledgeRequest, node int32) *kmsg.ShareAcknowledgeResponse {
	resp := r.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	var group, memberID string
	if r.GroupID != nil {
		group = *r.GroupID
	}
	if r.MemberID != nil {
		memberID = *r.MemberID
	}
	if group == "" || memberID == "" || len(memberID) > 36 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if r.ShareSessionEpoch == 0 {
		resp.ErrorCode = kerr.InvalidShareSessionEpoch.Code
		return resp
	}
	if c.b.OtherGroup(group) {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp.AcquisitionLockTimeoutMillis = int32(c.lockDuration(group).Milliseconds())
	g := c.groups[group]
	if g == nil {
		resp.ErrorCode = kerr.ShareSessionNotFound.Code
		return resp
	}
	key := sessionKey{memberID, node}
	s, code := g.sessionFor(key, r.ShareSessionEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	renew := r.Version >= 2 && r.IsRenewAck
	var round ackRound
	resp.Topics = make([]kmsg.ShareAcknowledgeResponseTopic, len(r.Topics))
	for ti, t := range r.Topics {
		rt := &resp.Topics[ti]
		rt.Default()
		rt.TopicID = t.TopicID
		rt.Partitions = make([]kmsg.ShareAcknowledgeResponseTopicPartition, len(t.Partitions))
		for pi, p := range t.Partitions {
			bs := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				bs[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			rp := &rt.Partitions[pi]
			rp.Default()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rp.ErrorCode = c.ackLocked(g, memberID, t.TopicID, p.Partition, bs, renew, &round, func(code int16) { rp.ErrorCode = code })
		}
	}
	c.finishAcks(g, &round)
	if r.ShareSessionEpoch == -1 {
		c.closeSession(g, key, s)
	} else {
		s.bump()
	}
	return resp
}
