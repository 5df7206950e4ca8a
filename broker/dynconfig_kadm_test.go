package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/configs"
	"github.com/minikafka/minikafka/internal/vfs"
)

func dynAdmin(t *testing.T, b *Broker) (*kadm.Client, *kgo.Client, context.Context) {
	t.Helper()
	cl := newClient(t, listen(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return kadm.NewClient(cl), cl, ctx
}

// alterOne sets or deletes one broker config (incrementally) on broker
// (-1: the cluster default) and returns the resource's error and message.
func alterOne(t *testing.T, ctx context.Context, adm *kadm.Client, broker int32, op kadm.IncrementalOp, name, value string) (error, string) {
	t.Helper()
	ac := []kadm.AlterConfig{{Op: op, Name: name}}
	if op != kadm.DeleteConfig {
		ac[0].Value = kadm.StringPtr(value)
	}
	var rs kadm.AlterConfigsResponses
	var err error
	if broker < 0 {
		rs, err = adm.AlterBrokerConfigs(ctx, ac)
	} else {
		rs, err = adm.AlterBrokerConfigs(ctx, ac, broker)
	}
	if err != nil {
		t.Fatalf("alter %s: %v", name, err)
	}
	return rs[0].Err, rs[0].ErrMessage
}

func describedBroker(t *testing.T, ctx context.Context, adm *kadm.Client, broker int32, name string) *kadm.Config {
	t.Helper()
	var rcs kadm.ResourceConfigs
	var err error
	if broker < 0 {
		rcs, err = adm.DescribeBrokerConfigs(ctx)
	} else {
		rcs, err = adm.DescribeBrokerConfigs(ctx, broker)
	}
	if err != nil || rcs[0].Err != nil {
		t.Fatalf("describe broker %d: %v %v", broker, err, rcs)
	}
	for i := range rcs[0].Configs {
		if rcs[0].Configs[i].Key == name {
			return &rcs[0].Configs[i]
		}
	}
	return nil
}

func sources(c *kadm.Config) string {
	var s []string
	for _, syn := range c.Synonyms {
		s = append(s, syn.Key+"="+deref(syn.Value)+"/"+syn.Source.String())
	}
	return strings.Join(s, " ")
}

// librdkafka's 0081_admin sets sasl.kerberos.min.time.before.relogin on a
// broker; Kafka takes it per broker, refuses it at the cluster default,
// refuses static keys, and DescribeConfigs reports the source.
func TestDynamicBrokerConfigsKadm(t *testing.T) {
	b := newTestBroker(t)
	adm, _, ctx := dynAdmin(t, b)

	if err, msg := alterOne(t, ctx, adm, 1, kadm.SetConfig, "sasl.kerberos.min.time.before.relogin", "58000"); err != nil {
		t.Fatalf("per-broker dynamic key: %v %s", err, msg)
	}
	c := describedBroker(t, ctx, adm, 1, "sasl.kerberos.min.time.before.relogin")
	if c == nil || deref(c.Value) != "58000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("described: %+v", c)
	}
	err, msg := alterOne(t, ctx, adm, -1, kadm.SetConfig, "sasl.kerberos.min.time.before.relogin", "58000")
	if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, "Cannot update these configs at default cluster level, broker id must be specified: Set(sasl.kerberos.min.time.before.relogin)") {
		t.Fatalf("per-broker key at the cluster default: %v %q", err, msg)
	}
	err, msg = alterOne(t, ctx, adm, 1, kadm.SetConfig, "log.dirs", "/elsewhere")
	if !errors.Is(err, kerr.InvalidRequest) || msg != "Cannot update these configs dynamically: Set(log.dirs)" {
		t.Fatalf("static key: %v %q", err, msg)
	}
	err, msg = alterOne(t, ctx, adm, 1, kadm.SetConfig, "ssl.keystore.location", "/k")
	if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, "only per-listener using the listener prefix") {
		t.Fatalf("bare SSL store key: %v %q", err, msg)
	}
	if err, msg := alterOne(t, ctx, adm, 1, kadm.SetConfig, "listener.name.plaintext.ssl.keystore.location", "/k"); err != nil {
		t.Fatalf("listener-prefixed SSL store key: %v %s", err, msg)
	}
	err, msg = alterOne(t, ctx, adm, 1, kadm.SetConfig, "log.retention.ms", "soon")
	if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, "log.retention.ms") {
		t.Fatalf("bad value: %v %q", err, msg)
	}
	other := kmsg.NewPtrIncrementalAlterConfigsRequest()
	orr := kmsg.NewIncrementalAlterConfigsRequestResource()
	orr.ResourceType, orr.ResourceName = kmsg.ConfigResourceTypeBroker, "2"
	oc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	oc.Name, oc.Value = "log.retention.ms", kmsg.StringPtr("1")
	orr.Configs = append(orr.Configs, oc)
	other.Resources = append(other.Resources, orr)
	if r := serve(t, b, other).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code ||
		deref(r.ErrorMessage) != "Unexpected broker id, expected 1, but received 2" {
		t.Fatalf("another broker's ID: %v %s", kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	err, msg = alterOne(t, ctx, adm, 1, kadm.AppendConfig, "log.retention.ms", "1")
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("APPEND on a non-list: %v %q", err, msg)
	}
	// APPEND to a list the node does not set starts from the default,
	// as Kafka's: librdkafka's 0081 appends compact to log.cleanup.policy
	// and subtracts it again, which must leave delete, not an empty list.
	if err, msg := alterOne(t, ctx, adm, 1, kadm.AppendConfig, "log.cleanup.policy", "compact"); err != nil {
		t.Fatalf("APPEND compact: %v %s", err, msg)
	}
	if c := describedBroker(t, ctx, adm, 1, "log.cleanup.policy"); c == nil || deref(c.Value) != "delete,compact" {
		t.Fatalf("after APPEND: %+v", c)
	}
	if err, msg := alterOne(t, ctx, adm, 1, kadm.SubtractConfig, "log.cleanup.policy", "compact"); err != nil {
		t.Fatalf("SUBTRACT compact: %v %s", err, msg)
	}
	if c := describedBroker(t, ctx, adm, 1, "log.cleanup.policy"); c == nil || deref(c.Value) != "delete" {
		t.Fatalf("after SUBTRACT: %+v", c)
	}
	if err, msg := alterOne(t, ctx, adm, 1, kadm.DeleteConfig, "log.cleanup.policy", ""); err != nil {
		t.Fatalf("DELETE: %v %s", err, msg)
	}
	if c := describedBroker(t, ctx, adm, 1, "log.dirs"); c == nil || !strings.Contains(sources(c), "STATIC_BROKER_CONFIG") {
		t.Fatalf("log.dirs: %+v", c)
	}

	// validateOnly stores nothing.
	rs, err2 := adm.ValidateAlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("1000")}}, 1)
	if err2 != nil || rs[0].Err != nil {
		t.Fatalf("validate only: %v %v", err2, rs)
	}
	if c := describedBroker(t, ctx, adm, 1, "log.retention.ms"); deref(c.Value) != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("validateOnly changed the value: %+v", c)
	}

	// Cluster default, then per broker: precedence and synonyms.
	if err, msg := alterOne(t, ctx, adm, -1, kadm.SetConfig, "log.retention.ms", "3600000"); err != nil {
		t.Fatalf("cluster default: %v %s", err, msg)
	}
	if c := describedBroker(t, ctx, adm, -1, "log.retention.ms"); c == nil || deref(c.Value) != "3600000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf(`described at "": %+v`, c)
	}
	if c := describedBroker(t, ctx, adm, -1, "sasl.kerberos.min.time.before.relogin"); c != nil {
		t.Fatalf(`a per-broker value described at "": %+v`, c)
	}
	if err, _ := alterOne(t, ctx, adm, 1, kadm.SetConfig, "log.retention.ms", "7200000"); err != nil {
		t.Fatal(err)
	}
	c = describedBroker(t, ctx, adm, 1, "log.retention.ms")
	if deref(c.Value) != "7200000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig || c.Sensitive ||
		sources(c) != "log.retention.ms=7200000/DYNAMIC_BROKER_CONFIG log.retention.ms=3600000/DYNAMIC_DEFAULT_BROKER_CONFIG log.retention.ms=604800000/DEFAULT_CONFIG" {
		t.Fatalf("per broker over default: %+v %s", c, sources(c))
	}

	// Topics without their own retention.ms take it, with the source.
	createTopic(t, b, "plain", 1)
	createTopic(t, b, "own", 1, "retention.ms", "60000")
	rcs, err3 := adm.DescribeTopicConfigs(ctx, "plain", "own")
	if err3 != nil {
		t.Fatal(err3)
	}
	for _, rc := range rcs {
		for _, tc := range rc.Configs {
			if tc.Key != "retention.ms" {
				continue
			}
			want, src := "7200000", kmsg.ConfigSourceDynamicBrokerConfig
			if rc.Name == "own" {
				want, src = "60000", kmsg.ConfigSourceDynamicTopicConfig
			}
			if deref(tc.Value) != want || tc.Source != src {
				t.Fatalf("%s retention.ms: %s %v (%s)", rc.Name, deref(tc.Value), tc.Source, sources(&tc))
			}
		}
	}
	if got := b.lookupTopic("plain", [16]byte{}).cfg.Load().Log.RetentionMs; got != 2*time.Hour {
		t.Fatalf("plain topic's log retention %v, want 2h", got)
	}
	// Deleting the per-broker value falls back to the cluster default.
	if err, _ := alterOne(t, ctx, adm, 1, kadm.DeleteConfig, "log.retention.ms", ""); err != nil {
		t.Fatal(err)
	}
	if got := b.lookupTopic("plain", [16]byte{}).cfg.Load().Log.RetentionMs; got != time.Hour {
		t.Fatalf("after delete: retention %v, want 1h", got)
	}

	// Sensitive values are never described.
	if err, _ := alterOne(t, ctx, adm, 1, kadm.SetConfig, "listener.name.plaintext.ssl.keystore.password", "secret"); err != nil {
		t.Fatal(err)
	}
	if c := describedBroker(t, ctx, adm, 1, "listener.name.plaintext.ssl.keystore.password"); c == nil || c.Value != nil || !c.Sensitive {
		t.Fatalf("sensitive: %+v", c)
	}
}

// message.max.bytes set dynamically applies at once to topics without
// max.message.bytes, and comes back to Kafka's default when deleted.
func TestDynamicMessageMaxBytesAppliesLive(t *testing.T) {
	b := newTestBroker(t)
	adm, cl, ctx := dynAdmin(t, b)
	createTopic(t, b, "m", 1)
	// Random bytes: kgo compresses, and zeros would shrink below the limit.
	big := func() *kgo.Record {
		v := make([]byte, 4000)
		rand.Read(v)
		return &kgo.Record{Topic: "m", Value: v}
	}
	if err := cl.ProduceSync(ctx, big()).FirstErr(); err != nil {
		t.Fatalf("before: %v", err)
	}
	if err, msg := alterOne(t, ctx, adm, -1, kadm.SetConfig, "message.max.bytes", "1000"); err != nil {
		t.Fatalf("%v %s", err, msg)
	}
	if err := cl.ProduceSync(ctx, big()).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("over the dynamic message.max.bytes: %v, want MESSAGE_TOO_LARGE", err)
	}
	if err, _ := alterOne(t, ctx, adm, -1, kadm.DeleteConfig, "message.max.bytes", ""); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, big()).FirstErr(); err != nil {
		t.Fatalf("after delete: %v", err)
	}
}

// Legacy AlterConfigs replaces a level's whole set; the values survive a
// restart, and topics created after the change (and after the restart)
// start with the dynamic defaults.
func TestDynamicBrokerConfigsPersist(t *testing.T) {
	dir := t.TempDir()
	open := func() *Broker {
		b, err := New(Config{DataDir: dir, FS: vfs.Default, NodeID: 1, DefaultPartitions: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := open()
	alter := func(name string, pairs ...string) int16 {
		req := kmsg.NewPtrAlterConfigsRequest()
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, name
		for i := 0; i+1 < len(pairs); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = pairs[i], kmsg.StringPtr(pairs[i+1])
			rr.Configs = append(rr.Configs, c)
		}
		req.Resources = append(req.Resources, rr)
		return serve(t, b, req).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode
	}
	if c := alter("", "log.retention.bytes", "1048576", "log.cleaner.threads", "2"); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	if c := alter("1", "log.segment.bytes", "65536"); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	// Replace: the cluster default now holds only log.retention.bytes.
	if c := alter("", "log.retention.bytes", "2097152"); c != 0 {
		t.Fatal(kerr.ErrorForCode(c))
	}
	createTopic(t, b, "before", 1)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dir + "/" + configs.DynamicFile)
	if err != nil || strings.Contains(string(data), "log.cleaner.threads") {
		t.Fatalf("%s: %v %s", configs.DynamicFile, err, data)
	}

	b = open()
	defer b.Close()
	createTopic(t, b, "after", 1)
	for _, name := range []string{"before", "after"} {
		l := b.lookupTopic(name, [16]byte{}).cfg.Load().Log
		if l.RetentionBytes != 2097152 || l.SegmentBytes != 65536 {
			t.Fatalf("%s after restart: retention.bytes %d segment.bytes %d", name, l.RetentionBytes, l.SegmentBytes)
		}
	}
	s := b.configs.Dynamic()
	if s.Default["log.retention.bytes"] != "2097152" || s.Node["log.segment.bytes"] != "65536" || len(s.Default) != 1 {
		t.Fatalf("state after restart: %+v", s)
	}
}

// metaDisk fails the atomic writes of small metadata files (topic.json and
// broker_configs.json, through their .tmp) with ENOSPC while full is set.
type metaDisk struct{ full atomic.Bool }

func (d *metaDisk) Inject(op vfs.Op, path string, n int) (int, error) {
	if d.full.Load() && op == vfs.OpWrite && (strings.Contains(path, configs.DynamicFile) || strings.Contains(path, "topic.json")) {
		return n / 2, syscall.ENOSPC
	}
	return n, nil
}

// A full disk makes AlterConfigs and IncrementalAlterConfigs, on broker and
// topic resources, answer KAFKA_STORAGE_ERROR and change nothing; once there
// is space they work again without a restart.
func TestDynamicConfigsDiskFull(t *testing.T) {
	disk := &metaDisk{}
	b := newTestBroker(t, func(c *Config) { c.FS = vfs.NewFaultFS(vfs.NewMem(), disk) })
	adm, cl, ctx := dynAdmin(t, b)
	createTopic(t, b, "t", 1)
	disk.full.Store(true)

	if err, msg := alterOne(t, ctx, adm, 1, kadm.SetConfig, "log.retention.ms", "1000"); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("broker incremental on a full disk: %v %s", err, msg)
	}
	legacy := func(typ kmsg.ConfigResourceType, name, key, value string) int16 {
		req := kmsg.NewPtrAlterConfigsRequest()
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = key, kmsg.StringPtr(value)
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Resources[0].ErrorCode
	}
	if c := legacy(kmsg.ConfigResourceTypeBroker, "", "log.retention.ms", "1000"); c != kerr.KafkaStorageError.Code {
		t.Fatalf("broker legacy on a full disk: %v", kerr.ErrorForCode(c))
	}
	if c := legacy(kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "1000"); c != kerr.KafkaStorageError.Code {
		t.Fatalf("topic legacy on a full disk: %v", kerr.ErrorForCode(c))
	}
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1000")}}, "t")
	if err != nil || !errors.Is(rs[0].Err, kerr.KafkaStorageError) {
		t.Fatalf("topic incremental on a full disk: %v %v", err, rs)
	}
	if c := describedBroker(t, ctx, adm, 1, "log.retention.ms"); deref(c.Value) != "604800000" {
		t.Fatalf("a failed write changed the broker config: %+v", c)
	}
	if v, _ := b.lookupTopic("t", [16]byte{}).cfg.Load().Value("retention.ms"); v != "604800000" {
		t.Fatalf("a failed write changed the topic config: %s", v)
	}

	disk.full.Store(false)
	if err, msg := alterOne(t, ctx, adm, 1, kadm.SetConfig, "log.retention.ms", "1000"); err != nil {
		t.Fatalf("broker after space returned: %v %s", err, msg)
	}
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("2000")}}, "t")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("topic after space returned: %v %v", err, rs)
	}
	if got := b.lookupTopic("t", [16]byte{}).cfg.Load().Log.RetentionMs; got != 2*time.Second {
		t.Fatalf("topic retention %v", got)
	}
}

// A topic inherits a cluster-default log.retention.ms; altering another of
// its configs must keep that inheritance (it used to re-parse the topic's
// overrides alone, so retention fell back to Kafka's 168 h until the next
// dynamic change or a restart).
func TestTopicAlterKeepsDynamicDefaults(t *testing.T) {
	b := newTestBroker(t)
	adm, _, ctx := dynAdmin(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "inherits"); err != nil {
		t.Fatal(err)
	}
	if err, msg := alterOne(t, ctx, adm, -1, kadm.SetConfig, "log.retention.ms", "1000"); err != nil {
		t.Fatalf("cluster default: %v %s", err, msg)
	}
	retention := func(when string) {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, "inherits")
		if err != nil || rcs[0].Err != nil {
			t.Fatalf("%s: describe: %v %v", when, err, rcs)
		}
		for _, c := range rcs[0].Configs {
			if c.Key == "retention.ms" {
				if deref(c.Value) != "1000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
					t.Fatalf("%s: retention.ms = %s from %v, want 1000 from the dynamic cluster default", when, deref(c.Value), c.Source)
				}
				if got := b.lookupTopic("inherits", [16]byte{}).cfg.Load().Int64("retention.ms"); got != 1000 {
					t.Fatalf("%s: the topic's applied retention.ms is %d, want 1000", when, got)
				}
				return
			}
		}
		t.Fatalf("%s: retention.ms not described", when)
	}
	retention("before the alter")
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.ms", Value: kadm.StringPtr("3600000")}}, "inherits")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter segment.ms: %v %v", err, rs)
	}
	retention("after altering segment.ms")
}
