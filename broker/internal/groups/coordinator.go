package groups

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/ratelog"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// Broker is what the coordinator needs of the broker around it: topic
// names, IDs and partition counts, word of deleted topics, and whether an
// open transaction holds an offset (KIP-447 require_stable). The clock and
// the logger come with Config.
type Broker interface {
	TopicID(name string) ([16]byte, bool)
	TopicName(id [16]byte) (string, bool)
	// TopicNames lists every topic (regex subscriptions match them).
	TopicNames() []string
	// PartitionCount is a topic's partition count; false when there is
	// no such topic.
	PartitionCount(name string) (int32, bool)
	// OnTopicDeleted registers fn to run after a topic is deleted.
	OnTopicDeleted(fn func(name string, id [16]byte))
	// TxnOffsetPending reports whether an open transaction holds an
	// offset for the group's partition that it has not committed yet.
	TxnOffsetPending(group, topic string, partition int32) bool
}

// Config is the coordinator's settings, resolved (no zero means default).
type Config struct {
	FS     vfs.FS
	Dir    string // the committed-offsets store (groupstore)
	Sync   logstore.SyncMode
	Every  time.Duration // the store's fsync interval under SyncInterval
	Logger *slog.Logger
	Now    func() time.Time

	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay time.Duration
	// Settings are Kafka's group settings, resolved (WithDefaults), but a
	// zero ConsumerMaxSize is no limit. The coordinator reads offsets
	// retention and its check interval, the classic session bounds, the
	// KIP-848 session timeout and heartbeat interval and the KIP-848
	// group size limit.
	Settings
	// GroupConfig, when set, returns a group's own config (the GROUP
	// resource: consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms override ConsumerSessionTimeout and
	// ConsumerHeartbeatInterval for that group). It is called with a
	// group's lock held.
	GroupConfig func(group, name string) (string, bool)
}

// Client is who sent a request: its client.id, its address as Kafka
// reports it ("/host:port"), and a channel closed when its connection
// drains for a graceful shutdown (a parked JoinGroup or SyncGroup is then
// answered NOT_COORDINATOR). Draining may be nil.
type Client struct {
	ID, Host string
	Draining <-chan struct{}
	// TopicVisible, when set, tells whether the client's principal may
	// describe a topic: a regex subscription matches only those (Kafka's
	// coordinator resolves regexes with the member's permissions). It is
	// called from other members' requests too, so it must be safe for
	// concurrent use.
	TopicVisible func(topic string) bool
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

// Coordinator owns every group and the committed-offsets store.
type Coordinator struct {
	b     Broker
	store *groupstore.Store
	log   *slog.Logger
	// clientLog rate-limits lines clients can cause (invalid requests).
	clientLog    *ratelog.Limiter
	now          func() time.Time
	initialDelay time.Duration

	mu     sync.Mutex
	groups map[string]*group

	retention, retentionCheck          time.Duration // offsets.retention.minutes, its check interval
	minSession, maxSession             time.Duration // group.min/max.session.timeout.ms
	consumerHeartbeat, consumerSession time.Duration // group.consumer.heartbeat.interval.ms, .session.timeout.ms
	consumerMaxSize                    int           // group.consumer.max.size; 0: no limit
	groupConfig                        func(group, name string) (string, bool)
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
	c    *Coordinator
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

// New opens the committed-offsets store in cfg.Dir and starts the offset
// expiry loop. The caller closes the coordinator after the last request.
func New(cfg Config, b Broker) (*Coordinator, error) {
	st, rep, err := groupstore.Open(groupstore.Options{FS: cfg.FS, Dir: cfg.Dir, Logger: cfg.Logger,
		Sync: cfg.Sync, Interval: cfg.Every})
	if err != nil {
		return nil, err
	}
	if !rep.Clean() {
		cfg.Logger.Warn("group offsets recovered with losses", "torn_bytes", rep.TornBytes, "damaged_regions", len(rep.Damaged))
	}
	c := &Coordinator{b: b, store: st, log: cfg.Logger, clientLog: ratelog.New(cfg.Logger, 0), now: cfg.Now, initialDelay: cfg.InitialRebalanceDelay,
		groups: map[string]*group{}, closing: make(chan struct{}),
		retention: cfg.OffsetsRetention, retentionCheck: cfg.OffsetsRetentionCheckInterval,
		minSession: cfg.MinSessionTimeout, maxSession: cfg.MaxSessionTimeout,
		consumerHeartbeat: cfg.ConsumerHeartbeatInterval, consumerSession: cfg.ConsumerSessionTimeout, consumerMaxSize: cfg.ConsumerMaxSize, groupConfig: cfg.GroupConfig}
	b.OnTopicDeleted(func(name string, _ [16]byte) {
		if err := c.store.DeleteTopic(name); err != nil {
			c.log.Error("dropping deleted topic's committed offsets", "topic", name, "err", err)
		}
	})
	c.wg.Add(1)
	go c.expireLoop()
	return c, nil
}

func (c *Coordinator) topicExists(name string) bool {
	_, ok := c.b.PartitionCount(name)
	return ok
}

// Close fails every waiting JoinGroup/SyncGroup and closes the store.
func (c *Coordinator) Close() error {
	defer c.clientLog.Close()
	close(c.closing)
	c.wg.Wait()
	groups := c.snapshot()
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

func (c *Coordinator) expireLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.retentionCheck)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			c.ExpireOffsets()
		}
	}
}

// ExpireOffsets drops offsets of groups without members older than the
// retention (Kafka's offsets.retention.minutes, counted from when the group
// became empty), and forgets empty groups that have no offsets left.
func (c *Coordinator) ExpireOffsets() {
	n, err := c.store.Expire(c.now(), c.retention, func(name string) groupstore.GroupStatus {
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
		c.log.Error("expiring committed offsets", "err", err)
	} else if n > 0 {
		c.log.Info("expired committed offsets", "count", n)
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

// snapshot lists the groups, so callers can visit them one group lock at
// a time without holding c.mu (the lock order forbids c.mu under group.mu).
func (c *Coordinator) snapshot() []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		groups = append(groups, g)
	}
	return groups
}

func (c *Coordinator) get(name string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[name]
}

// getOrCreate returns the live group, creating an Empty one if needed.
func (c *Coordinator) getOrCreate(name string) *group {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[name]
	if g == nil {
		g = &group{c: c, name: name, state: stateEmpty, stateSince: c.now(),
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

// storeErrCode maps a groupstore error to the code Kafka gives for a failed
// offsets write. A write that failed (a full disk, an I/O error) is
// NOT_COORDINATOR, what Kafka's group coordinator answers when its append
// to __consumer_offsets fails with KAFKA_STORAGE_ERROR: clients look the
// coordinator up again and retry, and the store takes writes again once
// there is space.
func storeErrCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, groupstore.ErrTooLarge):
		return kerr.InvalidCommitOffsetSize.Code
	case errors.Is(err, groupstore.ErrClosed):
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.NotCoordinator.Code
}
