package broker

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
)

func strp(s string) *string { return &s }

// cgTopics names the topics of a heartbeat response's assignment, sorted.
func cgTopics(t *testing.T, b *Broker, r *kmsg.ConsumerGroupHeartbeatResponse) []string {
	t.Helper()
	if r.Assignment == nil {
		return nil
	}
	out := []string{}
	for _, at := range r.Assignment.Topics {
		name, ok := b.TopicName(at.TopicID)
		if !ok {
			t.Fatalf("assignment names unknown topic id %v", at.TopicID)
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TestConsumerHeartbeatSubscriptionFields: SubscribedTopicNames and
// SubscribedTopicRegex, each null, empty or set, on a join and on a later
// heartbeat, as Kafka's GroupMetadataManager treats them: names and regex
// are two subscriptions whose union the member is assigned; null leaves a
// field unchanged; an empty regex is no regex (librdkafka sends one beside
// its names on every heartbeat); the group epoch moves only when the
// subscription does.
func TestConsumerHeartbeatSubscriptionFields(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 2)
	gb.createTopic(t, "u", 1)
	cl := gb.client(t)
	tid, _ := gb.b.TopicID("t")
	uid, _ := gb.b.TopicID("u")
	owned := func(topics []string) []kmsg.ConsumerGroupHeartbeatRequestTopic {
		out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, n := range topics {
			switch n {
			case "t":
				out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tid, Partitions: []int32{0, 1}})
			case "u":
				out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: uid, Partitions: []int32{0}})
			}
		}
		return out
	}
	type sub struct {
		names []string // nil: null
		regex *string  // nil: null
	}
	join := func(group string, s sub) *kmsg.ConsumerGroupHeartbeatResponse {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = group, "m-"+group, 0, 30_000
		r.SubscribedTopicNames, r.SubscribedTopicRegex = s.names, s.regex
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		return request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
	}

	joins := []struct {
		name     string
		s        sub
		wantCode error
		want     []string
	}{
		{"names null regex null", sub{nil, nil}, kerr.InvalidRequest, nil},
		{"names null regex empty", sub{nil, strp("")}, nil, []string{}},
		{"names null regex set", sub{nil, strp("[tu]")}, nil, []string{"t", "u"}},
		{"names empty regex null", sub{[]string{}, nil}, nil, []string{}},
		{"names empty regex empty", sub{[]string{}, strp("")}, nil, []string{}},
		{"names empty regex set", sub{[]string{}, strp("u")}, nil, []string{"u"}},
		{"names set regex null", sub{[]string{"t"}, nil}, nil, []string{"t"}},
		{"names set regex empty (librdkafka)", sub{[]string{"t"}, strp("")}, nil, []string{"t"}},
		{"names set regex set", sub{[]string{"t"}, strp("u")}, nil, []string{"t", "u"}},
		{"regex matches the whole name", sub{nil, strp("t|x")}, nil, []string{"t"}},
		{"invalid regex", sub{[]string{"t"}, strp("(")}, kerr.InvalidRegularExpression, nil},
	}
	for i, tc := range joins {
		t.Run("join/"+tc.name, func(t *testing.T) {
			r := join(fmt.Sprintf("join-%d", i), tc.s)
			wantCode(t, tc.name, r.ErrorCode, tc.wantCode)
			if tc.wantCode != nil {
				return
			}
			if r.MemberEpoch != 1 {
				t.Errorf("member epoch %d after joining a new group, want 1", r.MemberEpoch)
			}
			if got := cgTopics(t, gb.b, r); !slices.Equal(got, tc.want) {
				t.Errorf("assigned topics %v, want %v", got, tc.want)
			}
		})
	}

	// A member joined with names [t] sends a later heartbeat.
	later := []struct {
		name      string
		s         sub
		wantMoved bool // the group epoch moves (the subscription changed)
		want      []string
	}{
		{"names null regex null: unchanged", sub{nil, nil}, false, []string{"t"}},
		{"same names, regex empty: unchanged", sub{[]string{"t"}, strp("")}, false, []string{"t"}},
		{"same names in another order with a duplicate", sub{[]string{"t", "t"}, nil}, false, []string{"t"}},
		{"names changed", sub{[]string{"u"}, nil}, true, []string{"u"}},
		{"names emptied", sub{[]string{}, nil}, true, []string{}},
		{"regex added, names kept", sub{nil, strp("u")}, true, []string{"t", "u"}},
	}
	for i, tc := range later {
		t.Run("later/"+tc.name, func(t *testing.T) {
			group := fmt.Sprintf("later-%d", i)
			j := join(group, sub{[]string{"t"}, nil})
			wantCode(t, "join", j.ErrorCode, nil)
			r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			r.Group, r.MemberID, r.MemberEpoch = group, *j.MemberID, j.MemberEpoch
			r.RebalanceTimeoutMillis = -1
			r.SubscribedTopicNames, r.SubscribedTopicRegex = tc.s.names, tc.s.regex
			r.Topics = owned([]string{"t"})
			h := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
			wantCode(t, tc.name, h.ErrorCode, nil)
			describe := func() kmsg.ConsumerGroupDescribeResponseGroup {
				dr := kmsg.NewPtrConsumerGroupDescribeRequest()
				dr.Groups = []string{group}
				return request[*kmsg.ConsumerGroupDescribeResponse](t, cl, dr).Groups[0]
			}
			if moved := describe().Epoch != 1; moved != tc.wantMoved {
				t.Fatalf("group epoch %d after the heartbeat, want moved=%v", describe().Epoch, tc.wantMoved)
			}
			if !tc.wantMoved {
				if h.MemberEpoch != j.MemberEpoch {
					t.Fatalf("member epoch %d → %d on an unchanged heartbeat", j.MemberEpoch, h.MemberEpoch)
				}
				// Nothing changed: the (partial) answer carries no
				// assignment, as Kafka's.
				if h.Assignment != nil {
					t.Fatalf("unchanged heartbeat answered with assignment %v", cgTopics(t, gb.b, h))
				}
				return
			}
			// The member gives up what left its target first; heartbeat
			// until it holds the new assignment.
			for range 5 {
				r.MemberEpoch = h.MemberEpoch
				r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, nil
				if h.Assignment != nil {
					r.Topics = owned(cgTopics(t, gb.b, h))
				}
				h = request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
				wantCode(t, "follow-up", h.ErrorCode, nil)
			}
			d := describe()
			if d.Members[0].MemberEpoch != d.Epoch {
				t.Fatalf("member epoch %d after reconciling, group epoch %d", d.Members[0].MemberEpoch, d.Epoch)
			}
			var got []string
			for _, at := range d.Members[0].Assignment.TopicPartitions {
				if len(at.Partitions) > 0 {
					got = append(got, at.Topic)
				}
			}
			sort.Strings(got)
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("assigned topics %v, want %v", got, tc.want)
			}
		})
	}

	// librdkafka's steady state: every heartbeat a full request with the
	// same names and an empty regex. The epoch stays where it is.
	t.Run("librdkafka full heartbeats keep the epoch", func(t *testing.T) {
		j := join("full", sub{[]string{"t"}, strp("")})
		wantCode(t, "join", j.ErrorCode, nil)
		for range 5 {
			r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			r.Group, r.MemberID, r.MemberEpoch, r.RebalanceTimeoutMillis = "full", *j.MemberID, 1, 30_000
			r.SubscribedTopicNames, r.SubscribedTopicRegex = []string{"t"}, strp("")
			r.Topics = owned([]string{"t"})
			h := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
			wantCode(t, "full heartbeat", h.ErrorCode, nil)
			if h.MemberEpoch != 1 {
				t.Fatalf("member epoch moved to %d on an unchanged full heartbeat", h.MemberEpoch)
			}
			// A full request always gets the assignment back.
			if got := cgTopics(t, gb.b, h); !slices.Equal(got, []string{"t"}) {
				t.Fatalf("full heartbeat answered assignment %v", got)
			}
		}
	})
}

// TestStaticLeaveWithoutInstanceID: a -2 leave that omits the instance ID
// (kgo v1.22 sends it so) is the static leave of a member that joined with
// one, and INVALID_REQUEST, as in Kafka, for a member that did not.
func TestStaticLeaveWithoutInstanceID(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 1)
	cl := gb.client(t)
	hb := func(member string, epoch int32, instance *string) *kmsg.ConsumerGroupHeartbeatResponse {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.InstanceID = "g", member, epoch, instance
		if epoch == 0 {
			r.RebalanceTimeoutMillis = 30_000
			r.SubscribedTopicNames = []string{"t"}
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, r)
	}
	wantCode(t, "static join", hb("static", 0, strp("i1")).ErrorCode, nil)
	wantCode(t, "dynamic join", hb("dynamic", 0, nil).ErrorCode, nil)
	wantCode(t, "dynamic member's -2 without instance id", hb("dynamic", -2, nil).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "static member's -2 without instance id", hb("static", -2, nil).ErrorCode, nil)
	// The instance is released: a restarted member takes it over.
	wantCode(t, "restarted static member", hb("static-2", 0, strp("i1")).ErrorCode, nil)
}
