package broker

// The classic group coordinator (JoinGroup/SyncGroup/Heartbeat/LeaveGroup)
// and the glue to groupstore for committed offsets.
//
// Model: one *group per group id, each with its own mutex; membership lives
// in memory only (clients rejoin after a restart), committed offsets live in
// groupstore. Requests that must wait for a rebalance (JoinGroup, SyncGroup)
// register a one-slot channel on their member and return a protocol.Reply
// whose Wait blocks on it, so the connection's reader goroutine never
// blocks. Timers (session expiry, rebalance timeout, initial delay) are
// time.AfterFunc callbacks that take the group's mutex.
//
// Lock order: coordinator.mu → group.mu → groupstore's internal mutex.
// Never take coordinator.mu while holding a group.mu. A group.mu is not held
// across a groupstore write that fsyncs, so that commits of many members
// share one fsync (OffsetCommit validates under the lock, then commits).

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
)

func init() {
	newGroupCoordinator = func(b *Broker) (groupCoordinator, error) { return newCoordinator(b) }
}

// GroupConfig holds the group coordinator's settings, named as Kafka names
// them; a zero field means Kafka's default.
type GroupConfig struct {
	// OffsetsRetention is offsets.retention.minutes: committed offsets of
	// a group without members are dropped this long after it became empty
	// (an explicit v2–v4 commit retention overrides it). Default 7 days.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms,
	// how often expired offsets are looked for. Default 10 minutes.
	OffsetsRetentionCheckInterval time.Duration
	// MinSessionTimeout and MaxSessionTimeout are group.min.session.timeout.ms
	// and group.max.session.timeout.ms: a classic JoinGroup whose session
	// timeout lies outside them is refused with INVALID_SESSION_TIMEOUT.
	// Defaults 6 s and 30 minutes.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms: a KIP-848
	// member that has not heartbeated for that long is removed. Default 45 s.
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms, the
	// interval KIP-848 members are told to heartbeat at. Default 5 s.
	ConsumerHeartbeatInterval time.Duration
}

// DefaultGroupConfig is Kafka's defaults.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
	}
}

// withDefaults fills zero fields with Kafka's defaults.
func (gc GroupConfig) withDefaults() GroupConfig {
	d := DefaultGroupConfig()
	for _, f := range []struct{ v, def *time.Duration }{
		{&gc.OffsetsRetention, &d.OffsetsRetention},
		{&gc.OffsetsRetentionCheckInterval, &d.OffsetsRetentionCheckInterval},
		{&gc.MinSessionTimeout, &d.MinSessionTimeout},
		{&gc.MaxSessionTimeout, &d.MaxSessionTimeout},
		{&gc.ConsumerSessionTimeout, &d.ConsumerSessionTimeout},
		{&gc.ConsumerHeartbeatInterval, &d.ConsumerHeartbeatInterval},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return gc
}

// brokerConfigs reports the settings in effect for DescribeConfigs of the
// broker resource: set ones as static broker config, the rest as defaults.
func (gc GroupConfig) brokerConfigs() []brokerConfig {
	eff := gc.withDefaults()
	ms := func(name string, set, v time.Duration, typ int8) brokerConfig {
		src := srcDefault
		if set > 0 {
			src = srcStaticBroker
		}
		return brokerConfig{name, strconv.FormatInt(v.Milliseconds(), 10), typ, src, ""}
	}
	minutes := ms("offsets.retention.minutes", gc.OffsetsRetention, 0, cfgTypeInt)
	minutes.value = strconv.FormatInt(int64(eff.OffsetsRetention/time.Minute), 10)
	return []brokerConfig{
		ms("group.consumer.heartbeat.interval.ms", gc.ConsumerHeartbeatInterval, eff.ConsumerHeartbeatInterval, cfgTypeInt),
		ms("group.consumer.session.timeout.ms", gc.ConsumerSessionTimeout, eff.ConsumerSessionTimeout, cfgTypeInt),
		ms("group.max.session.timeout.ms", gc.MaxSessionTimeout, eff.MaxSessionTimeout, cfgTypeInt),
		ms("group.min.session.timeout.ms", gc.MinSessionTimeout, eff.MinSessionTimeout, cfgTypeInt),
		ms("offsets.retention.check.interval.ms", gc.OffsetsRetentionCheckInterval, eff.OffsetsRetentionCheckInterval, cfgTypeLong),
		minutes,
	}
}

// offset.metadata.max.bytes, Kafka's default.
const offsetMetadataMaxBytes = 4096

type groupState int8

const (
	stateEmpty groupState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

func (s groupState) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}[s]
}

// coordinator owns every group and the offset store.
type coordinator struct {
	b     *Broker
	store *groupstore.Store

	mu     sync.Mutex
	groups map[string]*group

	retention              time.Duration // offsets.retention.minutes (tests shorten it)
	retentionCheck         time.Duration // offsets.retention.check.interval.ms
	minSession, maxSession time.Duration // group.min/max.session.timeout.ms
	// KIP-848 group.consumer.heartbeat.interval.ms and
	// group.consumer.session.timeout.ms (tests shorten them).
	consumerHeartbeat, consumerSession time.Duration
	closing                            chan struct{}
	wg                                 sync.WaitGroup
}

type member struct {
	id, instanceID     string
	clientID, host     string
	protocolType       string
	protocols          []kmsg.JoinGroupRequestProtocol
	session, rebalance time.Duration
	assignment         []byte

	joinVersion int16
	joinCh      chan *kmsg.JoinGroupResponse // set while a JoinGroup waits
	syncCh      chan *kmsg.SyncGroupResponse // set while a SyncGroup waits
	syncVersion int16
	expiry      *time.Timer // session timeout
}

type group struct {
	c    *coordinator
	name string

	mu           sync.Mutex
	state        groupState
	stateSince   time.Time // when the state last changed (EmptySince for expiry)
	protocolType string
	protocol     string
	generation   int32
	leader       string
	members      map[string]*member
	static       map[string]string      // instance id → member id
	pending      map[string]*time.Timer // ids handed out with MEMBER_ID_REQUIRED
	joinTimer    *time.Timer
	initialDelay bool // the first rebalance from Empty waits GroupInitialRebalanceDelay

	cg *consumerGroup // KIP-848 state; see group_consumer.go
}

func newCoordinator(b *Broker) (*coordinator, error) {
	opts := groupstore.Options{FS: b.fs, Dir: path.Join(b.cfg.DataDir, "group_offsets"), Logger: b.log,
		Sync: b.cfg.Sync.Mode, Interval: b.cfg.Sync.Interval}
	st, rep, err := groupstore.Open(opts)
	if err != nil {
		return nil, err
	}
	if !rep.Clean() {
		b.log.Warn("group offsets recovered with losses", "torn_bytes", rep.TornBytes, "damaged_regions", len(rep.Damaged))
	}
	gc := b.cfg.Groups.withDefaults()
	c := &coordinator{b: b, store: st, groups: map[string]*group{}, closing: make(chan struct{}),
		retention: gc.OffsetsRetention, retentionCheck: gc.OffsetsRetentionCheckInterval,
		minSession: gc.MinSessionTimeout, maxSession: gc.MaxSessionTimeout,
		consumerHeartbeat: gc.ConsumerHeartbeatInterval, consumerSession: gc.ConsumerSessionTimeout}
	b.OnTopicDeleted(func(name string, _ [16]byte) {
		if err := c.store.DeleteTopic(name); err != nil {
			b.log.Error("dropping deleted topic's committed offsets", "topic", name, "err", err)
		}
	})
	c.wg.Add(1)
	go c.expireLoop()
	return c, nil
}

// Close fails every waiting JoinGroup/SyncGroup and closes the store.
func (c *coordinator) Close() error {
	close(c.closing)
	c.wg.Wait()
	c.mu.Lock()
	groups := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		for _, m := range g.members {
			g.answerJoinErr(m, kerr.NotCoordinator.Code)
			g.answerSyncErr(m, kerr.NotCoordinator.Code)
			if m.expiry != nil {
				m.expiry.Stop()
			}
		}
		if g.joinTimer != nil {
			g.joinTimer.Stop()
		}
		for _, t := range g.pending {
			t.Stop()
		}
		if g.cg != nil {
			for _, m := range g.cg.members {
				if m.expiry != nil {
					m.expiry.Stop()
				}
				if m.revokeBy != nil {
					m.revokeBy.Stop()
				}
			}
		}
		g.state = stateDead
		g.mu.Unlock()
	}
	return c.store.Close()
}

func (c *coordinator) expireLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.retentionCheck)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			c.expireOffsets()
		}
	}
}

// expireOffsets drops offsets of groups without members older than the
// retention (Kafka's offsets.retention.minutes, counted from when the group
// became empty), and forgets empty groups that have no offsets left.
func (c *coordinator) expireOffsets() {
	n, err := c.store.Expire(c.b.Now(), c.retention, func(name string) groupstore.GroupStatus {
		g := c.get(name)
		if g == nil {
			return groupstore.GroupStatus{}
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state != stateEmpty && g.state != stateDead {
			return groupstore.GroupStatus{Active: true}
		}
		return groupstore.GroupStatus{EmptySinceMs: g.stateSince.UnixMilli()}
	})
	if err != nil {
		c.b.log.Error("expiring committed offsets", "err", err)
	} else if n > 0 {
		c.b.log.Info("expired committed offsets", "count", n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, g := range c.groups {
		g.mu.Lock()
		if g.state == stateEmpty && len(g.members) == 0 && len(c.store.GroupOffsets(name)) == 0 {
			g.state = stateDead
			delete(c.groups, name)
		}
		g.mu.Unlock()
	}
}

func (c *coordinator) get(name string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[name]
}

// getOrCreate returns the live group, creating an Empty one if needed.
func (c *coordinator) getOrCreate(name string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[name]
	if g == nil {
		g = &group{c: c, name: name, state: stateEmpty, stateSince: c.b.Now(),
			members: map[string]*member{}, static: map[string]string{}, pending: map[string]*time.Timer{}}
		c.groups[name] = g
	}
	return g
}

func newMemberID(clientID string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	return clientID + "-" + hex.EncodeToString(u[:4]) + "-" + hex.EncodeToString(u[4:6]) + "-" + hex.EncodeToString(u[6:8]) + "-" + hex.EncodeToString(u[8:10]) + "-" + hex.EncodeToString(u[10:])
}

func (g *group) setState(s groupState) {
	g.state = s
	g.stateSince = g.c.b.Now()
}

// fenced reports whether memberID lost its static instance id to a newer
// member (FENCED_INSTANCE_ID), REQUIRES g.mu.
func (g *group) fenced(instanceID *string, memberID string) bool {
	if instanceID == nil || *instanceID == "" {
		return false
	}
	cur, ok := g.static[*instanceID]
	return ok && cur != memberID
}

// armSession (re)starts m's session timer. REQUIRES g.mu.
func (g *group) armSession(m *member) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	id := m.id
	m.expiry = time.AfterFunc(m.session, func() { g.sessionExpired(id, m) })
}

func (g *group) sessionExpired(id string, m *member) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.members[id] != m {
		return
	}
	// A member parked in JoinGroup or SyncGroup is alive by definition.
	if m.joinCh != nil || m.syncCh != nil {
		g.armSession(m)
		return
	}
	g.c.b.log.Info("group member session expired", "group", g.name, "member", id)
	g.removeMember(m)
}

// removeMember drops m and moves the state machine on. REQUIRES g.mu.
func (g *group) removeMember(m *member) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	g.answerJoinErr(m, kerr.UnknownMemberID.Code)
	g.answerSyncErr(m, kerr.UnknownMemberID.Code)
	delete(g.members, m.id)
	if m.instanceID != "" && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	switch g.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalance()
	case statePreparingRebalance:
		g.maybeCompleteJoin()
	}
}

func (g *group) answerJoinErr(m *member, code int16) {
	if m.joinCh == nil {
		return
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = m.joinVersion
	resp.ErrorCode = code
	resp.Generation = -1
	resp.MemberID = m.id
	m.joinCh <- resp
	m.joinCh = nil
}

func (g *group) answerSyncErr(m *member, code int16) {
	if m.syncCh == nil {
		return
	}
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.Version = m.syncVersion
	resp.ErrorCode = code
	m.syncCh <- resp
	m.syncCh = nil
}

// rebalanceTimeout is the longest rebalance timeout of any member.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalance)
	}
	return d
}

// prepareRebalance starts a new round: every member must rejoin within the
// rebalance timeout. REQUIRES g.mu.
func (g *group) prepareRebalance() {
	if g.state == stateCompletingRebalance {
		// Assignments of the generation being completed are void.
		for _, m := range g.members {
			m.assignment = nil
			g.answerSyncErr(m, kerr.RebalanceInProgress.Code)
		}
	}
	wasEmpty := g.state == stateEmpty
	g.setState(statePreparingRebalance)
	if g.joinTimer != nil {
		g.joinTimer.Stop()
	}
	delay := g.rebalanceTimeout()
	g.initialDelay = false
	if wasEmpty && g.c.b.cfg.GroupInitialRebalanceDelay > 0 {
		g.initialDelay = true
		delay = min(g.c.b.cfg.GroupInitialRebalanceDelay, delay)
	}
	gen := g.generation
	g.joinTimer = time.AfterFunc(delay, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state == statePreparingRebalance && g.generation == gen {
			g.initialDelay = false
			g.completeJoin()
		}
	})
	g.maybeCompleteJoin()
}

// maybeCompleteJoin completes the join phase early once every known member
// has rejoined and no MEMBER_ID_REQUIRED joiner is outstanding (unless the
// initial delay is still running). REQUIRES g.mu.
func (g *group) maybeCompleteJoin() {
	if g.state != statePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			return
		}
	}
	g.completeJoin()
}

// completeJoin ends the join phase: members that did not rejoin are dropped
// (static members keep their place, as in Kafka), a protocol is chosen and
// every waiting member is answered. REQUIRES g.mu.
func (g *group) completeJoin() {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	for _, m := range g.members {
		if m.joinCh == nil && m.instanceID == "" {
			if m.expiry != nil {
				m.expiry.Stop()
			}
			g.answerSyncErr(m, kerr.UnknownMemberID.Code)
			delete(g.members, m.id)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.setState(stateEmpty)
		return
	}
	g.protocol = g.selectProtocol()
	if _, ok := g.members[g.leader]; !ok {
		g.leader = ""
		for _, id := range g.memberIDs() {
			if g.members[id].joinCh != nil {
				g.leader = id
				break
			}
		}
		if g.leader == "" {
			g.leader = g.memberIDs()[0]
		}
	}
	g.setState(stateCompletingRebalance)
	for _, id := range g.memberIDs() {
		m := g.members[id]
		if m.joinCh == nil {
			continue
		}
		resp := g.joinResponse(m)
		if id == g.leader {
			resp.Members = g.memberList()
		}
		m.joinCh <- resp
		m.joinCh = nil
		g.armSession(m)
	}
}

// memberList is what the leader gets: every member's metadata for the
// chosen protocol. REQUIRES g.mu.
func (g *group) memberList() []kmsg.JoinGroupResponseMember {
	var out []kmsg.JoinGroupResponseMember
	for _, id := range g.memberIDs() {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		if m.instanceID != "" {
			jm.InstanceID = &m.instanceID
		}
		for _, p := range m.protocols {
			if p.Name == g.protocol {
				jm.ProtocolMetadata = p.Metadata
				break
			}
		}
		out = append(out, jm)
	}
	return out
}

func (g *group) joinResponse(m *member) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = m.joinVersion
	resp.Generation = g.generation
	pt, p := g.protocolType, g.protocol
	resp.ProtocolType = &pt
	resp.Protocol = &p
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	return resp
}

func (g *group) memberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// selectProtocol picks the protocol every member supports that most
// members list first among those candidates (Kafka's vote). REQUIRES g.mu.
func (g *group) selectProtocol() string {
	candidates := g.commonProtocols()
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if candidates[p.Name] {
				votes[p.Name]++
				break
			}
		}
	}
	best, bestN := "", -1
	// Iterate in the first member's preference order for a stable tie break.
	for _, id := range g.memberIDs() {
		for _, p := range g.members[id].protocols {
			if n, ok := votes[p.Name]; ok && n > bestN {
				best, bestN = p.Name, n
			}
		}
		break
	}
	return best
}

// commonProtocols is the set of protocol names every member supports.
func (g *group) commonProtocols() map[string]bool {
	var set map[string]bool
	for _, m := range g.members {
		next := map[string]bool{}
		for _, p := range m.protocols {
			if set == nil || set[p.Name] {
				next[p.Name] = true
			}
		}
		set = next
	}
	return set
}

// supports reports whether a member with these protocols can join: same
// protocol type and at least one protocol in common with everybody else.
// REQUIRES g.mu.
func (g *group) supports(protocolType string, protocols []kmsg.JoinGroupRequestProtocol, except string) bool {
	if len(g.members) == 0 || (len(g.members) == 1 && g.members[except] != nil) {
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range protocols {
		ok := true
		for id, m := range g.members {
			if id == except {
				continue
			}
			found := false
			for _, mp := range m.protocols {
				if mp.Name == p.Name {
					found = true
					break
				}
			}
			if !found {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func sameProtocols(a, b []kmsg.JoinGroupRequestProtocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].Metadata) != string(b[i].Metadata) {
			return false
		}
	}
	return true
}

// storeErrCode maps a groupstore error to the code Kafka gives for a failed
// offsets write.
func storeErrCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, groupstore.ErrTooLarge):
		return kerr.InvalidCommitOffsetSize.Code
	case errors.Is(err, groupstore.ErrClosed):
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.UnknownServerError.Code
}
