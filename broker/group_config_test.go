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
