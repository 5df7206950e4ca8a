package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/brokerconfig"
	"github.com/minikafka/minikafka/internal/vfs"
)

// Any IncrementalAlterConfigs op on a BROKER resource gets an answer, never
// a panic, and whatever is stored afterwards is a set that validates and
// that the broker reloads after a restart.
func FuzzDynamicBrokerConfig(f *testing.F) {
	f.Add("1", "sasl.kerberos.min.time.before.relogin", "58000", int8(0))
	f.Add("", "log.retention.ms", "-1", int8(0))
	f.Add("", "message.max.bytes", "abc", int8(0))
	f.Add("1", "log.dirs", "/x", int8(0))
	f.Add("1", "metric.reporters", "a,b", int8(2))
	f.Add("1", "log.cleanup.policy", "compact", int8(3))
	f.Add("1", "listener.name.x.ssl.keystore.password", "p", int8(0))
	f.Add("x", "listener.name.", "", int8(1))
	f.Add("", "compression.type", "zstd", int8(9))
	f.Fuzz(func(t *testing.T, resource, name, value string, op int8) {
		mem := vfs.NewMem()
		b := newTestBroker(t, func(c *Config) { c.FS = mem })
		createTopic(t, b, "t", 1)
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, resource
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = name, kmsg.IncrementalAlterConfigOp(op), kmsg.StringPtr(value)
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp := serve(t, b, req).(*kmsg.IncrementalAlterConfigsResponse)
		if len(resp.Resources) != 1 {
			t.Fatalf("%d resources answered", len(resp.Resources))
		}
		s := b.configs.Dynamic()
		if err := brokerconfig.Validate(s.Node, nil, true); err != nil {
			t.Fatalf("stored per-broker set does not validate: %v", err)
		}
		if err := brokerconfig.Validate(s.Default, nil, false); err != nil {
			t.Fatalf("stored default set does not validate: %v", err)
		}
		d := describedAll(t, b)
		if d == nil {
			t.Fatal("describe failed")
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b2, err := New(Config{DataDir: "/data", FS: mem, NodeID: 1, DefaultPartitions: 1})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer b2.Close()
		if len(b2.configs.Dynamic().Node) != len(s.Node) || len(b2.configs.Dynamic().Default) != len(s.Default) {
			t.Fatalf("reloaded %+v, stored %+v", b2.configs.Dynamic(), s)
		}
	})
}

func describedAll(t *testing.T, b *Broker) *kmsg.DescribeConfigsResponse {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	for _, name := range []string{"1", ""} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, rr)
	}
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	req.Resources = append(req.Resources, rr)
	resp := serve(t, b, req).(*kmsg.DescribeConfigsResponse)
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			return nil
		}
	}
	return resp
}
