package groups

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func strp(s string) *string { return &s }

// TestValidateConsumerHeartbeat: the request checks Kafka's coordinator
// makes before it looks at the group, each with its error.
func TestValidateConsumerHeartbeat(t *testing.T) {
	base := func(epoch int32) *kmsg.ConsumerGroupHeartbeatRequest {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Version = 1
		r.Group, r.MemberID, r.MemberEpoch = "g", "m", epoch
		if epoch == 0 {
			r.RebalanceTimeoutMillis = 30_000
			r.SubscribedTopicNames = []string{"t"}
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return r
	}
	cases := []struct {
		name string
		mod  func(r *kmsg.ConsumerGroupHeartbeatRequest)
		want *kerr.Error
	}{
		{"valid join", func(r *kmsg.ConsumerGroupHeartbeatRequest) {}, nil},
		{"valid heartbeat", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(3) }, nil},
		{"v1 join without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest},
		{"v0 join without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Version, r.MemberID = 0, "" }, nil},
		{"v0 heartbeat without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(2); r.Version, r.MemberID = 0, "" }, kerr.InvalidRequest},
		{"v0 leave without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(-1); r.Version, r.MemberID = 0, "" }, kerr.InvalidRequest},
		{"empty group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" }, kerr.InvalidRequest},
		{"empty instance id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = strp("") }, kerr.InvalidRequest},
		{"empty rack id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = strp("") }, kerr.InvalidRequest},
		{"rack id set", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = strp("rack-a") }, nil},
		{"join without rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest},
		{"join with null owned partitions", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }, kerr.InvalidRequest},
		{"join owning partitions", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}
		}, kerr.InvalidRequest},
		{"join with neither names nor regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest},
		{"join with only an empty regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, strp("")
		}, nil},
		// Kafka refuses this one here; minikafka decides with the
		// member in view (kgo leaves so; TestStaticLeaveWithoutInstanceID).
		{"static leave without instance id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(-2) }, nil},
		{"static leave", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(-2); r.InstanceID = strp("i") }, nil},
		{"epoch below -2", func(r *kmsg.ConsumerGroupHeartbeatRequest) { *r = *base(-3) }, kerr.InvalidRequest},
		{"uniform assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = strp("uniform") }, nil},
		{"range assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = strp("range") }, nil},
		{"unknown assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = strp("sticky") }, kerr.UnsupportedAssignor},
	}
	for _, tc := range cases {
		r := base(0)
		tc.mod(r)
		code, msg := validateConsumerHeartbeat(r)
		want := int16(0)
		if tc.want != nil {
			want = tc.want.Code
		}
		if code != want {
			t.Errorf("%s: code %d (%s), want %d", tc.name, code, msg, want)
		}
		if code != 0 && msg == "" {
			t.Errorf("%s: error %d without a message", tc.name, code)
		}
	}
}
