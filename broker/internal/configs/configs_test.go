package configs

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/telemetry"
	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// fakeBroker holds topics and group configs in memory.
type fakeBroker struct {
	topics  map[string]*topicconfig.Config
	written map[string]map[string]string
	groups  map[string]map[string]string
}

func (f *fakeBroker) TopicConfig(name string) (*topicconfig.Config, bool) {
	c, ok := f.topics[name]
	return c, ok
}

func (f *fakeBroker) TopicNames() []string {
	var ns []string
	for n := range f.topics {
		ns = append(ns, n)
	}
	return ns
}

func (f *fakeBroker) WriteTopicConfig(name string, set map[string]string) error {
	f.written[name] = set
	return nil
}

func (f *fakeBroker) ApplyTopicConfig(name string, cfg *topicconfig.Config) { f.topics[name] = cfg }

func (f *fakeBroker) Settings() Settings {
	return Settings{Advertised: "PLAINTEXT://h:9092", NodeID: 1, AutoCreateTopics: true, DefaultPartitions: 1, DataDir: "/data"}
}

func (f *fakeBroker) GroupConfigs(g string) map[string]string { return f.groups[g] }
func (f *fakeBroker) SetGroupConfigs(g string, set map[string]string) error {
	f.groups[g] = set
	return nil
}
func (f *fakeBroker) ValidateShareConfig(name, value string) error { return nil }

type oneNode struct{}

func (oneNode) Index(id int32) int {
	if id == 1 {
		return 0
	}
	return -1
}
func (oneNode) IDsText() string { return "1" }

type rules struct{ got [][]telemetry.Rule }

func (r *rules) SetRules(rs []telemetry.Rule) { r.got = append(r.got, rs) }

// fullDisk fails every write while full is set.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) Inject(op vfs.Op, path string, n int) (int, error) {
	if d.full.Load() && op == vfs.OpWrite {
		return 0, syscall.ENOSPC
	}
	return n, nil
}

func newManager(t *testing.T, fsys vfs.FS) (*Manager, *fakeBroker, *rules) {
	t.Helper()
	if err := fsys.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := topicconfig.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	fb := &fakeBroker{topics: map[string]*topicconfig.Config{"t": cfg}, written: map[string]map[string]string{}, groups: map[string]map[string]string{}}
	rs := &rules{}
	m := New(Config{
		FS: fsys, Dir: "/data", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Nodes: oneNode{}, Telemetry: rs,
		ErrCode: func(error) int16 { return kerr.KafkaStorageError.Code },
		Groups: GroupBounds{
			SessionTimeout: 45 * time.Second, MinSessionTimeout: 45 * time.Second, MaxSessionTimeout: 60 * time.Second,
			HeartbeatInterval: 5 * time.Second, MinHeartbeatInterval: 5 * time.Second, MaxHeartbeatInterval: 15 * time.Second,
		},
	}, fb)
	if err := m.LoadDynamic(); err != nil {
		t.Fatal(err)
	}
	if err := m.LoadClientMetrics(); err != nil {
		t.Fatal(err)
	}
	return m, fb, rs
}

func set(name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	return c
}

// A cluster-default log.retention.ms is persisted, rebased onto the topic
// without its own value (described with its source and the chain), and
// read back by a new manager; a failed write changes nothing.
func TestDynamicDefaultRebasesTopics(t *testing.T) {
	disk := &fullDisk{}
	fsys := vfs.NewFaultFS(vfs.NewMem(), disk)
	m, fb, _ := newManager(t, fsys)
	ops := []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("log.retention.ms", "1000")}

	disk.full.Store(true)
	if code, err := m.IncrementalAlter(kmsg.ConfigResourceTypeBroker, "", false, false, ops); code != kerr.KafkaStorageError.Code || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("full disk: %v %v", kerr.ErrorForCode(code), err)
	}
	if len(m.Dynamic().Default) != 0 || fb.topics["t"].Log.RetentionMs != 7*24*time.Hour {
		t.Fatalf("a failed write changed the state: %+v, retention %v", m.Dynamic(), fb.topics["t"].Log.RetentionMs)
	}
	disk.full.Store(false)

	if code, err := m.IncrementalAlter(kmsg.ConfigResourceTypeBroker, "", false, false, ops); code != 0 {
		t.Fatalf("alter: %v %v", kerr.ErrorForCode(code), err)
	}
	if got := fb.topics["t"].Log.RetentionMs; got != time.Second {
		t.Fatalf("topic retention after the dynamic default: %v", got)
	}
	cs, code, err := m.Describe(kmsg.ConfigResourceTypeTopic, "t", []string{"retention.ms"}, true, false)
	if code != 0 || len(cs) != 1 {
		t.Fatalf("describe: %v %v %+v", kerr.ErrorForCode(code), err, cs)
	}
	c := cs[0]
	var syn []string
	for _, s := range c.ConfigSynonyms {
		syn = append(syn, s.Name+"="+*s.Value+"/"+s.Source.String())
	}
	if *c.Value != "1000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig ||
		!slices.Equal(syn, []string{"log.retention.ms=1000/DYNAMIC_DEFAULT_BROKER_CONFIG", "log.retention.ms=604800000/DEFAULT_CONFIG"}) {
		t.Fatalf("described %s=%s source %v synonyms %v", c.Name, *c.Value, c.Source, syn)
	}

	m2, _, _ := newManager(t, fsys)
	if m2.Dynamic().Default["log.retention.ms"] != "1000" {
		t.Fatalf("reloaded %+v", m2.Dynamic())
	}
}

// BROKER resources answer in Kafka's words.
func TestBrokerResourceRefusals(t *testing.T) {
	m, _, _ := newManager(t, vfs.NewMem())
	for _, tc := range []struct {
		name string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
		dup  bool
		code int16
		msg  string
	}{
		{"x", nil, false, kerr.InvalidRequest.Code, "Node id must be an integer, but it is: x"},
		{"2", nil, false, kerr.InvalidRequest.Code, "Unexpected broker id, expected 1, but received 2"},
		{"1", nil, true, kerr.InvalidRequest.Code, "Each resource must appear at most once."},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("log.dirs", "/x")}, false, kerr.InvalidRequest.Code, "Cannot update these configs dynamically: Set(log.dirs)"},
		{"", []kmsg.IncrementalAlterConfigsRequestResourceConfig{set("listeners", "PLAINTEXT://:1")}, false, kerr.InvalidRequest.Code,
			"Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"},
		{"1", func() []kmsg.IncrementalAlterConfigsRequestResourceConfig {
			c := set("num.io.threads", "2")
			c.Op = kmsg.IncrementalAlterConfigOpAppend
			return []kmsg.IncrementalAlterConfigsRequestResourceConfig{c}
		}(), false, kerr.InvalidConfig.Code, "Config value append is not allowed for config key: num.io.threads"},
	} {
		code, err := m.IncrementalAlter(kmsg.ConfigResourceTypeBroker, tc.name, tc.dup, false, tc.ops)
		if code != tc.code || err == nil || err.Error() != tc.msg {
			t.Errorf("%q %v: got %v %v, want %v %q", tc.name, tc.ops, kerr.ErrorForCode(code), err, kerr.ErrorForCode(tc.code), tc.msg)
		}
	}
}

// A client-metrics subscription is validated with Kafka's codes and
// messages, persisted, handed to telemetry as a rule, listed, and removed
// when its last config is deleted.
func TestClientMetricsSubscription(t *testing.T) {
	fsys := vfs.NewMem()
	m, _, rs := newManager(t, fsys)
	alter := func(name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, error) {
		return m.IncrementalAlter(kmsg.ConfigResourceTypeClientMetrics, name, false, false, ops)
	}
	for _, tc := range []struct {
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		code int16
		msg  string
	}{
		{set("interval.ms", "50"), kerr.InvalidRequest.Code, "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{set("interval.ms", "x"), kerr.InvalidConfig.Code, "Invalid value x for configuration interval.ms: Not a number of type INT"},
		{set("match", "client_id"), kerr.InvalidConfig.Code, "Illegal client matching pattern: client_id"},
		{set("color", "blue"), kerr.InvalidRequest.Code, "Unknown client metrics configuration: color"},
	} {
		if code, err := alter("s", tc.op); code != tc.code || err == nil || err.Error() != tc.msg {
			t.Errorf("%s=%s: got %v %v, want %v %q", tc.op.Name, *tc.op.Value, kerr.ErrorForCode(code), err, kerr.ErrorForCode(tc.code), tc.msg)
		}
	}
	if code, err := alter("s", set("metrics", "a, b,a"), set("match", "client_id=k.*")); code != 0 {
		t.Fatalf("alter: %v %v", kerr.ErrorForCode(code), err)
	}
	last := rs.got[len(rs.got)-1]
	if len(last) != 1 || !slices.Equal(last[0].Metrics, []string{"a", "b"}) || !last[0].Match["client_id"].MatchString("kgo") || last[0].Match["client_id"].MatchString("xkgo") {
		t.Fatalf("rules %+v", last)
	}
	m2, _, _ := newManager(t, fsys)
	if got := m2.ClientMetricsNames(); !slices.Equal(got, []string{"s"}) {
		t.Fatalf("reloaded names %v", got)
	}
	cs, _, _ := m2.Describe(kmsg.ConfigResourceTypeClientMetrics, "s", []string{"metrics"}, false, false)
	if len(cs) != 1 || *cs[0].Value != "a,b" || cs[0].Source != kmsg.ConfigSourceClientMetricsConfig {
		t.Fatalf("described %+v", cs)
	}
	del := func(name string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = name, kmsg.IncrementalAlterConfigOpDelete
		return c
	}
	if code, err := alter("s", del("metrics"), del("match")); code != 0 {
		t.Fatalf("delete: %v %v", kerr.ErrorForCode(code), err)
	}
	if got := m.ClientMetricsNames(); len(got) != 0 {
		t.Fatalf("names after deleting every config: %v", got)
	}
}

// Topic ops: APPEND and SUBTRACT on lists from the default, on other
// types INVALID_CONFIG; an unknown op INVALID_REQUEST.
func TestTopicIncrementalOps(t *testing.T) {
	m, fb, _ := newManager(t, vfs.NewMem())
	op := func(name, value string, o kmsg.IncrementalAlterConfigOp) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := set(name, value)
		c.Op = o
		return c
	}
	if code, err := m.IncrementalAlter(kmsg.ConfigResourceTypeTopic, "t", false, false,
		[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op("cleanup.policy", "compact", kmsg.IncrementalAlterConfigOpAppend)}); code != 0 {
		t.Fatalf("append: %v %v", kerr.ErrorForCode(code), err)
	}
	if got := fb.written["t"]["cleanup.policy"]; got != "delete,compact" || !fb.topics["t"].Compacts() {
		t.Fatalf("cleanup.policy written %q", got)
	}
	code, err := m.IncrementalAlter(kmsg.ConfigResourceTypeTopic, "t", false, false,
		[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op("retention.ms", "1", kmsg.IncrementalAlterConfigOpAppend)})
	if code != kerr.InvalidConfig.Code || !strings.Contains(err.Error(), "not a list") {
		t.Fatalf("append to a long: %v %v", kerr.ErrorForCode(code), err)
	}
	code, err = m.IncrementalAlter(kmsg.ConfigResourceTypeTopic, "t", false, false,
		[]kmsg.IncrementalAlterConfigsRequestResourceConfig{op("retention.ms", "1", 9)})
	if code != kerr.InvalidRequest.Code || err == nil {
		t.Fatalf("op 9: %v %v", kerr.ErrorForCode(code), err)
	}
	code, err = m.IncrementalAlter(kmsg.ConfigResourceTypeTopic, "nope", false, false, nil)
	if code != kerr.UnknownTopicOrPartition.Code || err.Error() != "The topic 'nope' does not exist." {
		t.Fatalf("unknown topic: %v %v", kerr.ErrorForCode(code), err)
	}
}

// The GROUP resource's consumer.* configs keep the broker's bounds and
// the session longer than the heartbeat interval.
func TestGroupConsumerConfigBounds(t *testing.T) {
	m, fb, _ := newManager(t, vfs.NewMem())
	alter := func(ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, error) {
		return m.IncrementalAlter(kmsg.ConfigResourceTypeGroupConfig, "g", false, false, ops)
	}
	if code, err := alter(set("consumer.session.timeout.ms", "30000")); code != kerr.InvalidConfig.Code ||
		err.Error() != "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms (45000)" {
		t.Fatalf("below the minimum: %v %v", kerr.ErrorForCode(code), err)
	}
	if code, err := alter(set("consumer.heartbeat.interval.ms", "15000"), set("consumer.session.timeout.ms", "45000")); code != 0 {
		t.Fatalf("within bounds: %v %v", kerr.ErrorForCode(code), err)
	}
	if fb.groups["g"]["consumer.heartbeat.interval.ms"] != "15000" {
		t.Fatalf("stored %v", fb.groups["g"])
	}
}
