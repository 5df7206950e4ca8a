// Package fetchsession keeps the broker's fetch sessions (KIP-227).
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
// The cache holds at most MaxSessions sessions. To admit a new one
// when full it evicts the least recently used session idle for longer than
// EvictAfter, else the least recently used session with fewer
// partitions than the newcomer (Kafka favours large sessions the same way,
// since they save the most), else declines.
//
// Within a session, partitions that returned records move to the back of
// the session's order, so a response byte limit reached early does not
// starve the same partitions every time.
//
// The broker's Fetch handler calls Cache.Begin with the decoded request
// and Cache.Finish with what it is about to answer (Sent, one per
// partition); the package imports neither broker nor protocol
// (internal/lint checks that). Locks: Cache.mu, then a Session's mu (the
// eviction scan); a request holds only its session's mu otherwise.
package fetchsession

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// MaxSessions is Kafka's max.incremental.fetch.session.cache.slots.
	MaxSessions = 1000
	// EvictAfter is Kafka's min.incremental.fetch.session.eviction.ms.
	EvictAfter = 120 * time.Second
)

// Key is a partition of a session: by topic name before Fetch v13, by
// topic ID from v13.
type Key struct {
	Topic     string   // before v13
	TopicID   [16]byte // v13+
	Partition int32
}

// Part is one partition of a session: the client's fetch position and
// what the broker last sent about the partition.
type Part struct {
	Key         Key
	Offset      int64
	MaxBytes    int32
	LeaderEpoch int32
	// Last values sent; -1 before the first response, so a newly added
	// partition is always in the next response.
	hw, lso, logStart int64
}

// Session is one fetch session.
type Session struct {
	id      int32
	usesIDs bool

	mu       sync.Mutex
	epoch    int32 // the epoch the next incremental request must carry
	parts    []*Part
	index    map[Key]*Part
	lastUsed time.Time
}

// Cache is a broker's fetch sessions.
type Cache struct {
	mu       sync.Mutex
	max      int
	sessions map[int32]*Session
}

// New is a cache of at most max sessions (0: sessions are declined).
func New(max int) *Cache {
	return &Cache{max: max, sessions: make(map[int32]*Session)}
}

// SetMax changes the cache's bound (tests).
func (c *Cache) SetMax(max int) {
	c.mu.Lock()
	c.max = max
	c.mu.Unlock()
}

// Get is the session id, nil when there is none.
func (c *Cache) Get(id int32) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

func (c *Cache) remove(id int32) {
	c.mu.Lock()
	delete(c.sessions, id)
	c.mu.Unlock()
}

// Len is how many sessions the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// create admits a session holding parts, evicting one if the cache is
// full; it returns nil when the session is declined.
func (c *Cache) create(usesIDs bool, parts []*Part, now time.Time) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		return nil
	}
	if len(c.sessions) >= c.max && !c.evictLocked(len(parts), now) {
		return nil
	}
	s := &Session{usesIDs: usesIDs, epoch: 1, parts: parts, lastUsed: now,
		index: make(map[Key]*Part, len(parts))}
	for _, p := range parts {
		s.index[p.Key] = p
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

func (c *Cache) evictLocked(newParts int, now time.Time) bool {
	var stale, smaller *Session
	var staleUsed, smallerUsed time.Time
	for _, s := range c.sessions {
		s.mu.Lock()
		used, n := s.lastUsed, len(s.parts)
		s.mu.Unlock()
		if now.Sub(used) > EvictAfter && (stale == nil || used.Before(staleUsed)) {
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

// Ctx is one request's view of its session.
type Ctx struct {
	session     *Session // incremental: the session; nil otherwise
	create      bool     // full fetch asking for a new session
	usesIDs     bool
	incremental bool
}

// Begin interprets the request's session fields. It returns the top-level
// error code for a session error, else the context and, for an
// incremental request, the partitions to read (the whole session, updated
// by the request). now is the broker's clock, read only when needed.
func (c *Cache) Begin(r *kmsg.FetchRequest, version int16, now func() time.Time) (Ctx, []Part, int16) {
	usesIDs := version >= 13
	if version < 7 {
		return Ctx{}, nil, 0
	}
	if r.SessionEpoch == 0 || r.SessionEpoch == -1 {
		if r.SessionID != 0 {
			c.remove(r.SessionID)
		}
		return Ctx{create: r.SessionEpoch == 0, usesIDs: usesIDs}, nil, 0
	}
	s := c.Get(r.SessionID)
	if s == nil || r.SessionEpoch < 0 {
		return Ctx{}, nil, kerr.FetchSessionIDNotFound.Code
	}
	if s.usesIDs != usesIDs {
		return Ctx{}, nil, kerr.FetchSessionTopicIDError.Code
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.SessionEpoch != s.epoch {
		return Ctx{}, nil, kerr.InvalidFetchSessionEpoch.Code
	}
	s.epoch++
	if s.epoch <= 0 {
		s.epoch = 1 // wraps past MaxInt32 to 1, as Kafka's nextEpoch
	}
	s.lastUsed = now()
	for ti := range r.Topics {
		rt := &r.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			k := keyFor(usesIDs, rt.Topic, rt.TopicID, rp.Partition)
			sp := s.index[k]
			if sp == nil {
				sp = &Part{Key: k, hw: -1, lso: -1, logStart: -1}
				s.index[k] = sp
				s.parts = append(s.parts, sp)
			}
			sp.Offset, sp.MaxBytes, sp.LeaderEpoch = rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch
		}
	}
	forgot := false
	for _, ft := range r.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := keyFor(usesIDs, ft.Topic, ft.TopicID, p)
			if _, ok := s.index[k]; ok {
				delete(s.index, k)
				forgot = true
			}
		}
	}
	if forgot {
		kept := s.parts[:0]
		for _, sp := range s.parts {
			if s.index[sp.Key] == sp {
				kept = append(kept, sp)
			}
		}
		clear(s.parts[len(kept):])
		s.parts = kept
	}
	want := make([]Part, len(s.parts))
	for i, sp := range s.parts {
		want[i] = *sp
	}
	return Ctx{session: s, usesIDs: usesIDs, incremental: true}, want, 0
}

func keyFor(usesIDs bool, topic string, id [16]byte, partition int32) Key {
	if usesIDs {
		return Key{TopicID: id, Partition: partition}
	}
	return Key{Topic: topic, Partition: partition}
}

// Sent is what a response says of one partition.
type Sent struct {
	Key                   Key
	Offset                int64 // the fetch position asked for
	MaxBytes, LeaderEpoch int32
	HasRecords            bool
	ErrorCode             int16
	HighWatermark         int64
	LastStable            int64
	LogStart              int64
}

// Finish runs when the response is about to be sent, sent(i) describing
// its n partitions: it picks the partitions an incremental response leaves
// out (omit[i]: no records, no error, no changed offset; nil omits none),
// remembers what was sent, creates a requested session, and returns the
// session ID for the response.
func (c *Cache) Finish(sc Ctx, n int, sent func(i int) Sent, now func() time.Time) (omit []bool, id int32) {
	switch {
	case sc.incremental:
		omit = make([]bool, n)
		s := sc.session
		s.mu.Lock()
		defer s.mu.Unlock()
		var moved []*Part
		for i := range n {
			fp := sent(i)
			sp := s.index[fp.Key]
			if sp == nil {
				// Forgotten by a later request: send it anyway,
				// the client asked for it when it sent this one.
				continue
			}
			omit[i] = !sp.remember(&fp)
			if fp.HasRecords {
				moved = append(moved, sp)
			}
		}
		if len(moved) > 0 && len(moved) < len(s.parts) {
			s.parts = rotated(s.parts, moved)
		}
		return omit, s.id
	case sc.create:
		sps := make([]*Part, 0, n)
		var moved []*Part
		seen := make(map[Key]bool, n)
		for i := range n {
			fp := sent(i)
			if seen[fp.Key] {
				continue
			}
			seen[fp.Key] = true
			sp := &Part{Key: fp.Key, Offset: fp.Offset, MaxBytes: fp.MaxBytes, LeaderEpoch: fp.LeaderEpoch, hw: -1, lso: -1, logStart: -1}
			sp.remember(&fp)
			sps = append(sps, sp)
			if fp.HasRecords {
				moved = append(moved, sp)
			}
		}
		if len(moved) > 0 && len(moved) < len(sps) {
			sps = rotated(sps, moved)
		}
		if s := c.create(sc.usesIDs, sps, now()); s != nil {
			return nil, s.id
		}
	}
	return nil, 0
}

// remember records what the response says about the partition and reports
// whether an incremental response must carry it.
func (sp *Part) remember(fp *Sent) bool {
	must := fp.ErrorCode != 0 || fp.HasRecords
	if sp.hw != fp.HighWatermark {
		sp.hw, must = fp.HighWatermark, true
	}
	if sp.lso != fp.LastStable {
		sp.lso, must = fp.LastStable, true
	}
	if sp.logStart != fp.LogStart {
		sp.logStart, must = fp.LogStart, true
	}
	return must
}

// rotated returns parts with the partitions that just returned records
// moved to the back, keeping the relative order of both groups.
func rotated(parts, moved []*Part) []*Part {
	isMoved := make(map[*Part]bool, len(moved))
	for _, sp := range moved {
		isMoved[sp] = true
	}
	order := make([]*Part, 0, len(parts))
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

// Incremental reports whether the request is an incremental fetch of a
// session, whose partitions Begin returned.
func (sc Ctx) Incremental() bool { return sc.incremental }
