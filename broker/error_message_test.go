package broker

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Each refusal of CreateTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs and CreateAcls carries the specific reason in
// error_message (what a client prints), naming the bad topic, config or
// value, in the KRaft controller's words where Kafka has them.
func TestAdminErrorMessagesSayWhy(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.Authorizer = &AuthorizerConfig{AllowEveryoneIfNoACLFound: true} })
	createTopic(t, b, "t", 3)

	check := func(t *testing.T, what string, code, wantCode int16, msg *string, want string) {
		t.Helper()
		if code != wantCode || msg == nil || !strings.Contains(*msg, want) {
			t.Errorf("%s: %v %q, want %v with %q", what, kerr.ErrorForCode(code), deref(msg), kerr.ErrorForCode(wantCode), want)
		}
	}

	t.Run("create-topics", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			parts      int32
			rf         int16
			cfg        [2]string
			code       int16
			want       string
			duplicated bool
		}{
			{name: "bad/name", parts: 1, rf: 1, code: kerr.InvalidTopicException.Code, want: `'bad/name' contains one or more characters`},
			{name: "t", parts: 1, rf: 1, code: kerr.TopicAlreadyExists.Code, want: "Topic 't' already exists."},
			{name: "zero", parts: 0, rf: 1, code: kerr.InvalidPartitions.Code, want: "Number of partitions was set to an invalid non-positive value."},
			{name: "rf0", parts: 1, rf: 0, code: kerr.InvalidReplicationFactor.Code, want: "Replication factor must be larger than 0, or -1 to use the default value."},
			{name: "rf3", parts: 1, rf: 3, code: kerr.InvalidReplicationFactor.Code, want: "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 1 broker(s) are registered."},
			{name: "cfg", parts: 1, rf: 1, cfg: [2]string{"bogus.config", "1"}, code: kerr.InvalidConfig.Code, want: "bogus.config"},
			{name: "val", parts: 1, rf: 1, cfg: [2]string{"retention.ms", "soon"}, code: kerr.InvalidConfig.Code, want: "Invalid value soon for configuration retention.ms"},
			{name: "dup", parts: 1, rf: 1, code: kerr.InvalidRequest.Code, want: "Duplicate topic name.", duplicated: true},
		} {
			r := kmsg.NewPtrCreateTopicsRequest()
			r.Version = 7
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tc.name, tc.parts, tc.rf
			if tc.cfg[0] != "" {
				c := kmsg.NewCreateTopicsRequestTopicConfig()
				c.Name, c.Value = tc.cfg[0], kmsg.StringPtr(tc.cfg[1])
				rt.Configs = append(rt.Configs, c)
			}
			r.Topics = append(r.Topics, rt)
			if tc.duplicated {
				r.Topics = append(r.Topics, rt)
			}
			for _, st := range serve(t, b, r).(*kmsg.CreateTopicsResponse).Topics {
				check(t, "create "+tc.name, st.ErrorCode, tc.code, st.ErrorMessage, tc.want)
			}
		}
	})

	t.Run("create-partitions", func(t *testing.T) {
		for _, tc := range []struct {
			topic      string
			count      int32
			code       int16
			want       string
			duplicated bool
		}{
			{"t", 2, kerr.InvalidPartitions.Code, "The topic t currently has 3 partition(s); 2 would not be an increase.", false},
			{"t", 3, kerr.InvalidPartitions.Code, "Topic already has 3 partition(s).", false},
			{"t", 20000, kerr.InvalidPartitions.Code, "at most 10000", false},
			{"nope", 4, kerr.UnknownTopicOrPartition.Code, "nope", false},
			{"t", 4, kerr.InvalidRequest.Code, "Duplicate topic name.", true},
		} {
			r := kmsg.NewPtrCreatePartitionsRequest()
			r.Version = 3
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = tc.topic, tc.count
			r.Topics = append(r.Topics, rt)
			if tc.duplicated {
				r.Topics = append(r.Topics, rt)
			}
			for _, st := range serve(t, b, r).(*kmsg.CreatePartitionsResponse).Topics {
				check(t, tc.want, st.ErrorCode, tc.code, st.ErrorMessage, tc.want)
			}
		}
	})

	t.Run("alter-configs", func(t *testing.T) {
		for _, c := range [][2]string{{"bogus.config", "bogus.config"}, {"retention.ms", "retention.ms"}} {
			r := kmsg.NewPtrAlterConfigsRequest()
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
			rc := kmsg.NewAlterConfigsRequestResourceConfig()
			rc.Name, rc.Value = c[0], kmsg.StringPtr("soon")
			rr.Configs = append(rr.Configs, rc)
			r.Resources = append(r.Resources, rr)
			sr := serve(t, b, r).(*kmsg.AlterConfigsResponse).Resources[0]
			check(t, "alter "+c[0], sr.ErrorCode, kerr.InvalidConfig.Code, sr.ErrorMessage, c[1])

			ir := kmsg.NewPtrIncrementalAlterConfigsRequest()
			irr := kmsg.NewIncrementalAlterConfigsRequestResource()
			irr.ResourceType, irr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
			irc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			irc.Name, irc.Value, irc.Op = c[0], kmsg.StringPtr("soon"), kmsg.IncrementalAlterConfigOpSet
			irr.Configs = append(irr.Configs, irc)
			ir.Resources = append(ir.Resources, irr)
			isr := serve(t, b, ir).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
			check(t, "incremental alter "+c[0], isr.ErrorCode, kerr.InvalidConfig.Code, isr.ErrorMessage, c[1])
		}
	})

	t.Run("create-acls", func(t *testing.T) {
		r := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", kmsg.ACLOperationAlterConfigs+100, kmsg.ACLPermissionTypeAllow
		bad := c
		bad.Operation, bad.Principal = kmsg.ACLOperationRead, "alice" // no type
		r.Creations = append(r.Creations, c, bad)
		res := serve(t, b, r).(*kmsg.CreateACLsResponse).Results
		check(t, "acl with an unknown operation", res[0].ErrorCode, kerr.InvalidRequest.Code, res[0].ErrorMessage, "Invalid operation")
		check(t, "acl with a bad principal", res[1].ErrorCode, kerr.InvalidRequest.Code, res[1].ErrorMessage, "alice")
	})
}
