package broker

// Fetch sessions (KIP-227).
//
// A consumer fetching many partitions would otherwise name every partition
// in every request and get every partition back. With a session the broker
// remembers the partitions and, per partition, what it last told the
// client (high watermark, last stable offset, log start offset); an
// incremental request then carries only partitions whose fetch position
// changed, and its response only partitions with records, an error, or a
// changed offset.
//
// Request metadata (session ID, epoch), as Kafka reads it:
//   - ID 0, epoch -1: sessionless full fetch.
//   - epoch 0: full fetch that opens a new session (any named session is
//     closed first); the response carries the new ID, or 0 when the cache
//     is full and no session may be evicted.
//   - ID X, epoch -1: close session X, answer as sessionless.
//   - ID X, epoch N > 0: incremental; FETCH_SESSION_ID_NOT_FOUND for an
//     unknown X, INVALID_FETCH_SESSION_EPOCH unless N is the epoch the
//     session expects next, FETCH_SESSION_TOPIC_ID_ERROR if the request's
//     use of topic IDs (v13+) differs from the session's.
//
// The cache holds at most maxFetchSessions sessions. To admit a new one
// when full it evicts the least recently used session idle for longer than
// fetchSessionEvictAfter, else the least recently used session with fewer
// partitions than the newcomer (Kafka favours large sessions the same way,
// since they save the most), else declines.
//
// Within a session, partitions that returned records move to the back of
// the session's order, so a response byte limit reached early does not
// starve the same partitions every time.

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// maxFetchSessions is Kafka's max.incremental.fetch.session.cache.slots.
	maxFetchSessions = 1000
	// fetchSessionEvictAfter is Kafka's
	// min.incremental.fetch.session.eviction.ms.
	fetchSessionEvictAfter = 120 * time.Second
)

type sessionKey struct {
	topic     string   // before v13
	topicID   [16]byte // v13+
	partition int32
}

// sessionPart is one partition of a session: the client's fetch position
// and what the broker last sent about the partition.
type sessionPart struct {
	key         sessionKey
	offset      int64
	maxBytes    int32
	leaderEpoch int32
	// Last values sent; -1 before the first response, so a newly added
	// partition is always in the next response.
	hw, lso, logStart int64
}

type fetchSession struct {
	id      int32
	usesIDs bool

	mu       sync.Mutex
	epoch    int32 // the epoch the next incremental request must carry
	parts    []*sessionPart
	index    map[sessionKey]*sessionPart
	lastUsed time.Time
}

type fetchSessionCache struct {
	mu       sync.Mutex
	max      int
	sessions map[int32]*fetchSession
}

func newFetchSessionCache(max int) *fetchSessionCache {
	return &fetchSessionCache{max: max, sessions: make(map[int32]*fetchSession)}
}

func (c *fetchSessionCache) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
}

func (c *fetchSessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// create admits a session holding parts, evicting one if the cache is
// full; it returns nil when the session is declined.
func (c *fetchSessionCache) create(usesIDs bool, parts []*sessionPart, now time.Time) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		return nil
	}
	if len(c.sessions) >= c.max && !c.evictLocked(len(parts), now) {
		return nil
	}
	s := &fetchSession{usesIDs: usesIDs, epoch: 1, parts: parts, lastUsed: now,
		index: make(map[sessionKey]*sessionPart, len(parts))}
	for _, p := range parts {
		s.index[p.key] = p
	}
	for {
		id := rand.Int32N(math.MaxInt32) + 1 // never 0, which means "no session"
		if _, taken := c.sessions[id]; !taken {
			s.id = id
			break
		}
	}
	c.sessions[s.id] = s
	return s
}

func (c *fetchSessionCache) evictLocked(newParts int, now time.Time) bool {
	var stale, smaller *fetchSession
	var staleUsed, smallerUsed time.Time
	for _, s := range c.sessions {
		s.mu.Lock()
		used, n := s.lastUsed, len(s.parts)
		s.mu.Unlock()
		if now.Sub(used) > fetchSessionEvictAfter && (stale == nil || used.Before(staleUsed)) {
			stale, staleUsed = s, used
		}
		if n < newParts && (smaller == nil || used.Before(smallerUsed)) {
			smaller, smallerUsed = s, used
		}
	}
	victim := stale
	if victim == nil {
		victim = smaller
	}
	if victim == nil {
		return false
	}
	delete(c.sessions, victim.id)
	return true
}

// fetchSessionCtx is one request's view of its session.
type fetchSessionCtx struct {
	session     *fetchSession // incremental: the session; nil otherwise
	create      bool          // full fetch asking for a new session
	usesIDs     bool
	incremental bool
}

// beginFetchSession interprets the request's session fields. It returns the
// top-level error code for a session error, else the context and, for an
// incremental request, the partitions to read (the whole session, updated
// by the request).
func (b *Broker) beginFetchSession(r *kmsg.FetchRequest, version int16) (fetchSessionCtx, []sessionPart, int16) {
	usesIDs := version >= 13
	if version < 7 {
		return fetchSessionCtx{}, nil, 0
	}
	if r.SessionEpoch == 0 || r.SessionEpoch == -1 {
		if r.SessionID != 0 {
			b.fetchSessions.remove(r.SessionID)
		}
		return fetchSessionCtx{create: r.SessionEpoch == 0, usesIDs: usesIDs}, nil, 0
	}
	s := b.fetchSessions.get(r.SessionID)
	if s == nil || r.SessionEpoch < 0 {
		return fetchSessionCtx{}, nil, kerr.FetchSessionIDNotFound.Code
	}
	if s.usesIDs != usesIDs {
		return fetchSessionCtx{}, nil, kerr.FetchSessionTopicIDError.Code
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.SessionEpoch != s.epoch {
		return fetchSessionCtx{}, nil, kerr.InvalidFetchSessionEpoch.Code
	}
	s.epoch++
	if s.epoch <= 0 {
		s.epoch = 1 // wraps past MaxInt32 to 1, as Kafka's nextEpoch
	}
	s.lastUsed = b.now()
	for ti := range r.Topics {
		rt := &r.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			k := sessionKeyFor(usesIDs, rt.Topic, rt.TopicID, rp.Partition)
			sp := s.index[k]
			if sp == nil {
				sp = &sessionPart{key: k, hw: -1, lso: -1, logStart: -1}
				s.index[k] = sp
				s.parts = append(s.parts, sp)
			}
			sp.offset, sp.maxBytes, sp.leaderEpoch = rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch
		}
	}
	forgot := false
	for _, ft := range r.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := sessionKeyFor(usesIDs, ft.Topic, ft.TopicID, p)
			if _, ok := s.index[k]; ok {
				delete(s.index, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := s.parts[:0]
		for _, sp := range s.parts {
			if s.index[sp.key] == sp {
				kept = append(kept, sp)
			}
		}
		clear(s.parts[len(kept):])
		s.parts = kept
	}
	want := make([]sessionPart, len(s.parts))
	for i, sp := range s.parts {
		want[i] = *sp
	}
	return fetchSessionCtx{session: s, usesIDs: usesIDs, incremental: true}, want, 0
}

func sessionKeyFor(usesIDs bool, topic string, id [16]byte, partition int32) sessionKey {
	if usesIDs {
		return sessionKey{topicID: id, partition: partition}
	}
	return sessionKey{topic: topic, partition: partition}
}

// finishFetchSession runs when the response is about to be sent: it picks
// the partitions an incremental response leaves out (omit[i]: no records,
// no error, no changed offset; nil omits none), remembers what was sent,
// creates a requested session, and returns the session ID for the
// response.
func (b *Broker) finishFetchSession(sc fetchSessionCtx, parts []fetchPart) (omit []bool, id int32) {
	switch {
	case sc.incremental:
		omit = make([]bool, len(parts))
		s := sc.session
		s.mu.Lock()
		defer s.mu.Unlock()
		var moved []*sessionPart
		for i := range parts {
			fp := &parts[i]
			sp := s.index[fp.key]
			if sp == nil {
				// Forgotten by a later request: send it anyway,
				// the client asked for it when it sent this one.
				continue
			}
			omit[i] = !sp.remember(fp)
			if fp.hasRecords() {
				moved = append(moved, sp)
			}
		}
		if len(moved) > 0 && len(moved) < len(s.parts) {
			s.parts = rotated(s.parts, moved)
		}
		return omit, s.id
	case sc.create:
		sps := make([]*sessionPart, 0, len(parts))
		var moved []*sessionPart
		seen := make(map[sessionKey]bool, len(parts))
		for i := range parts {
			fp := &parts[i]
			if seen[fp.key] {
				continue
			}
			seen[fp.key] = true
			sp := &sessionPart{key: fp.key, offset: fp.offset, maxBytes: fp.max, leaderEpoch: fp.leaderEpoch, hw: -1, lso: -1, logStart: -1}
			sp.remember(fp)
			sps = append(sps, sp)
			if fp.hasRecords() {
				moved = append(moved, sp)
			}
		}
		if len(moved) > 0 && len(moved) < len(sps) {
			sps = rotated(sps, moved)
		}
		if s := b.fetchSessions.create(sc.usesIDs, sps, b.now()); s != nil {
			return nil, s.id
		}
	}
	return nil, 0
}

// remember records what the response says about the partition and reports
// whether an incremental response must carry it.
func (sp *sessionPart) remember(fp *fetchPart) bool {
	out := fp.out
	must := out.ErrorCode != 0 || fp.hasRecords()
	if sp.hw != out.HighWatermark {
		sp.hw, must = out.HighWatermark, true
	}
	if sp.lso != out.LastStableOffset {
		sp.lso, must = out.LastStableOffset, true
	}
	if sp.logStart != out.LogStartOffset {
		sp.logStart, must = out.LogStartOffset, true
	}
	return must
}

// rotated returns parts with the partitions that just returned records
// moved to the back, keeping the relative order of both groups.
func rotated(parts, moved []*sessionPart) []*sessionPart {
	isMoved := make(map[*sessionPart]bool, len(moved))
	for _, sp := range moved {
		isMoved[sp] = true
	}
	order := make([]*sessionPart, 0, len(parts))
	for _, sp := range parts {
		if !isMoved[sp] {
			order = append(order, sp)
		}
	}
	for _, sp := range parts {
		if isMoved[sp] {
			order = append(order, sp)
		}
	}
	return order
}
