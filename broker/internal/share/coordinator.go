package share

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/minikafka/minikafka/internal/vfs"
)

var codeInvalidRecordState = kerr.InvalidRecordState.Code

// Broker is what the share coordinator needs of the broker.
type Broker interface {
	TopicID(name string) ([16]byte, bool)
	TopicName(id [16]byte) (string, bool)
	PartitionCount(name string) (int32, bool)
	// Offsets is a partition's log start offset and high watermark.
	Offsets(topic string, partition int32) (logStart, hwm int64, ok bool)
	// LastStable is a partition's last stable offset (no open
	// transaction below it).
	LastStable(topic string, partition int32) int64
	// OtherGroup reports whether name is a classic or consumer group:
	// the group ID namespace is one, as in Kafka.
	OtherGroup(name string) bool
	// Leads reports whether node leads the partition, which a share
	// fetch must be sent to (-1: no node was asked; any will do).
	Leads(node int32, topic string, partition int32) bool
}

// Config is the coordinator's settings; a zero field is Kafka's default.
type Config struct {
	FS         vfs.FS
	Dir        string
	SyncAlways bool          // fsync every state change before answering
	SyncEvery  time.Duration // else, when > 0: fsync unsynced changes this often (durability interval)
	Logger     *slog.Logger
	Now        func() time.Time

	RecordLockDuration time.Duration // group.share.record.lock.duration.ms, 30 s
	// MinRecordLockDuration is group.share.min.record.lock.duration.ms,
	// 15 s: a group's share.record.lock.duration.ms may not be shorter
	// (nor longer than group.share.max.record.lock.duration.ms, 60 s).
	MinRecordLockDuration time.Duration
	DeliveryCountLimit    int16         // group.share.delivery.count.limit, 5
	MaxRecordLocks        int           // group.share.partition.max.record.locks, 2000
	SessionTimeout        time.Duration // group.share.session.timeout.ms, 45 s
	HeartbeatInterval     time.Duration // group.share.heartbeat.interval.ms, 5 s
	MaxGroupSize          int           // group.share.max.size, 200
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.RecordLockDuration <= 0 {
		c.RecordLockDuration = 30 * time.Second
	}
	if c.MinRecordLockDuration <= 0 {
		c.MinRecordLockDuration = 15 * time.Second
	}
	if c.DeliveryCountLimit <= 0 {
		c.DeliveryCountLimit = 5
	}
	if c.MaxRecordLocks <= 0 {
		c.MaxRecordLocks = 2000
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 45 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.MaxGroupSize <= 0 {
		c.MaxGroupSize = 200
	}
}

type tp struct {
	id [16]byte
	p  int32
}

type member struct {
	id, clientID, host string
	rack               *string
	epoch              int32
	subs               []string
	assigned           map[[16]byte][]int32
	lastSeen           time.Time
}

// sessionKey names a share session: each node of a cluster keeps its own
// (Kafka's share session cache is per broker), and a member fetching from
// the leaders of its partitions holds one session on each of them.
type sessionKey struct {
	member string
	node   int32
}

type session struct {
	epoch int32 // the epoch the next request must carry
	parts map[tp]struct{}
	left  bool // its member left the group: only its close is accepted
}

type group struct {
	name        string
	epoch       int32
	assignEpoch int32
	members     map[string]*member
	assignment  map[string]map[[16]byte][]int32 // the target, by member
	parts       map[tp]*partition
	sessions    map[sessionKey]*session
}

// Coordinator holds every share group. One mutex guards it all: share
// requests are short (acquisition and acks touch a few hundred records);
// the log reads of a ShareFetch happen outside it.
type Coordinator struct {
	cfg Config
	b   Broker

	mu      sync.Mutex
	st      *store
	groups  map[string]*group
	configs map[string]map[string]string // group configs, also of groups not (yet) alive
	// cfgMu also guards configs' writes (under mu), so that GroupConfig
	// can read without mu: the group coordinator asks while it holds a
	// group's lock.
	cfgMu   sync.RWMutex
	changed chan struct{} // closed when records become available again

	stop chan struct{}
	done chan struct{}
}

// New opens the state file in cfg.Dir and restores every share-partition
// from it.
func New(cfg Config, b Broker) (*Coordinator, error) {
	cfg.defaults()
	st, frames, dropped, err := openStore(cfg.FS, cfg.Dir, cfg.SyncAlways)
	if err != nil {
		return nil, fmt.Errorf("share state: %w", err)
	}
	if dropped > 0 {
		cfg.Logger.Warn("share state: truncated a torn tail", "bytes", dropped)
	}
	c := &Coordinator{cfg: cfg, b: b, st: st, groups: map[string]*group{}, configs: map[string]map[string]string{},
		changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	for i := range frames {
		c.replay(&frames[i])
	}
	go c.sweep()
	return c, nil
}

func (c *Coordinator) replay(f *frame) {
	switch f.kind {
	case kindPart:
		g := c.getOrCreate(f.group)
		k := tp{f.topicID, f.part}
		sp := g.parts[k]
		if sp == nil {
			sp = &partition{id: f.topicID, p: f.part}
			g.parts[k] = sp
		}
		sp.restore(f.spso, f.runs)
	case kindPartDel:
		if g := c.groups[f.group]; g != nil {
			delete(g.parts, tp{f.topicID, f.part})
		}
	case kindConfig:
		if len(f.configs) == 0 {
			delete(c.configs, f.group)
		} else {
			c.configs[f.group] = f.configs
		}
	case kindGroupDel:
		delete(c.groups, f.group)
	}
}

// Close stops the sweeper and closes the state file.
func (c *Coordinator) Close() error {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.close()
}

// Changed is closed when records become available again (released,
// rejected-and-redeliverable, lock expired); a waiting ShareFetch selects
// on it beside its partitions' logs.
func (c *Coordinator) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Coordinator) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// sweep expires acquisition locks and members that stopped heartbeating.
// A timer rather than per-record timers: locks are many and an expiry a
// fraction of a second late changes nothing a client can observe.
func (c *Coordinator) sweep() {
	defer close(c.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	lastSync := time.Now()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		if c.cfg.SyncEvery > 0 && time.Since(lastSync) >= c.cfg.SyncEvery {
			if err := c.st.flush(); err != nil {
				c.cfg.Logger.Error("share state fsync failed", "err", err)
			}
			lastSync = time.Now()
		}
		now := c.cfg.Now()
		released := false
		for _, g := range c.groups {
			for id, m := range g.members {
				if now.Sub(m.lastSeen) > c.sessionTimeout(g.name) {
					c.cfg.Logger.Info("share group member session expired", "group", g.name, "member", id)
					c.removeMember(g, id)
					released = true
				}
			}
			var dirty []*partition
			for _, sp := range g.parts {
				if sp.expire(now, c.deliveryLimit(g.name)) {
					dirty = append(dirty, sp)
				}
			}
			if len(dirty) > 0 {
				c.persist(g, dirty...)
				released = true
			}
		}
		if released {
			c.signal()
		}
		c.mu.Unlock()
	}
}

func (c *Coordinator) getOrCreate(name string) *group {
	g := c.groups[name]
	if g == nil {
		g = &group{name: name, members: map[string]*member{}, parts: map[tp]*partition{}, sessions: map[sessionKey]*session{},
			assignment: map[string]map[[16]byte][]int32{}}
		c.groups[name] = g
	}
	return g
}

// persist writes the state of sps; under "always" it is durable on return.
// A failed write is logged and leaves the broker serving, but the state
// file refuses further writes (what it holds stays consistent).
func (c *Coordinator) persist(g *group, sps ...*partition) error {
	frames := make([]*frame, 0, len(sps))
	for _, sp := range sps {
		frames = append(frames, &frame{kind: kindPart, group: g.name, topicID: sp.id, part: sp.p, spso: sp.spso, runs: sp.runs()})
	}
	if err := c.st.write(frames...); err != nil {
		if errors.Is(err, errStoreClosed) {
			c.cfg.Logger.Debug("share state change after close not written", "group", g.name)
			return err
		}
		c.cfg.Logger.Error("share state write failed", "group", g.name, "err", err)
		return err
	}
	if c.st.needsCompaction() {
		if err := c.st.compact(c.liveFrames()); err != nil {
			c.cfg.Logger.Error("share state compaction failed", "err", err)
		}
	}
	return nil
}

func (c *Coordinator) liveFrames() []*frame {
	var out []*frame
	for _, name := range slices.Sorted(maps.Keys(c.configs)) {
		out = append(out, &frame{kind: kindConfig, group: name, configs: c.configs[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(c.groups)) {
		g := c.groups[name]
		for _, sp := range g.parts {
			out = append(out, &frame{kind: kindPart, group: name, topicID: sp.id, part: sp.p, spso: sp.spso, runs: sp.runs()})
		}
	}
	return out
}

// Group configs (KIP-848/KIP-932 GROUP resource) that share groups read.
var groupConfigDefaults = map[string]string{
	"share.auto.offset.reset":       "latest",
	"share.record.lock.duration.ms": "30000",
	"share.session.timeout.ms":      "45000",
	"share.heartbeat.interval.ms":   "5000",
	"share.isolation.level":         "read_uncommitted",
	"share.delivery.count.limit":    "5",
}

func (c *Coordinator) groupInt(group, name string, def int64) int64 {
	if v, ok := c.configs[group][name]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

func (c *Coordinator) lockDuration(group string) time.Duration {
	return time.Duration(c.groupInt(group, "share.record.lock.duration.ms", c.cfg.RecordLockDuration.Milliseconds())) * time.Millisecond
}

func (c *Coordinator) sessionTimeout(group string) time.Duration {
	return time.Duration(c.groupInt(group, "share.session.timeout.ms", c.cfg.SessionTimeout.Milliseconds())) * time.Millisecond
}

func (c *Coordinator) heartbeatInterval(group string) time.Duration {
	return time.Duration(c.groupInt(group, "share.heartbeat.interval.ms", c.cfg.HeartbeatInterval.Milliseconds())) * time.Millisecond
}

func (c *Coordinator) readCommitted(group string) bool {
	return c.configs[group]["share.isolation.level"] == "read_committed"
}

func (c *Coordinator) deliveryLimit(group string) int16 {
	return int16(c.groupInt(group, "share.delivery.count.limit", int64(c.cfg.DeliveryCountLimit)))
}

// partitionFor returns (creating and initializing it from
// share.auto.offset.reset) the share-partition, or nil for an unknown
// topic or partition. A log start that passed SPSO moves SPSO with it.
func (c *Coordinator) partitionFor(g *group, id [16]byte, p int32) (*partition, string) {
	topic, ok := c.b.TopicName(id)
	if !ok {
		return nil, ""
	}
	start, hwm, ok := c.b.Offsets(topic, p)
	if !ok {
		return nil, topic
	}
	k := tp{id, p}
	sp := g.parts[k]
	if sp == nil {
		sp = &partition{id: id, p: p, spso: hwm}
		if c.configs[g.name]["share.auto.offset.reset"] == "earliest" {
			sp.spso = start
		}
		g.parts[k] = sp
		c.persist(g, sp)
	} else if sp.spso < start {
		sp.setStart(start)
		c.persist(g, sp)
	}
	return sp, topic
}

// OnTopicDeleted drops every share-partition of the topic.
func (c *Coordinator) OnTopicDeleted(id [16]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		for k := range g.parts {
			if k.id == id {
				delete(g.parts, k)
				c.st.write(&frame{kind: kindPartDel, group: g.name, topicID: k.id, part: k.p})
			}
		}
	}
}
