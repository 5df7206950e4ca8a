package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GetTelemetrySubscriptions and PushTelemetry v0 through the broker's
// dispatch: the subscription answered and Kafka's errors for bad pushes
// (the decoding and interval rules are tested in internal/telemetry).
func TestTelemetryKeys(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.ClientMetrics = []string{"org.apache.kafka."} })
	g := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	resp := serve(t, b, g).(*kmsg.GetTelemetrySubscriptionsResponse)
	if resp.ErrorCode != 0 || resp.ClientInstanceID == ([16]byte{}) || len(resp.RequestedMetrics) != 1 || resp.RequestedMetrics[0] != "org.apache.kafka." ||
		resp.PushIntervalMillis != 30000 || resp.TelemetryMaxBytes != 1<<20 || !resp.DeltaTemporality || len(resp.AcceptedCompressionTypes) != 4 {
		t.Fatalf("subscription %+v", resp)
	}
	again := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	again.ClientInstanceID = resp.ClientInstanceID
	if c := serve(t, b, again).(*kmsg.GetTelemetrySubscriptionsResponse).ErrorCode; c != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("second get at once: code %d", c)
	}
	push := func(mod func(p *kmsg.PushTelemetryRequest)) int16 {
		p := kmsg.NewPtrPushTelemetryRequest()
		p.ClientInstanceID, p.SubscriptionID = resp.ClientInstanceID, resp.SubscriptionID
		mod(p)
		return serve(t, b, p).(*kmsg.PushTelemetryResponse).ErrorCode
	}
	for _, c := range []struct {
		name string
		mod  func(p *kmsg.PushTelemetryRequest)
		want *kerr.Error
	}{
		{"zero instance", func(p *kmsg.PushTelemetryRequest) { p.ClientInstanceID = [16]byte{} }, kerr.InvalidRequest},
		{"stale subscription", func(p *kmsg.PushTelemetryRequest) { p.SubscriptionID++ }, kerr.UnknownSubscriptionID},
		{"garbage payload", func(p *kmsg.PushTelemetryRequest) { p.Metrics = []byte{0x0b} }, kerr.InvalidRecord},
	} {
		if got := push(c.mod); got != c.want.Code {
			t.Errorf("%s: code %d, want %s", c.name, got, c.want.Message)
		}
	}
	if got := push(func(p *kmsg.PushTelemetryRequest) {}); got != kerr.ThrottlingQuotaExceeded.Code {
		t.Errorf("push right after a push: code %d", got)
	}
	if got := push(func(p *kmsg.PushTelemetryRequest) { p.Terminating = true }); got != 0 {
		t.Errorf("terminating: code %d", got)
	}
	if got := push(func(p *kmsg.PushTelemetryRequest) { p.Terminating = true }); got != kerr.InvalidRequest.Code {
		t.Errorf("second terminating: code %d", got)
	}
}
