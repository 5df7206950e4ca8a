package groups

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
)

// TestFindCoordinator: an unknown key type refuses every key without
// placing any; a refused key answers node -1; v0–v3 answer one key at the
// top level, v4+ one answer per key, in order.
func TestFindCoordinator(t *testing.T) {
	var asked []string
	locate := func(key string) Located {
		asked = append(asked, key)
		if key == "denied" {
			return Located{Node: 7, Host: "h", Port: 9, Code: kerr.GroupAuthorizationFailed.Code}
		}
		return Located{Node: 2, Host: "h2", Port: 9092}
	}

	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorType, r.CoordinatorKeys = 4, 2, []string{"a", "b"}
	resp := FindCoordinator(r, locate)
	if len(asked) != 0 {
		t.Fatalf("key type 2: located %v", asked)
	}
	for _, c := range resp.Coordinators {
		if c.ErrorCode != kerr.InvalidRequest.Code || c.NodeID != -1 || c.Port != -1 || c.ErrorMessage == nil {
			t.Errorf("key type 2, key %s: %+v", c.Key, c)
		}
	}

	r = kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorKey = 3, "denied"
	resp = FindCoordinator(r, locate)
	if resp.ErrorCode != kerr.GroupAuthorizationFailed.Code || resp.NodeID != -1 || resp.Host != "" || resp.Port != -1 || resp.ErrorMessage != nil {
		t.Errorf("v3 denied: %+v", resp)
	}

	r = kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorType, r.CoordinatorKeys = 6, 1, []string{"x", "denied"}
	asked = nil
	resp = FindCoordinator(r, locate)
	if len(resp.Coordinators) != 2 || len(asked) != 2 {
		t.Fatalf("v6: %d answers, located %v", len(resp.Coordinators), asked)
	}
	if c := resp.Coordinators[0]; c.Key != "x" || c.ErrorCode != 0 || c.NodeID != 2 || c.Host != "h2" || c.Port != 9092 {
		t.Errorf("v6 x: %+v", c)
	}
	if c := resp.Coordinators[1]; c.Key != "denied" || c.ErrorCode != kerr.GroupAuthorizationFailed.Code || c.NodeID != -1 {
		t.Errorf("v6 denied: %+v", c)
	}
}

// TestSettingsWithDefaults: zero fields take Kafka's defaults, and an
// unset KIP-848 bound stretches to take in the broker's own value.
func TestSettingsWithDefaults(t *testing.T) {
	d := Settings{}.WithDefaults()
	if d != DefaultSettings() {
		t.Errorf("zero settings: %+v, want Kafka's defaults", d)
	}
	s := Settings{ConsumerHeartbeatInterval: 250 * time.Millisecond, ConsumerSessionTimeout: 90 * time.Second,
		ConsumerMaxHeartbeatInterval: 10 * time.Second}.WithDefaults()
	if s.ConsumerMinHeartbeatInterval != 250*time.Millisecond || s.ConsumerMaxHeartbeatInterval != 10*time.Second {
		t.Errorf("heartbeat bounds %v–%v, want 250ms–10s", s.ConsumerMinHeartbeatInterval, s.ConsumerMaxHeartbeatInterval)
	}
	if s.ConsumerMinSessionTimeout != 45*time.Second || s.ConsumerMaxSessionTimeout != 90*time.Second {
		t.Errorf("session bounds %v–%v, want 45s–90s", s.ConsumerMinSessionTimeout, s.ConsumerMaxSessionTimeout)
	}
	src := map[string]int8{}
	for _, c := range (Settings{MinSessionTimeout: time.Second}).BrokerConfigs() {
		src[c.Name] = c.Source
		if c.Name == "offsets.retention.minutes" && c.Value != "10080" {
			t.Errorf("offsets.retention.minutes = %s, want 10080", c.Value)
		}
	}
	if src["group.min.session.timeout.ms"] == src["group.max.session.timeout.ms"] {
		t.Errorf("a set and an unset setting report the same source %d", src["group.min.session.timeout.ms"])
	}
}

// topics is a fixed topic table for a coordinator under test.
type topics map[string][16]byte

func (ts topics) TopicID(name string) ([16]byte, bool) { id, ok := ts[name]; return id, ok }
func (ts topics) TopicName(id [16]byte) (string, bool) {
	for n, tid := range ts {
		if tid == id {
			return n, true
		}
	}
	return "", false
}
func (ts topics) TopicNames() []string {
	var out []string
	for n := range ts {
		out = append(out, n)
	}
	return out
}
func (ts topics) PartitionCount(name string) (int32, bool) { _, ok := ts[name]; return 1, ok }
func (topics) OnTopicDeleted(func(string, [16]byte))       {}
func (topics) TxnOffsetPending(string, string, int32) bool { return false }

// access allows the groups and topics it names; quiet records the topics
// asked about without a log line.
type access struct {
	groups, topics map[string]bool
	quiet          []string
}

func (a *access) Group(_ kmsg.ACLOperation, g string) bool { return a.groups[g] }
func (a *access) Topic(_ kmsg.ACLOperation, t string) bool { return a.topics[t] }
func (a *access) TopicVisible(_ kmsg.ACLOperation, t string) bool {
	a.quiet = append(a.quiet, t)
	return a.topics[t]
}
func (a *access) GroupOps(asked bool, g string) int32 { return 1 << 8 }

func newTestCoordinator(t *testing.T, ts topics) *Coordinator {
	t.Helper()
	c, err := New(Config{FS: vfs.NewMem(), Dir: "offsets", Sync: logstore.SyncNever,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now,
		Settings: Settings{}.WithDefaults()}, ts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAuthorizedOffsetFetch: under Access a named topic the principal may
// not describe answers TOPIC_AUTHORIZATION_FAILED with no offset, a fetch
// of all offsets leaves it out (asking quietly), and from v8 a denied group
// is answered after the others.
func TestAuthorizedOffsetFetch(t *testing.T) {
	ts := topics{"pub": {1}, "secret": {2}}
	c := newTestCoordinator(t, ts)
	for _, g := range []string{"g", "h"} {
		if err := c.CommitTransactionalOffsets(g, []groupstore.Commit{
			{Topic: "pub", Partition: 0, Offset: groupstore.Offset{Offset: 5, LeaderEpoch: -1, ExpireMs: -1}},
			{Topic: "secret", Partition: 0, Offset: groupstore.Offset{Offset: 7, LeaderEpoch: -1, ExpireMs: -1}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	acc := &access{groups: map[string]bool{"g": true}, topics: map[string]bool{"pub": true}}

	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, "g"
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "pub", Partitions: []int32{0}}, {Topic: "secret", Partitions: []int32{0}}}
	resp := c.OffsetFetch(r, acc)
	if len(resp.Topics) != 2 || resp.Topics[0].Partitions[0].Offset != 5 {
		t.Fatalf("v7 named: %+v", resp.Topics)
	}
	if p := resp.Topics[1].Partitions[0]; p.ErrorCode != kerr.TopicAuthorizationFailed.Code || p.Offset != -1 {
		t.Errorf("v7 secret: %+v", p)
	}

	r.Topics, acc.quiet = nil, nil
	resp = c.OffsetFetch(r, acc)
	if len(resp.Topics) != 1 || resp.Topics[0].Topic != "pub" || len(acc.quiet) != 2 {
		t.Errorf("v7 all: topics %+v, asked quietly about %v", resp.Topics, acc.quiet)
	}

	r = kmsg.NewPtrOffsetFetchRequest()
	r.Version = 8
	r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "h"}, {Group: "g"}}
	resp = c.OffsetFetch(r, acc)
	if len(resp.Groups) != 2 || resp.Groups[0].Group != "g" || resp.Groups[1].Group != "h" {
		t.Fatalf("v8: groups %+v", resp.Groups)
	}
	if g := resp.Groups[0]; g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Topic != "pub" {
		t.Errorf("v8 g: %+v", g)
	}
	if h := resp.Groups[1]; h.ErrorCode != kerr.GroupAuthorizationFailed.Code || len(h.Topics) != 0 {
		t.Errorf("v8 h: %+v", h)
	}

	// Without Access everything shows.
	if resp = c.OffsetFetch(r, nil); len(resp.Groups[0].Topics) != 2 || resp.Groups[1].ErrorCode != 0 {
		t.Errorf("no access: %+v", resp.Groups)
	}
}
