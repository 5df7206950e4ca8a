package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
)

// TestGroupSessionTimeoutBounds: JoinGroup session timeouts outside
// group.min/max.session.timeout.ms are INVALID_SESSION_TIMEOUT, with
// Kafka's defaults (6 s, 30 min) and with configured bounds.
func TestGroupSessionTimeoutBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     GroupConfig
		session map[int32]error
	}{
		{"defaults", GroupConfig{}, map[int32]error{
			5999: kerr.InvalidSessionTimeout, 6000: kerr.MemberIDRequired,
			1_800_000: kerr.MemberIDRequired, 1_800_001: kerr.InvalidSessionTimeout,
		}},
		{"configured", GroupConfig{MinSessionTimeout: 2 * time.Second, MaxSessionTimeout: 10 * time.Second}, map[int32]error{
			1999: kerr.InvalidSessionTimeout, 2000: kerr.MemberIDRequired,
			10_000: kerr.MemberIDRequired, 10_001: kerr.InvalidSessionTimeout,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) { c.Groups = tc.cfg })
			cl := gb.client(t)
			for ms, want := range tc.session {
				r := joinReq("g", "", 9)
				r.SessionTimeoutMillis = ms
				wantCode(t, "session "+strconv.Itoa(int(ms)), request[*kmsg.JoinGroupResponse](t, cl, r).ErrorCode, want)
			}
		})
	}
}

// TestOffsetsRetentionOption: the broker's own expiry loop, run every
// offsets.retention.check.interval.ms, drops the offsets of an empty group
// once offsets.retention.minutes has passed, and keeps a live group's.
func TestOffsetsRetentionOption(t *testing.T) {
	const retention = time.Second
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) {
		c.Groups.OffsetsRetention, c.Groups.OffsetsRetentionCheckInterval = retention, 20*time.Millisecond
	})
	gb.createTopic(t, "t", 1)
	cl := gb.client(t)
	start := time.Now()
	commit := func(group, member string, gen int32) {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.MemberID, r.Generation = group, member, gen
		r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 5, LeaderEpoch: -1}}}}
		wantCode(t, "commit "+group, request[*kmsg.OffsetCommitResponse](t, cl, r).Topics[0].Partitions[0].ErrorCode, nil)
	}
	commit("simple", "", -1)
	first := request[*kmsg.JoinGroupResponse](t, cl, joinReq("live", "", 9))
	jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("live", first.MemberID, 9))
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = "live", jr.MemberID, jr.Generation
	request[*kmsg.SyncGroupResponse](t, cl, sr)
	commit("live", jr.MemberID, jr.Generation)
	// The live member keeps its session (joinReq's 10 s) by heartbeating.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.Generation = "live", jr.MemberID, jr.Generation
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = hb.RequestWith(ctx, cl)
			cancel()
		}
	}()

	c := gb.b.groups
	if n := len(c.GroupOffsets("simple")); n != 1 && time.Since(start) < retention {
		t.Fatal("offsets gone before the retention passed")
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(c.GroupOffsets("simple")) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("empty group's offsets outlived the retention")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if took := time.Since(start); took < retention {
		t.Fatalf("offsets expired after %v, before the %v retention", took, retention)
	}
	if len(c.GroupOffsets("live")) != 1 {
		t.Fatal("a live group's offsets expired")
	}
}

// TestGroupConfigsDescribed: DescribeConfigs of the broker reports the
// group settings in effect; set ones as static broker config.
func TestGroupConfigsDescribed(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) {
		c.Groups = GroupConfig{OffsetsRetention: 3 * time.Hour, ConsumerHeartbeatInterval: 250 * time.Millisecond}
	})
	adm := kadm.NewClient(gb.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("0", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		value  string
		source kmsg.ConfigSource
	}{
		"offsets.retention.minutes":            {"180", kmsg.ConfigSourceStaticBrokerConfig},
		"offsets.retention.check.interval.ms":  {"600000", kmsg.ConfigSourceDefaultConfig},
		"group.min.session.timeout.ms":         {"6000", kmsg.ConfigSourceDefaultConfig},
		"group.max.session.timeout.ms":         {"1800000", kmsg.ConfigSourceDefaultConfig},
		"group.consumer.session.timeout.ms":    {"45000", kmsg.ConfigSourceDefaultConfig},
		"group.consumer.heartbeat.interval.ms": {"250", kmsg.ConfigSourceStaticBrokerConfig},
	}
	for _, c := range rc.Configs {
		if w, ok := want[c.Key]; ok {
			if c.MaybeValue() != w.value || c.Source != w.source {
				t.Errorf("%s = %q (%v), want %q (%v)", c.Key, c.MaybeValue(), c.Source, w.value, w.source)
			}
			delete(want, c.Key)
		}
	}
	for k := range want {
		t.Errorf("%s not described", k)
	}
}

// TestConsumerGroupConfigs: the KIP-848 GROUP resource configs
// consumer.session.timeout.ms and consumer.heartbeat.interval.ms are
// described with the broker's values as defaults, set within the broker's
// group.consumer.min/max bounds (INVALID_CONFIG outside, or a session not
// above the interval), kept across a restart, and used by the coordinator
// for that group's members.
func TestConsumerGroupConfigs(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.Groups = GroupConfig{ConsumerHeartbeatInterval: 250 * time.Millisecond, ConsumerMinSessionTimeout: 100 * time.Millisecond}
	}
	gb := startGroupBroker(t, dir, logstore.SyncNever, cfg)
	cl := gb.client(t)
	describe := func(group string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		req.Resources = append(req.Resources, rr)
		resp := request[*kmsg.DescribeConfigsResponse](t, cl, req)
		wantCode(t, "describe", resp.Resources[0].ErrorCode, nil)
		out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, c := range resp.Resources[0].Configs {
			out[c.Name] = c
		}
		return out
	}
	alter := func(group string, kvs ...string) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		for i := 0; i < len(kvs); i += 2 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
			rr.Configs = append(rr.Configs, c)
		}
		req.Resources = append(req.Resources, rr)
		r := request[*kmsg.IncrementalAlterConfigsResponse](t, cl, req).Resources[0]
		return r.ErrorCode, deref(r.ErrorMessage)
	}
	check := func(group, name, value string, src kmsg.ConfigSource) {
		t.Helper()
		c, ok := describe(group)[name]
		if !ok || deref(c.Value) != value || c.Source != src || c.ConfigType != kmsg.ConfigTypeInt {
			t.Errorf("%s %s: %q source %v type %v (described: %v), want %q source %v INT", group, name, deref(c.Value), c.Source, c.ConfigType, ok, value, src)
		}
	}
	check("g", "consumer.session.timeout.ms", "45000", kmsg.ConfigSourceDefaultConfig)
	check("g", "consumer.heartbeat.interval.ms", "250", kmsg.ConfigSourceDefaultConfig)
	if code, msg := alter("g", "consumer.session.timeout.ms", "50000", "consumer.heartbeat.interval.ms", "6000"); code != 0 {
		t.Fatalf("setting both: %v %s", kerr.ErrorForCode(code), msg)
	}
	check("g", "consumer.session.timeout.ms", "50000", kmsg.ConfigSourceGroupConfig)
	check("g", "consumer.heartbeat.interval.ms", "6000", kmsg.ConfigSourceGroupConfig)
	for _, bad := range [][]string{
		{"consumer.session.timeout.ms", "99"},       // below the configured min (100 ms)
		{"consumer.session.timeout.ms", "60001"},    // above Kafka's default max
		{"consumer.heartbeat.interval.ms", "249"},   // below the min, stretched to the broker's 250 ms
		{"consumer.heartbeat.interval.ms", "15001"}, // above Kafka's default max
		{"consumer.heartbeat.interval.ms", "often"},
		{"consumer.session.timeout.ms", "5000"}, // not above the group's interval (6000)
		{"consumer.no.such.config", "1"},
	} {
		if code, msg := alter("g", bad...); code != kerr.InvalidConfig.Code || msg == "" {
			t.Errorf("%s=%s: %v %q, want INVALID_CONFIG with a reason", bad[0], bad[1], kerr.ErrorForCode(code), msg)
		}
	}
	if _, msg := alter("g", "consumer.no.such.config", "1"); msg != "Unknown group config name: consumer.no.such.config" {
		t.Errorf("unknown name's message %q, want Kafka's", msg)
	}
	check("g", "consumer.session.timeout.ms", "50000", kmsg.ConfigSourceGroupConfig)
	if c := describe("g")["share.auto.offset.reset"]; c.ConfigType != kmsg.ConfigTypeString {
		t.Errorf("share.auto.offset.reset type %v, want STRING", c.ConfigType)
	}

	// Kept across a restart.
	gb.close()
	gb = startGroupBroker(t, dir, logstore.SyncNever, cfg)
	cl = gb.client(t)
	check("g", "consumer.session.timeout.ms", "50000", kmsg.ConfigSourceGroupConfig)

	// Used for the group's members: a 400 ms session expires a silent
	// member long before the broker's 45 s, and the interval the member
	// is told is the group's (a tenth of it while the group settles).
	gb.createTopic(t, "t", 2)
	if code, msg := alter("fast", "consumer.session.timeout.ms", "400", "consumer.heartbeat.interval.ms", "300"); code != 0 {
		t.Fatalf("setting fast's configs: %v %s", kerr.ErrorForCode(code), msg)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "fast", "m1", 0, 1000
	hb.SubscribedTopicNames, hb.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, hb)
	wantCode(t, "join", resp.ErrorCode, nil)
	if resp.HeartbeatIntervalMillis != 30 && resp.HeartbeatIntervalMillis != 300 {
		t.Errorf("heartbeat interval %d ms, want the group's 300 (or a tenth while it settles)", resp.HeartbeatIntervalMillis)
	}
	members := func() int {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"fast"}
		return len(request[*kmsg.ConsumerGroupDescribeResponse](t, cl, req).Groups[0].Members)
	}
	if n := members(); n != 1 {
		t.Fatalf("members after the join: %d", n)
	}
	start := time.Now()
	for members() != 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the member did not expire within 5 s of its group's 400 ms session timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the member expired after %v, before its 400 ms session timeout", d)
	}
}
