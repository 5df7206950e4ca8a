package broker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/configs"
)

// A client-metrics subscription made with IncrementalAlterConfigs over TCP
// is what GetTelemetrySubscriptions hands the clients it matches; others
// keep the broker's own subscription; changing it makes a push under the
// old one UNKNOWN_SUBSCRIPTION_ID; it is listed, survives a restart (real
// files), and deleting its configs removes it.
func TestClientMetricsSubscriptions(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.FS, c.DataDir = nil, dir
		c.ClientMetrics = []string{"org.apache.kafka."}
	}
	b := newTestBroker(t, cfg)
	addr := listen(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := newClient(t, addr, kgo.ClientID("admin"))

	alter := func(cl *kgo.Client, op kmsg.IncrementalAlterConfigOp, kv ...string) int16 {
		t.Helper()
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "producers"
		for i := 0; i+1 < len(kv); i += 2 {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value, c.Op = kv[i], kmsg.StringPtr(kv[i+1]), op
			res.Configs = append(res.Configs, c)
		}
		r.Resources = append(r.Resources, res)
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Resources[0].ErrorCode
	}
	get := func(clientID string, id [16]byte) *kmsg.GetTelemetrySubscriptionsResponse {
		t.Helper()
		cl := newClient(t, addr, kgo.ClientID(clientID))
		r := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
		r.ClientInstanceID = id
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	list := func(cl *kgo.Client) []string {
		t.Helper()
		r := kmsg.NewPtrListConfigResourcesRequest()
		r.ResourceTypes = []int8{16}
		resp, err := r.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("list: %v %v", err, resp)
		}
		var names []string
		for _, c := range resp.ConfigResources {
			names = append(names, c.Name)
		}
		return names
	}

	if c := alter(admin, kmsg.IncrementalAlterConfigOpSet, "metrics", "org.apache.kafka.producer.", "interval.ms", "2000", "match", "client_id=app-.*"); c != 0 {
		t.Fatalf("create: %v", kerr.ErrorForCode(c))
	}
	if c := alter(admin, kmsg.IncrementalAlterConfigOpSet, "interval.ms", "99"); c != kerr.InvalidRequest.Code {
		t.Fatalf("interval 99: %v, want INVALID_REQUEST", kerr.ErrorForCode(c))
	}
	sub := get("app-1", [16]byte{})
	if sub.ErrorCode != 0 || !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka.producer."}) || sub.PushIntervalMillis != 2000 {
		t.Fatalf("matching client: %+v", sub)
	}
	if other := get("other", [16]byte{}); other.ErrorCode != 0 || !slices.Equal(other.RequestedMetrics, []string{"org.apache.kafka."}) || other.PushIntervalMillis != 30000 {
		t.Fatalf("client no subscription matches: %+v, want the broker's own", other)
	}
	if got := list(admin); !slices.Equal(got, []string{"producers"}) {
		t.Fatalf("listed %v", got)
	}

	// A change of subscription: the old one's push is refused, and the
	// client may ask again at once.
	if c := alter(admin, kmsg.IncrementalAlterConfigOpSet, "interval.ms", "3000"); c != 0 {
		t.Fatalf("change: %v", kerr.ErrorForCode(c))
	}
	app := newClient(t, addr, kgo.ClientID("app-1"))
	push := kmsg.NewPtrPushTelemetryRequest()
	push.ClientInstanceID, push.SubscriptionID = sub.ClientInstanceID, sub.SubscriptionID
	presp, err := push.RequestWith(ctx, app)
	if err != nil || presp.ErrorCode != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("push under the old subscription: %v %v", err, presp)
	}
	again := get("app-1", sub.ClientInstanceID)
	if again.ErrorCode != 0 || again.PushIntervalMillis != 3000 || again.SubscriptionID == sub.SubscriptionID {
		t.Fatalf("after the change: %+v", again)
	}

	// Persisted: a new broker on the same directory has it.
	if _, err := os.Stat(filepath.Join(dir, configs.ClientMetricsFile)); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2 := newTestBroker(t, cfg)
	addr = listen(t, b2)
	if sub := get("app-2", [16]byte{}); !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka.producer."}) || sub.PushIntervalMillis != 3000 {
		t.Fatalf("after restart: %+v", sub)
	}
	d := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName, dr.ConfigNames = kmsg.ConfigResourceTypeClientMetrics, "producers", []string{"interval.ms"}
	d.Resources = append(d.Resources, dr)
	admin = newClient(t, addr, kgo.ClientID("admin"))
	dresp, err := d.RequestWith(ctx, admin)
	if err != nil || len(dresp.Resources[0].Configs) != 1 || deref(dresp.Resources[0].Configs[0].Value) != "3000" ||
		dresp.Resources[0].Configs[0].Source != kmsg.ConfigSourceClientMetricsConfig {
		t.Fatalf("describe after restart: %v %+v", err, dresp)
	}

	// Deleting every config removes the subscription.
	if c := alter(admin, kmsg.IncrementalAlterConfigOpDelete, "metrics", "", "interval.ms", "", "match", ""); c != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(c))
	}
	if got := list(admin); len(got) != 0 {
		t.Fatalf("listed after delete %v", got)
	}
	if sub := get("app-3", [16]byte{}); !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka."}) {
		t.Fatalf("after delete: %+v", sub)
	}
}
