package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
)

// group.consumer.max.size and static membership over TCP, answers as Kafka
// 4.4 gives them: a full group refuses a new member with
// GROUP_MAX_SIZE_REACHED and its message, lets its members and a static
// member's new incarnation in; a static member heartbeating under a member
// ID another took over is FENCED_INSTANCE_ID, an unknown instance
// UNKNOWN_MEMBER_ID.
func TestConsumerGroupMaxSizeAndStaticFencing(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) { c.Groups.ConsumerMaxSize = 2 })
	gb.createTopic(t, "t", 2)
	cl := gb.client(t)
	hb := func(member, instance string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "g", member, epoch, 30000
		if instance != "" {
			r.InstanceID = kmsg.StringPtr(instance)
		}
		if epoch == 0 {
			r.SubscribedTopicNames = []string{"t"}
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
	}
	msg := func(r *kmsg.ConsumerGroupHeartbeatResponse) string { return deref(r.ErrorMessage) }

	a := hb("member-a", "", 0)
	wantCode(t, "a joins", a.ErrorCode, nil)
	s := hb("member-s1", "inst-s", 0)
	wantCode(t, "static s joins", s.ErrorCode, nil)

	c := hb("member-c", "", 0)
	wantCode(t, "c joins a full group", c.ErrorCode, kerr.GroupMaxSizeReached)
	if m := msg(c); m != "The consumer group has reached its maximum capacity of 2 members." {
		t.Errorf("max size message %q", m)
	}
	wantCode(t, "a heartbeats in a full group", hb("member-a", "", a.MemberEpoch).ErrorCode, nil)

	// The instance is held: a second incarnation is refused while the
	// first has not left.
	u := hb("member-s2", "inst-s", 0)
	wantCode(t, "s2 while s1 holds the instance", u.ErrorCode, kerr.UnreleasedInstanceID)
	if m := msg(u); m != "Static member member-s2 with instance id inst-s cannot join the group because the instance id is owned by member-s1 member." {
		t.Errorf("unreleased message %q", m)
	}
	// s1 leaves for a restart (-2), and s2 takes its place though the
	// group is full.
	wantCode(t, "s1 leaves statically", hb("member-s1", "inst-s", -2).ErrorCode, nil)
	s2 := hb("member-s2", "inst-s", 0)
	wantCode(t, "s2 replaces s1 in a full group", s2.ErrorCode, nil)

	f := hb("member-s1", "inst-s", s.MemberEpoch)
	wantCode(t, "s1 heartbeats after s2 took over", f.ErrorCode, kerr.FencedInstanceID)
	if m := msg(f); m != "Static member member-s1 with instance id inst-s was fenced by member member-s2." {
		t.Errorf("fenced message %q", m)
	}
	wantCode(t, "s1 leaves after s2 took over", hb("member-s1", "inst-s", -1).ErrorCode, kerr.FencedInstanceID)
	// Kafka checks the size first: an unknown instance in a full group
	// is refused for that.
	wantCode(t, "unknown instance, full group", hb("member-x", "inst-none", 1).ErrorCode, kerr.GroupMaxSizeReached)
	wantCode(t, "s2 heartbeats", hb("member-s2", "inst-s", s2.MemberEpoch).ErrorCode, nil)

	// Once a leaves there is room again.
	wantCode(t, "a leaves", hb("member-a", "", -1).ErrorCode, nil)
	un := hb("member-x", "inst-none", 1)
	wantCode(t, "unknown instance", un.ErrorCode, kerr.UnknownMemberID)
	if m := msg(un); m != "Instance id inst-none is unknown." {
		t.Errorf("unknown instance message %q", m)
	}
	wantCode(t, "c joins after a left", hb("member-c", "", 0).ErrorCode, nil)

	// The setting in DescribeConfigs of the broker.
	adm := newAdmin(t, gb.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := adm.DescribeBrokerConfigs(ctx, gb.b.cfg.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cfg := range rcs[0].Configs {
		if cfg.Key == "group.consumer.max.size" {
			found = true
			if cfg.MaybeValue() != "2" || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig {
				t.Errorf("group.consumer.max.size described as %q from %v", cfg.MaybeValue(), cfg.Source)
			}
		}
	}
	if !found {
		t.Error("group.consumer.max.size not described")
	}
}

// A kgo consumer (KIP-848) refused by a full group sees
// GROUP_MAX_SIZE_REACHED.
func TestKgoConsumerGroupFull(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) { c.Groups.ConsumerMaxSize = 1 })
	gb.createTopic(t, "t", 1)
	cl := gb.client(t)
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Group, r.MemberID, r.RebalanceTimeoutMillis = "g", "member-a", 30000
	r.SubscribedTopicNames, r.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	wantCode(t, "a joins", request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r).ErrorCode, nil)

	cons := newClient(t, gb.addr, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.ServerSideBalancer())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var got error
		cons.PollFetches(ctx).EachError(func(_ string, _ int32, err error) {
			if errors.Is(err, kerr.GroupMaxSizeReached) {
				got = err
			}
		})
		if got != nil {
			return
		}
	}
	t.Fatal("kgo never saw GROUP_MAX_SIZE_REACHED")
}
