package broker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
)

// TestKgoConsumerGroup848 runs the KIP-848 protocol with kgo
// (ServerSideBalancer) and both server-side assignors: three members share
// 12 partitions, a fourth joins, one is killed (TCP cut) and its
// partitions move once its session expires; every record is consumed.
func TestKgoConsumerGroup848(t *testing.T) {
	for _, bal := range []struct {
		name, assignor string
		b              kgo.GroupBalancer
	}{{"uniform", "uniform", kgo.StickyBalancer()}, {"range", "range", kgo.RangeBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			t.Parallel()
			const parts, per = 12, 20
			gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) {
				c.Groups.ConsumerHeartbeatInterval, c.Groups.ConsumerSessionTimeout = 100*time.Millisecond, 1500*time.Millisecond
			})
			gb.createTopic(t, "t", parts)
			gb.produce(t, "t", parts, per)
			seen := &recordSet{seen: map[int32]map[int64]int{}}
			opts := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(bal.b)}
			c1 := startConsumer(t, gb, "c1", "g", "t", seen, opts...)
			c2 := startConsumer(t, gb, "c2", "g", "t", seen, opts...)
			c3 := startConsumer(t, gb, "c3", "g", "t", seen, opts...)
			waitBalanced(t, parts, c1, c2, c3)
			waitConsumed(t, seen, parts, per)

			cl := gb.client(t)
			dr := kmsg.NewPtrConsumerGroupDescribeRequest()
			dr.Groups = []string{"g"}
			desc := request[*kmsg.ConsumerGroupDescribeResponse](t, cl, dr).Groups[0]
			if desc.ErrorCode != 0 || desc.AssignorName != bal.assignor || len(desc.Members) != 3 {
				t.Fatalf("describe: %+v", desc)
			}
			lg := kmsg.NewPtrListGroupsRequest()
			lg.TypesFilter = []string{"consumer"}
			if gs := request[*kmsg.ListGroupsResponse](t, cl, lg).Groups; len(gs) != 1 || gs[0].GroupType != "consumer" {
				t.Fatalf("list groups: %+v", gs)
			}
			// A classic join cannot take over a live consumer group.
			jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", "", 9))
			wantCode(t, "classic join into a consumer group", jr.ErrorCode, kerr.InconsistentGroupProtocol)

			c4 := startConsumer(t, gb, "c4", "g", "t", seen, opts...)
			waitBalanced(t, parts, c1, c2, c3, c4)
			gb.produce(t, "t", parts, per)
			waitConsumed(t, seen, parts, 2*per)

			killedAt := time.Now()
			c2.kill()
			waitBalanced(t, parts, c1, c3, c4)
			if d := time.Since(killedAt); d < time.Second {
				t.Fatalf("partitions moved %v after the kill, before the session timeout", d)
			}
			gb.produce(t, "t", parts, per)
			waitConsumed(t, seen, parts, 3*per)

			// Committed offsets are there for the group.
			ctx := context.Background()
			c1.cl.CommitUncommittedOffsets(ctx)
			of := kmsg.NewPtrOffsetFetchRequest()
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = "g"
			of.Groups = []kmsg.OffsetFetchRequestGroup{g}
			if got := request[*kmsg.OffsetFetchResponse](t, cl, of).Groups[0]; got.ErrorCode != 0 || len(got.Topics) != 1 {
				t.Fatalf("offset fetch: %+v", got)
			}
		})
	}
}

// TestConsumerHeartbeatProtocol drives ConsumerGroupHeartbeat by hand:
// join, revoke-before-assign between two members, epoch fencing, and a
// member that never revokes being removed after its rebalance timeout.
func TestConsumerHeartbeatProtocol(t *testing.T) {
	// The broker's clock runs skew ahead of the real one, so the test can
	// let a whole heartbeat interval pass.
	var skew atomic.Int64
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	gb.createTopic(t, "t", 4)
	tid, _ := gb.b.TopicID("t")
	cl := gb.client(t)
	hb := func(member string, epoch int32, owned []int32, rebalanceMs int32) *kmsg.ConsumerGroupHeartbeatResponse {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch = "g", member, epoch
		r.RebalanceTimeoutMillis = rebalanceMs
		if epoch == 0 {
			r.SubscribedTopicNames = []string{"t"}
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		if owned != nil {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: tid, Partitions: owned}}
		}
		return request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
	}
	parts := func(r *kmsg.ConsumerGroupHeartbeatResponse) []int32 {
		if r.Assignment == nil {
			return nil
		}
		var ps []int32
		for _, at := range r.Assignment.Topics {
			ps = append(ps, at.Partitions...)
		}
		return ps
	}

	a := hb("member-a", 0, nil, 300)
	wantCode(t, "a joins", a.ErrorCode, nil)
	if len(parts(a)) != 4 || a.MemberEpoch != 1 {
		t.Fatalf("a: epoch %d partitions %v", a.MemberEpoch, parts(a))
	}
	wantCode(t, "stale epoch", hb("member-a", 7, nil, -1).ErrorCode, kerr.FencedMemberEpoch)
	wantCode(t, "unknown member", hb("nobody", 1, nil, -1).ErrorCode, kerr.UnknownMemberID)

	b := hb("member-b", 0, nil, 10_000)
	wantCode(t, "b joins", b.ErrorCode, nil)
	if len(parts(b)) != 0 {
		t.Fatalf("b got %v while a still owns everything", parts(b))
	}
	// A tenth of the configured interval (Kafka's 5 s default) while the
	// group reconciles and for one interval after its epoch moved (a just
	// formed the group).
	if a.HeartbeatIntervalMillis != 500 || b.HeartbeatIntervalMillis != 500 {
		t.Fatalf("heartbeat intervals: a (new group) %d ms, b (reconciling) %d ms", a.HeartbeatIntervalMillis, b.HeartbeatIntervalMillis)
	}
	// a is told to shrink to its half; its epoch stays until it revokes.
	a = hb("member-a", 1, []int32{0, 1, 2, 3}, -1)
	if len(parts(a)) != 2 || a.MemberEpoch != 1 || a.HeartbeatIntervalMillis != 500 {
		t.Fatalf("a after b joined: epoch %d partitions %v interval %d ms", a.MemberEpoch, parts(a), a.HeartbeatIntervalMillis)
	}
	// a keeps claiming all four: after its 300 ms rebalance timeout it is
	// removed and b gets everything.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b = hb("member-b", b.MemberEpoch, parts(b), -1)
		wantCode(t, "b heartbeat", b.ErrorCode, nil)
		if len(parts(b)) == 4 {
			if b.HeartbeatIntervalMillis != 500 {
				t.Fatalf("b has its partitions just after the epoch moved but is told to heartbeat every %d ms", b.HeartbeatIntervalMillis)
			}
			// Stable for a whole interval: the configured one.
			skew.Add(int64(6 * time.Second))
			b = hb("member-b", b.MemberEpoch, parts(b), -1)
			if b.HeartbeatIntervalMillis != 5000 {
				t.Fatalf("b stable for an interval but told to heartbeat every %d ms", b.HeartbeatIntervalMillis)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never got the partitions a refused to revoke: %v", parts(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantCode(t, "fenced a", hb("member-a", 1, []int32{0, 1, 2, 3}, -1).ErrorCode, kerr.UnknownMemberID)
	// Leaving empties the group.
	wantCode(t, "b leaves", hb("member-b", -1, nil, -1).ErrorCode, nil)
	dr := kmsg.NewPtrConsumerGroupDescribeRequest()
	dr.Groups = []string{"g"}
	if d := request[*kmsg.ConsumerGroupDescribeResponse](t, cl, dr).Groups[0]; d.State != "Empty" || len(d.Members) != 0 {
		t.Fatalf("after leave: %+v", d)
	}
}
