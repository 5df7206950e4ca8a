package compat_test

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// issue38DiffRows are TestKafkaDiff's rows for client-metrics
// subscriptions (the CLIENT_METRICS config resource, KIP-714) and KIP-848
// static membership, appended to kafkaDiffRows.
func issue38DiffRows() []diffRow {
	return []diffRow{
		{name: "ClientMetrics/create", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet,
			"metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.", "interval.ms", "1000", "match", "client_id=kd-.*"), out: alterConfigOut,
			after: func(s *diffSide) { s.waitClientMetrics("kd-cm", true) }},
		{name: "ClientMetrics/describe", req: func(*diffSide) kmsg.Request {
			r := describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm")
			r.IncludeSynonyms = true
			return r
		}, out: cmDescribeOut},
		{name: "ClientMetrics/describe named", req: func(*diffSide) kmsg.Request {
			return describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm", "interval.ms", "match")
		}, out: cmDescribeOut},
		{name: "ClientMetrics/describe unknown", req: func(*diffSide) kmsg.Request {
			return describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm-none")
		}, out: cmDescribeOut},
		{name: "ClientMetrics/describe empty name", req: func(*diffSide) kmsg.Request {
			return describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "")
		}, out: cmDescribeOut},
		{name: "ClientMetrics/unknown config", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "no.such", "1"), out: alterConfigOut},
		{name: "ClientMetrics/interval too small", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "interval.ms", "50"), out: alterConfigOut},
		{name: "ClientMetrics/interval too large", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "interval.ms", "3600001"), out: alterConfigOut},
		{name: "ClientMetrics/interval not a number", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "interval.ms", "abc"), out: alterConfigOut},
		{name: "ClientMetrics/bad match param", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "match", "client_nope=x"), out: alterConfigOut},
		{name: "ClientMetrics/match without value", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "match", "client_id="), out: alterConfigOut},
		{name: "ClientMetrics/bad match regex", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "match", "client_id=("), out: alterConfigOut},
		{name: "ClientMetrics/duplicate metrics", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSet, "metrics", "a, b,a"), out: alterConfigOut},
		{name: "ClientMetrics/empty name", req: cmAlter("", kmsg.IncrementalAlterConfigOpSet, "interval.ms", "1000"), out: alterConfigOut},
		{name: "ClientMetrics/append to interval", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpAppend, "interval.ms", "1000"), out: alterConfigOut},
		{name: "ClientMetrics/subtract metrics", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpSubtract, "metrics", "a"), out: alterConfigOut},
		{name: "ClientMetrics/append metrics", req: cmAlter("kd-cm", kmsg.IncrementalAlterConfigOpAppend, "metrics", "org.apache.kafka.producer.,kd.extra"), out: alterConfigOut},
		{name: "ClientMetrics/describe after append", req: func(*diffSide) kmsg.Request {
			return describeConfigsReq(kmsg.ConfigResourceTypeClientMetrics, "kd-cm", "metrics")
		}, out: cmDescribeOut},
		{name: "ClientMetrics/legacy AlterConfigs", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrAlterConfigsRequest()
			res := kmsg.NewAlterConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "kd-cm2"
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "metrics", kmsg.StringPtr("*")
			res.Configs = append(res.Configs, c)
			r.Resources = append(r.Resources, res)
			return r
		}, out: func(_ *diffSide, r kmsg.Response) any {
			var out []any
			for _, res := range r.(*kmsg.AlterConfigsResponse).Resources {
				out = append(out, map[string]any{"err": errName(res.ErrorCode), "msg": errMsg(res.ErrorCode, res.ErrorMessage)})
			}
			return out
		}, after: func(s *diffSide) { s.waitClientMetrics("kd-cm2", true) }},
		{name: "ClientMetrics/list", req: cmList, out: cmListOut},
		{name: "ClientMetrics/delete every config", req: cmAlter("kd-cm2", kmsg.IncrementalAlterConfigOpDelete, "metrics", ""), out: alterConfigOut,
			after: func(s *diffSide) { s.waitClientMetrics("kd-cm2", false) }},
		{name: "ClientMetrics/list after delete", req: cmList, out: cmListOut},

		{name: "DescribeConfigs/group.consumer.max.size", req: func(s *diffSide) kmsg.Request {
			return describeConfigsReq(kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(s.node)), "group.consumer.max.size")
		}, out: cmDescribeOut},

		// KIP-848 static membership: who holds an instance ID.
		{name: "StaticMember/join", req: staticHB("SSSSSSSSSSSSSSSSSSSS01", "kd-inst", 0), out: staticOut},
		{name: "StaticMember/second while held", req: staticHB("SSSSSSSSSSSSSSSSSSSS02", "kd-inst", 0), out: staticOut},
		{name: "StaticMember/leave for restart", req: staticHB("SSSSSSSSSSSSSSSSSSSS01", "kd-inst", -2), out: staticOut},
		{name: "StaticMember/second takes over", req: staticHB("SSSSSSSSSSSSSSSSSSSS02", "kd-inst", 0), out: staticOut},
		{name: "StaticMember/first heartbeats", req: staticHB("SSSSSSSSSSSSSSSSSSSS01", "kd-inst", 1), out: staticOut},
		{name: "StaticMember/first leaves", req: staticHB("SSSSSSSSSSSSSSSSSSSS01", "kd-inst", -1), out: staticOut},
		{name: "StaticMember/unknown instance", req: staticHB("SSSSSSSSSSSSSSSSSSSS03", "kd-inst-none", 1), out: staticOut},
	}
}

// staticHB is a ConsumerGroupHeartbeat of a static member of group
// kd-static; epoch 0 joins.
func staticHB(member, instance string, epoch int32) func(*diffSide) kmsg.Request {
	return func(*diffSide) kmsg.Request {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch, r.InstanceID = "kd-static", member, epoch, kmsg.StringPtr(instance)
		r.RebalanceTimeoutMillis = 60000
		if epoch == 0 {
			r.SubscribedTopicNames = []string{"kd-topic"}
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return r
	}
}

// staticOut is the error and its message, and the member answered.
func staticOut(_ *diffSide, r kmsg.Response) any {
	resp := r.(*kmsg.ConsumerGroupHeartbeatResponse)
	out := map[string]any{"err": errName(resp.ErrorCode), "msg": errMsg(resp.ErrorCode, resp.ErrorMessage)}
	if resp.ErrorCode == 0 {
		out["member"] = deref(resp.MemberID)
	}
	return out
}

// cmAlter is an IncrementalAlterConfigs of one CLIENT_METRICS resource,
// every pair with op.
func cmAlter(name string, op kmsg.IncrementalAlterConfigOp, kv ...string) func(*diffSide) kmsg.Request {
	return func(*diffSide) kmsg.Request {
		r := alterConfigReq(name, kv...)
		r.Resources[0].ResourceType = kmsg.ConfigResourceTypeClientMetrics
		for i := range r.Resources[0].Configs {
			r.Resources[0].Configs[i].Op = op
		}
		return r
	}
}

func cmDescribeOut(_ *diffSide, r kmsg.Response) any {
	var out []any
	for _, res := range r.(*kmsg.DescribeConfigsResponse).Resources {
		m := map[string]any{"err": errName(res.ErrorCode), "msg": errMsg(res.ErrorCode, res.ErrorMessage)}
		cfgs := map[string]any{}
		for _, c := range res.Configs {
			var syn []string
			for _, s := range c.ConfigSynonyms {
				syn = append(syn, fmt.Sprintf("%s=%v/%v", s.Name, deref(s.Value), s.Source))
			}
			cfgs[c.Name] = fmt.Sprintf("%v source=%v type=%v ro=%v sensitive=%v synonyms=%v", deref(c.Value), c.Source, c.ConfigType, c.ReadOnly, c.IsSensitive, syn)
		}
		m["configs"] = cfgs
		out = append(out, m)
	}
	return out
}

func cmList(*diffSide) kmsg.Request {
	r := kmsg.NewPtrListConfigResourcesRequest()
	r.ResourceTypes = []int8{int8(kmsg.ConfigResourceTypeClientMetrics)}
	return r
}

func cmListOut(_ *diffSide, r kmsg.Response) any {
	resp := r.(*kmsg.ListConfigResourcesResponse)
	var names []string
	for _, c := range resp.ConfigResources {
		names = append(names, fmt.Sprintf("%s/%d", c.Name, c.Type))
	}
	slices.Sort(names) // Kafka lists them in its map's order
	return map[string]any{"err": errName(resp.ErrorCode), "resources": names}
}

// waitClientMetrics waits until the side lists (or no longer lists) the
// subscription: Kafka's broker learns of a change from its controller a
// moment after answering it.
func (s *diffSide) waitClientMetrics(name string, listed bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := s.br.Request(s.ctx, cmList(s))
		if err == nil {
			found := false
			for _, c := range r.(*kmsg.ListConfigResourcesResponse).ConfigResources {
				found = found || c.Name == name
			}
			if found == listed {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: client-metrics subscription %s listed=%v not seen in 10 s (%v)", s.name, name, listed, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
