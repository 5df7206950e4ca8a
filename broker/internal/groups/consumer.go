package groups

// KIP-848 consumer groups: the broker assigns. Members heartbeat with
// ConsumerGroupHeartbeat carrying their subscription and the partitions
// they own; the coordinator keeps a target assignment per member (computed
// by a server-side assignor whenever the group epoch moves) and reconciles
// each member towards it:
//
//   - A member first gives up partitions it owns that are not in its
//     target (the response shrinks its assignment; its epoch stays).
//   - Once it owns nothing outside its target, its epoch moves to the
//     assignment epoch and it is given its target minus partitions another
//     member still owns (those follow in a later heartbeat, once released).
//
// The group epoch moves when a member joins, leaves or expires, changes
// its subscription, or a subscribed topic's partition count changes.
// Members expire after the session timeout (the group's
// consumer.session.timeout.ms, else the broker's) without a heartbeat; a
// member that does not give up revoked partitions within its rebalance
// timeout is removed too.
//
// State lives in the *group (under group.mu) as g.cg; a group is either
// classic (g.members) or consumer (g.cg with members), never both.

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type assignment map[string][]int32 // topic name → sorted partitions

type consumerMember struct {
	id, instanceID, rackID string
	clientID, host         string
	epoch, prevEpoch       int32
	subscribed             []string       // sorted topic names
	regex                  *regexp.Regexp // nil when regexSrc is ""
	regexSrc               string         // "" is no regex, as Kafka
	// topicVisible filters what the regex matches to the topics the
	// member's principal may describe (KIP-848 with an authorizer); nil
	// shows every topic. It is the latest heartbeat's.
	topicVisible     func(topic string) bool
	assignor         string
	rebalanceTimeout int32

	assigned   assignment // what the member was last told it owns
	owned      assignment // what the member last reported owning
	sentOnce   bool
	lastSent   assignment
	expiry     *time.Timer
	revokeBy   *time.Timer // fences the member if it does not revoke in time
	leftStatic bool        // left with epoch -2: keeps its place for the session
}

type consumerGroup struct {
	epoch, assignmentEpoch int32
	assignor               string
	members                map[string]*consumerMember
	target                 map[string]assignment // member id → target
	topicsHash             string                // subscribed topics and partition counts at the last target
	bumped                 time.Time             // when epoch last moved (heartbeatInterval)
}

func (g *group) isConsumer() bool { return g.cg != nil && len(g.cg.members) > 0 }

// cgState is the KIP-848 group state name.
func (g *group) cgState() string {
	cg := g.cg
	if cg == nil || len(cg.members) == 0 {
		return "Empty"
	}
	if cg.assignmentEpoch < cg.epoch {
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || !sameAssignment(m.assigned, cg.target[m.id]) {
			return "Reconciling"
		}
	}
	return "Stable"
}

// subscribedTo returns the topics m subscribes to that exist: its topic
// names and, as Kafka, everything its regex matches besides (a member may
// send both; librdkafka sends its names with an empty regex).
func (c *Coordinator) subscribedTo(m *consumerMember) []string {
	var out []string
	for _, t := range m.subscribed {
		if c.topicExists(t) {
			out = append(out, t)
		}
	}
	if m.regex != nil {
		for _, name := range c.b.TopicNames() {
			if m.regex.MatchString(name) && (m.topicVisible == nil || m.topicVisible(name)) {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// topicsHash describes every subscribed topic with its partition count, so
// a change (topic created or deleted, partitions added) moves the epoch.
func (c *Coordinator) topicsHash(cg *consumerGroup) string {
	set := map[string]bool{}
	for _, m := range cg.members {
		for _, t := range c.subscribedTo(m) {
			set[t] = true
		}
	}
	names := make([]string, 0, len(set))
	for t := range set {
		names = append(names, t)
	}
	sort.Strings(names)
	h := ""
	for _, t := range names {
		n, _ := c.b.PartitionCount(t)
		h += t + "\x00" + strconv.Itoa(int(n)) + "\x00"
	}
	return h
}

// bumpLocked moves the group epoch and recomputes the target assignment.
// REQUIRES g.mu.
func (g *group) bumpLocked() {
	cg := g.cg
	cg.epoch++
	cg.bumped = g.c.now()
	cg.topicsHash = g.c.topicsHash(cg)
	// The assignor most members prefer; uniform by default, as Kafka.
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	cg.assignor = "uniform"
	best := 0
	for _, name := range []string{"uniform", "range"} {
		if votes[name] > best {
			cg.assignor, best = name, votes[name]
		}
	}
	subs := map[string][]string{}
	for id, m := range cg.members {
		subs[id] = g.c.subscribedTo(m)
	}
	parts := map[string]int32{}
	for _, ts := range subs {
		for _, t := range ts {
			parts[t], _ = g.c.b.PartitionCount(t)
		}
	}
	if cg.assignor == "range" {
		cg.target = assignRange(subs, parts)
	} else {
		cg.target = assignUniform(subs, parts, cg.target)
	}
	cg.assignmentEpoch = cg.epoch
}

// assignRange gives each member, per topic, a contiguous range of
// partitions among the members subscribed to that topic (sorted by id).
func assignRange(subs map[string][]string, parts map[string]int32) map[string]assignment {
	out := map[string]assignment{}
	byTopic := map[string][]string{}
	for id, ts := range subs {
		out[id] = assignment{}
		for _, t := range ts {
			byTopic[t] = append(byTopic[t], id)
		}
	}
	for t, ids := range byTopic {
		sort.Strings(ids)
		n := parts[t]
		per, extra := n/int32(len(ids)), n%int32(len(ids))
		start := int32(0)
		for i, id := range ids {
			cnt := per
			if int32(i) < extra {
				cnt++
			}
			for p := start; p < start+cnt; p++ {
				out[id][t] = append(out[id][t], p)
			}
			start += cnt
		}
	}
	return out
}

// assignUniform balances partitions across members (each partition to a
// subscribed member), keeping previous owners where that stays within
// ceil(total/members), so a rebalance moves as little as it can.
func assignUniform(subs map[string][]string, parts map[string]int32, prev map[string]assignment) map[string]assignment {
	type tp struct {
		t string
		p int32
	}
	subscribed := map[string]map[string]bool{}
	var ids []string
	for id, ts := range subs {
		ids = append(ids, id)
		subscribed[id] = map[string]bool{}
		for _, t := range ts {
			subscribed[id][t] = true
		}
	}
	sort.Strings(ids)
	var all []tp
	topics := make([]string, 0, len(parts))
	for t := range parts {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		for p := range parts[t] {
			all = append(all, tp{t, p})
		}
	}
	out := map[string]assignment{}
	load := map[string]int{}
	for _, id := range ids {
		out[id] = assignment{}
	}
	if len(ids) == 0 {
		return out
	}
	quota := (len(all) + len(ids) - 1) / len(ids)
	owner := map[tp]string{}
	for _, id := range ids {
		for t, ps := range prev[id] {
			for _, p := range ps {
				owner[tp{t, p}] = id
			}
		}
	}
	var rest []tp
	for _, x := range all {
		if id, ok := owner[x]; ok && subscribed[id] != nil && subscribed[id][x.t] && load[id] < quota {
			out[id][x.t] = append(out[id][x.t], x.p)
			load[id]++
			continue
		}
		rest = append(rest, x)
	}
	// Most constrained partitions first (fewest subscribed members), so
	// members with narrow subscriptions are filled before the others.
	candidates := map[string]int{}
	for _, id := range ids {
		for t := range subscribed[id] {
			candidates[t]++
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return candidates[rest[i].t] < candidates[rest[j].t] })
	for _, x := range rest {
		best := ""
		for _, id := range ids {
			if subscribed[id][x.t] && (best == "" || load[id] < load[best]) {
				best = id
			}
		}
		if best != "" {
			out[best][x.t] = append(out[best][x.t], x.p)
			load[best]++
		}
	}
	for _, a := range out {
		for t := range a {
			slices.Sort(a[t])
		}
	}
	return out
}

func sameAssignment(a, b assignment) bool {
	na, nb := 0, 0
	for t, ps := range a {
		if len(ps) > 0 {
			na++
			if !slices.Equal(ps, b[t]) {
				return false
			}
		}
	}
	for _, ps := range b {
		if len(ps) > 0 {
			nb++
		}
	}
	return na == nb
}

func contains(a assignment, t string, p int32) bool { return slices.Contains(a[t], p) }

// reconcile moves m towards its target; REQUIRES g.mu.
func (g *group) reconcile(m *consumerMember) {
	cg := g.cg
	target := cg.target[m.id]
	// 1. Revoke what is no longer ours.
	keep := assignment{}
	revoking := false
	for t, ps := range m.assigned {
		for _, p := range ps {
			if contains(target, t, p) {
				keep[t] = append(keep[t], p)
			} else {
				revoking = true
			}
		}
	}
	for t, ps := range m.owned {
		for _, p := range ps {
			if !contains(target, t, p) {
				revoking = true // still owned, though already taken away
			}
		}
	}
	if revoking {
		m.assigned = keep
		if m.revokeBy == nil {
			g.armRevokeDeadline(m)
		}
		return
	}
	if m.revokeBy != nil {
		m.revokeBy.Stop()
		m.revokeBy = nil
	}
	// 2. Nothing left to give up: move to the assignment epoch and take
	// every target partition that nobody else still holds.
	if m.epoch != cg.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, cg.assignmentEpoch
	}
	next := assignment{}
	for t, ps := range target {
		for _, p := range ps {
			free := true
			for id, o := range cg.members {
				if id != m.id && (contains(o.assigned, t, p) || contains(o.owned, t, p)) {
					free = false
					break
				}
			}
			if free {
				next[t] = append(next[t], p)
			}
		}
	}
	m.assigned = next
}

// armRevokeDeadline fences m if it still holds partitions it was asked to
// give up after its rebalance timeout, so that they can move (Kafka's
// consumer rebalance timeout). REQUIRES g.mu.
func (g *group) armRevokeDeadline(m *consumerMember) {
	d := time.Duration(m.rebalanceTimeout) * time.Millisecond
	if d <= 0 {
		d = g.consumerSessionTimeout()
	}
	m.revokeBy = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.cg == nil || g.cg.members[m.id] != m || m.revokeBy == nil {
			return
		}
		target := g.cg.target[m.id]
		for t, ps := range m.owned {
			for _, p := range ps {
				if !contains(target, t, p) {
					g.c.log.Info("consumer group member did not revoke within its rebalance timeout", "group", g.name, "member", m.id)
					g.removeConsumerMember(m)
					return
				}
			}
		}
		m.revokeBy = nil
	})
}

func (g *group) armConsumerSession(m *consumerMember) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	m.expiry = time.AfterFunc(g.consumerSessionTimeout(), func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.cg != nil && g.cg.members[m.id] == m {
			g.c.log.Info("consumer group member session expired", "group", g.name, "member", m.id)
			g.removeConsumerMember(m)
		}
	})
}

// removeConsumerMember drops m and rebalances the rest. REQUIRES g.mu.
func (g *group) removeConsumerMember(m *consumerMember) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	if m.revokeBy != nil {
		m.revokeBy.Stop()
		m.revokeBy = nil
	}
	delete(g.cg.members, m.id)
	delete(g.cg.target, m.id)
	if len(g.cg.members) == 0 {
		g.cg.epoch++
		g.cg.assignmentEpoch = g.cg.epoch
		g.setState(stateEmpty)
		return
	}
	g.bumpLocked()
}

func (g *group) toWire(a assignment) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	out := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
	out.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	names := make([]string, 0, len(a))
	for t := range a {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		id, ok := g.c.b.TopicID(t)
		if !ok || len(a[t]) == 0 {
			continue
		}
		at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
		at.TopicID, at.Partitions = id, slices.Clone(a[t])
		out.Topics = append(out.Topics, at)
	}
	return &out
}

// staticMember is the member holding instanceID, or nil.
func (cg *consumerGroup) staticMember(instanceID string) *consumerMember {
	for _, o := range cg.members {
		if o.instanceID == instanceID {
			return o
		}
	}
	return nil
}

// consumerHeartbeat handles one ConsumerGroupHeartbeat. REQUIRES g.mu.
func (g *group) consumerHeartbeat(r *kmsg.ConsumerGroupHeartbeatRequest, cl Client) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	fail := func(code int16, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp
	}
	if len(g.members) > 0 || g.state == stateDead {
		return fail(kerr.GroupIDNotFound.Code, "group "+g.name+" is not a consumer group")
	}
	if g.cg == nil {
		g.cg = &consumerGroup{members: map[string]*consumerMember{}, target: map[string]assignment{}}
	}
	cg := g.cg
	instanceID := ""
	if r.InstanceID != nil {
		instanceID = *r.InstanceID
	}
	m := cg.members[r.MemberID]
	// Kafka's group.consumer.max.size: a full group refuses anyone but a
	// member it has or a static member's new incarnation.
	if max := g.c.consumerMaxSize; max > 0 && r.MemberEpoch != -1 && r.MemberEpoch != -2 &&
		len(cg.members) >= max && m == nil && (instanceID == "" || cg.staticMember(instanceID) == nil) {
		return fail(kerr.GroupMaxSizeReached.Code, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", max))
	}
	// A static member is found by its instance ID, as Kafka does: one
	// unknown is UNKNOWN_MEMBER_ID, one held by another member ID (a
	// newer incarnation took over) FENCED_INSTANCE_ID.
	if instanceID != "" && r.MemberEpoch != 0 {
		o := cg.staticMember(instanceID)
		if o == nil {
			return fail(kerr.UnknownMemberID.Code, fmt.Sprintf("Instance id %s is unknown.", instanceID))
		}
		if o.id != r.MemberID {
			return fail(kerr.FencedInstanceID.Code, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", r.MemberID, instanceID, o.id))
		}
		m = o
	}
	switch {
	case r.MemberEpoch == -1 || r.MemberEpoch == -2:
		// Leaving; -2 is a static member leaving for a restart, which
		// keeps its partitions until its session expires.
		if m == nil {
			return fail(kerr.UnknownMemberID.Code, "")
		}
		// Kafka refuses a static leave (-2) without an instance ID
		// before it looks at the member. kgo (v1.22) leaves that way, so
		// a -2 from a member that joined with an instance ID is taken as
		// its static leave; from any other member it is refused as in
		// Kafka.
		if r.MemberEpoch == -2 && r.InstanceID == nil && m.instanceID == "" {
			return fail(kerr.InvalidRequest.Code, "InstanceId can't be null.")
		}
		resp.MemberID, resp.MemberEpoch = &m.id, r.MemberEpoch
		if r.MemberEpoch == -2 && m.instanceID != "" {
			m.leftStatic = true
			g.armConsumerSession(m)
			return resp
		}
		g.removeConsumerMember(m)
		return resp
	case r.MemberEpoch == 0:
		if r.MemberID == "" {
			r.MemberID = newMemberID("")[1:]
		}
		if instanceID != "" {
			for _, o := range cg.members {
				if o.instanceID == instanceID && o.id != r.MemberID {
					if !o.leftStatic {
						return fail(kerr.UnreleasedInstanceID.Code, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", r.MemberID, instanceID, o.id))
					}
					// A restarted static member takes over the old
					// member's place and assignment.
					if o.expiry != nil {
						o.expiry.Stop()
					}
					delete(cg.members, o.id)
					if t, ok := cg.target[o.id]; ok {
						cg.target[r.MemberID] = t
						delete(cg.target, o.id)
					}
					o.id, o.leftStatic = r.MemberID, false
					o.owned = assignment{}
					cg.members[o.id] = o
					m = o
				}
			}
		}
		if m == nil {
			re, err := compileSubscription(r.SubscribedTopicRegex, "")
			if err != nil {
				return fail(kerr.InvalidRegularExpression.Code, err.Error())
			}
			m = &consumerMember{id: r.MemberID, instanceID: instanceID, assigned: assignment{}, owned: assignment{}}
			cg.members[m.id] = m
			m.topicVisible = cl.TopicVisible
			g.cgUpdate(m, r, re)
			g.bumpLocked()
			g.setState(stateStable)
		} else {
			re, err := compileSubscription(r.SubscribedTopicRegex, m.regexSrc)
			if err != nil {
				return fail(kerr.InvalidRegularExpression.Code, err.Error())
			}
			// Rejoining with a known id: it owns nothing now.
			m.owned, m.sentOnce = assignment{}, false
			m.assigned = assignment{}
			m.topicVisible = cl.TopicVisible
			if g.cgUpdate(m, r, re) {
				g.bumpLocked()
			}
		}
	default:
		if m == nil {
			return fail(kerr.UnknownMemberID.Code, "")
		}
		// Kafka's rule: a greater epoch is fenced; a smaller one only
		// passes as the previous epoch with owned partitions inside the
		// current assignment (the member missed the response that moved
		// its epoch).
		if r.MemberEpoch > m.epoch || r.MemberEpoch < m.epoch && (r.MemberEpoch != m.prevEpoch || !g.ownsSubset(r, m)) {
			return fail(kerr.FencedMemberEpoch.Code, fmt.Sprintf("member epoch %d is not the coordinator's %d", r.MemberEpoch, m.epoch))
		}
		re, err := compileSubscription(r.SubscribedTopicRegex, m.regexSrc)
		if err != nil {
			return fail(kerr.InvalidRegularExpression.Code, err.Error())
		}
		m.topicVisible = cl.TopicVisible
		if g.cgUpdate(m, r, re) {
			g.bumpLocked()
		}
	}
	m.clientID, m.host = cl.ID, cl.Host
	if r.Topics != nil {
		m.owned = assignment{}
		for _, t := range r.Topics {
			if name, ok := g.c.b.TopicName(t.TopicID); ok {
				m.owned[name] = slices.Sorted(slices.Values(t.Partitions))
			}
		}
	}
	if h := g.c.topicsHash(cg); h != cg.topicsHash {
		g.bumpLocked()
	}
	g.reconcile(m)
	g.armConsumerSession(m)
	resp.MemberID = &m.id
	resp.MemberEpoch = m.epoch
	resp.HeartbeatIntervalMillis = int32(g.heartbeatInterval().Milliseconds())
	// Kafka sends the assignment on a join, on a full request (what a
	// client sends after a reconnect or an error: rebalance timeout,
	// subscription and owned partitions all set) and when it changed.
	full := r.RebalanceTimeoutMillis != -1 && (r.SubscribedTopicNames != nil || r.SubscribedTopicRegex != nil) && r.Topics != nil
	if r.MemberEpoch == 0 || !m.sentOnce || full || !sameAssignment(m.assigned, m.lastSent) {
		resp.Assignment = g.toWire(m.assigned)
		m.lastSent = clone(m.assigned)
		m.sentOnce = true
	}
	return resp
}

// heartbeatInterval is the interval m is told to heartbeat at:
// group.consumer.heartbeat.interval.ms once the group has been Stable (every
// member at the assignment epoch with its target) for a whole interval, a
// tenth of it (at least 10 ms) while it reconciles and for one interval
// after the group epoch last moved. A reconciliation moves only with
// heartbeats: a member learns what to give up from one, and the new owner
// gets the partitions with its next one after that, so at the full
// interval every step of a chain of moves (members joining one after
// another) costs up to an interval. The grace interval after an epoch move
// covers the usual start of a group, members arriving a few milliseconds
// apart: a member that has just joined hears of the next one soon. Kafka
// always answers the configured interval; clients honour whatever the
// response says (kgo and the Java consumer do). REQUIRES g.mu.
func (g *group) heartbeatInterval() time.Duration {
	d := g.groupMillis("consumer.heartbeat.interval.ms", g.c.consumerHeartbeat)
	if g.cgState() != "Stable" || g.c.now().Sub(g.cg.bumped) < d {
		return min(d, max(d/10, 10*time.Millisecond))
	}
	return d
}

// consumerSessionTimeout is the group's consumer.session.timeout.ms, else
// the broker's group.consumer.session.timeout.ms. Read at each heartbeat,
// so a change applies from a member's next heartbeat, as in Kafka.
func (g *group) consumerSessionTimeout() time.Duration {
	return g.groupMillis("consumer.session.timeout.ms", g.c.consumerSession)
}

// groupMillis is the group's own config name in milliseconds, or def when
// the group has none (the broker validated it when it was set).
func (g *group) groupMillis(name string, def time.Duration) time.Duration {
	if g.c.groupConfig == nil {
		return def
	}
	v, ok := g.c.groupConfig(g.name, name)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n <= 0 {
		return def
	}
	return time.Duration(n) * time.Millisecond
}

func clone(a assignment) assignment {
	out := assignment{}
	for t, ps := range a {
		out[t] = slices.Clone(ps)
	}
	return out
}

// ownsSubset reports whether the partitions a request says the member owns
// are all in its current assignment (Kafka accepts the previous epoch
// then: the member missed a response). A request that does not say what it
// owns (null) is no subset, as in Kafka.
func (g *group) ownsSubset(r *kmsg.ConsumerGroupHeartbeatRequest, m *consumerMember) bool {
	if r.Topics == nil {
		return false
	}
	for _, t := range r.Topics {
		name, ok := g.c.b.TopicName(t.TopicID)
		if !ok {
			return false
		}
		for _, p := range t.Partitions {
			if !contains(m.assigned, name, p) {
				return false
			}
		}
	}
	return true
}

// consumerAssignors are the server-side assignors a member may name.
var consumerAssignors = []string{"uniform", "range"}

// validateConsumerHeartbeat makes the checks Kafka's coordinator makes
// before it looks at the group: INVALID_REQUEST for a malformed request,
// UNSUPPORTED_ASSIGNOR for an assignor it does not offer. The regex is
// checked where it changes (compileSubscription), as Kafka compiles a
// regex only when a member brings a new one.
func validateConsumerHeartbeat(r *kmsg.ConsumerGroupHeartbeatRequest) (int16, string) {
	invalid := func(msg string) (int16, string) { return kerr.InvalidRequest.Code, msg }
	// v1 (KIP-1082) has the client choose its member id, so it is
	// required from the first heartbeat; before that only once assigned.
	if (r.Version >= 1 || r.MemberEpoch > 0 || r.MemberEpoch == -1) && r.MemberID == "" {
		return invalid("MemberId can't be empty.")
	}
	if r.Group == "" {
		return invalid("GroupId can't be empty.")
	}
	if r.InstanceID != nil && *r.InstanceID == "" {
		return invalid("InstanceId can't be empty.")
	}
	if r.RackID != nil && *r.RackID == "" {
		return invalid("RackId can't be empty.")
	}
	switch {
	case r.MemberEpoch == 0:
		if r.RebalanceTimeoutMillis == -1 {
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if r.Topics == nil || len(r.Topics) > 0 {
			return invalid("TopicPartitions must be empty when (re-)joining.")
		}
		// Empty names or an empty regex are a valid join: a member of
		// the group subscribed to nothing.
		if r.SubscribedTopicNames == nil && r.SubscribedTopicRegex == nil {
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case r.MemberEpoch < -2:
		return invalid("MemberEpoch is invalid.")
	}
	if r.ServerAssignor != nil && !slices.Contains(consumerAssignors, *r.ServerAssignor) {
		return kerr.UnsupportedAssignor.Code, "ServerAssignor " + *r.ServerAssignor + " is not supported. Supported assignors: uniform, range."
	}
	return 0, ""
}

// compileSubscription compiles the regex a heartbeat brings when it differs
// from the member's current one (cur); nil when there is nothing new to
// compile (null: unchanged; empty: no regex). Kafka matches with RE2J
// against the whole topic name; RE2J implements RE2's syntax, as Go's regexp
// does, so both refuse backreferences and lookaround and accept the same
// patterns but for the Unicode class names each knows.
func compileSubscription(regex *string, cur string) (*regexp.Regexp, error) {
	if regex == nil || *regex == cur || *regex == "" {
		return nil, nil
	}
	src := *regex
	re, err := regexp.Compile("^(?:" + src + ")$")
	if err != nil {
		return nil, fmt.Errorf("SubscribedTopicRegex %q is not a valid regular expression: %v", src, err)
	}
	return re, nil
}

// cgUpdate applies the non-null fields of a heartbeat (null means
// unchanged, as Kafka) and reports whether the subscription changed: its
// topic names or its regex, each on its own. re is the compiled regex from
// compileSubscription. The server assignor a member names is kept and
// counts at the next rebalance; naming another one does not start one, as
// in Kafka. REQUIRES g.mu.
func (g *group) cgUpdate(m *consumerMember, r *kmsg.ConsumerGroupHeartbeatRequest, re *regexp.Regexp) bool {
	changed := false
	if r.RackID != nil {
		m.rackID = *r.RackID
	}
	if r.RebalanceTimeoutMillis != -1 {
		m.rebalanceTimeout = r.RebalanceTimeoutMillis
	}
	if r.ServerAssignor != nil {
		m.assignor = *r.ServerAssignor
	}
	if r.SubscribedTopicNames != nil {
		s := slices.Compact(slices.Sorted(slices.Values(r.SubscribedTopicNames)))
		if !slices.Equal(s, m.subscribed) {
			m.subscribed = s
			changed = true
		}
	}
	if r.SubscribedTopicRegex != nil && *r.SubscribedTopicRegex != m.regexSrc {
		m.regex, m.regexSrc = re, *r.SubscribedTopicRegex
		changed = true
	}
	return changed
}

// validateConsumerCommit checks an OffsetCommit against a consumer group:
// the member must exist and commit with its current (or just previous)
// epoch. REQUIRES g.mu.
func (g *group) validateConsumerCommit(memberID string, epoch int32, version int16) int16 {
	m := g.cg.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if epoch != m.epoch && epoch != m.prevEpoch {
		if version >= 9 {
			return kerr.StaleMemberEpoch.Code
		}
		return kerr.IllegalGeneration.Code
	}
	return 0
}

// RefuseConsumerHeartbeat answers a ConsumerGroupHeartbeat naming a group
// ID the share coordinator holds: GROUP_ID_NOT_FOUND with Kafka's message.
func RefuseConsumerHeartbeat(r *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.ErrorCode, resp.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+r.Group+" is not a consumer group.")
	return resp
}

// ConsumerGroupHeartbeat (v0–v1, KIP-848) joins (epoch 0), heartbeats,
// and leaves (epoch -1; -2 for a static member that will be back) a
// consumer group whose assignment the coordinator computes with the
// uniform (sticky, balanced) or range assignor (reconcile). Errors as
// Kafka: UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID,
// GROUP_ID_NOT_FOUND when the group is a classic group with members,
// INVALID_REQUEST for a malformed request (validateConsumerHeartbeat),
// UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION. A member's topic names
// and regex are two subscriptions, as in Kafka: it gets the union, and an
// empty regex (librdkafka sends one beside its names) is no regex; the
// regex matches only the topics cl.TopicVisible allows. The answer's
// heartbeat interval is group.consumer.heartbeat.interval.ms (Settings), a
// tenth of it while the group reconciles (a departure from Kafka, which
// always sends the configured value; see heartbeatInterval).
//
// Version notes: v1 has the client choose the member id (required on
// join) and adds regex subscriptions.
func (c *Coordinator) ConsumerGroupHeartbeat(cl Client, r *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	if code, msg := validateConsumerHeartbeat(r); code != 0 {
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		c.clientLog.Info("invalid ConsumerGroupHeartbeat", "group", r.Group, "member", r.MemberID, "error", msg)
		return resp
	}
	var g *group
	if r.MemberEpoch == 0 {
		g = c.getOrCreate(r.Group)
	} else if g = c.get(r.Group); g == nil {
		// Only epoch 0 creates a group; Kafka names the missing group
		// (kgo rejoins on it as on an unknown member).
		resp := r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		msg := fmt.Sprintf("Consumer group %s not found.", r.Group)
		resp.ErrorCode, resp.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
		return resp
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.consumerHeartbeat(r, cl)
}

// ConsumerGroupDescribe (v0–v1, KIP-848) describes consumer groups:
// epochs, assignor, state (Empty, Assigning, Reconciling, Stable) and
// members with their current and target assignments. GROUP_ID_NOT_FOUND
// for unknown groups and classic groups with members. Under acc a group
// needs DESCRIBE (GROUP_AUTHORIZATION_FAILED), and its authorized
// operations are the principal's.
func (c *Coordinator) ConsumerGroupDescribe(r *kmsg.ConsumerGroupDescribeRequest, acc Access) *kmsg.ConsumerGroupDescribeResponse {
	resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, name := range r.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = name
		rg.AuthorizedOperations = authorizedOps(r.IncludeAuthorizedOperations)
		g := c.get(name)
		if g == nil {
			// Kafka's text: the Java admin client shows it.
			rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+name+" not found.")
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g.mu.Lock()
		if len(g.members) > 0 || g.cg == nil {
			msg := "group " + name + " is not a consumer group"
			rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
			g.mu.Unlock()
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		cg := g.cg
		rg.State, rg.Epoch, rg.AssignmentEpoch, rg.AssignorName = g.cgState(), cg.epoch, cg.assignmentEpoch, cg.assignor
		ids := make([]string, 0, len(cg.members))
		for id := range cg.members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			m := cg.members[id]
			dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			dm.MemberID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = id, m.epoch, m.clientID, m.host
			if m.instanceID != "" {
				iid := m.instanceID
				dm.InstanceID = &iid
			}
			if m.rackID != "" {
				rack := m.rackID
				dm.RackID = &rack
			}
			dm.SubscribedTopics = append([]string{}, m.subscribed...)
			if m.regexSrc != "" {
				re := m.regexSrc
				dm.SubscribedTopicRegex = &re
			}
			dm.Assignment = g.describeAssignment(m.assigned)
			dm.TargetAssignment = g.describeAssignment(cg.target[id])
			dm.MemberType = 1 // -1 unknown, 0 classic, 1 consumer
			rg.Members = append(rg.Members, dm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, rg)
	}
	if acc != nil {
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if !acc.Group(kmsg.ACLOperationDescribe, g.Group) {
				d := kmsg.NewConsumerGroupDescribeResponseGroup()
				d.Group, d.ErrorCode = g.Group, errGroupAuth
				*g = d
				continue
			}
			g.AuthorizedOperations = acc.GroupOps(r.IncludeAuthorizedOperations, g.Group)
		}
	}
	return resp
}

func (g *group) describeAssignment(a assignment) kmsg.Assignment {
	out := kmsg.NewAssignment()
	for _, t := range g.toWire(a).Topics {
		at := kmsg.NewAssignmentTopicPartition()
		at.TopicID, at.Partitions = t.TopicID, t.Partitions
		at.Topic, _ = g.c.b.TopicName(t.TopicID)
		out.TopicPartitions = append(out.TopicPartitions, at)
	}
	return out
}
