package broker

// GetTelemetrySubscriptions v0 and PushTelemetry v0 (KIP-714): clients
// ask what metrics of their own the broker wants and push them, as
// OpenTelemetry protobuf, once per interval. Kafka hands them to a
// metrics reporter plugin; here they are kept per client instance
// (broker/internal/telemetry) and shown on /metrics, so the broker is
// one place to see every client's view of itself.
//
// Kafka asks for nothing until an operator creates a client-metrics
// subscription (a CLIENT_METRICS config resource, internal/configs);
// minikafka gives every client no such subscription matches
// Config.ClientMetrics (all metrics every 30 s unless told otherwise,
// `-client-metrics`), because a test or edge broker is where people look
// at their clients.
// The checks follow Kafka's ClientMetricsManager: a Get within the push
// interval is THROTTLING_QUOTA_EXCEEDED unless the last push was refused
// for its subscription or compression; a push is INVALID_REQUEST for the
// zero instance ID or after the terminating push, UNKNOWN_SUBSCRIPTION_ID
// for a stale subscription, THROTTLING_QUOTA_EXCEEDED sooner than the
// interval after the previous push, TELEMETRY_TOO_LARGE past
// telemetry.max.bytes, UNSUPPORTED_COMPRESSION_TYPE for a codec not
// offered and INVALID_RECORD when the payload does not decode.

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/telemetry"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleGetTelemetrySubscriptions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := r.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	resp.Version = req.Version
	sub, err := b.telemetry.Subscribe(r.ClientInstanceID, telemetryClient(req), time.Now())
	if err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			resp.ErrorCode = ke.Code
		}
		resp.ClientInstanceID = r.ClientInstanceID
		b.logRoutine(req, "telemetry subscription refused", "err", err)
		return protocol.Reply{Response: resp}
	}
	resp.ClientInstanceID = sub.ClientInstanceID
	resp.SubscriptionID = sub.ID
	resp.AcceptedCompressionTypes = telemetry.Accepted
	resp.PushIntervalMillis = int32(sub.Interval.Milliseconds())
	resp.TelemetryMaxBytes = sub.MaxBytes
	resp.DeltaTemporality = true // as Kafka asks: sums arrive as increments
	resp.RequestedMetrics = sub.Metrics
	return protocol.Reply{Response: resp}
}

func clientIDOf(req *protocol.Request) string {
	if req.ClientID == nil {
		return ""
	}
	return *req.ClientID
}

// telemetryClient is what a client-metrics subscription's match patterns
// are tested against.
func telemetryClient(req *protocol.Request) telemetry.Client {
	c := telemetry.Client{ID: clientIDOf(req)}
	if req.Conn == nil {
		return c
	}
	c.Software = telemetry.Software{Name: req.Conn.ClientSoftwareName, Version: req.Conn.ClientSoftwareVersion}
	if req.Conn.Remote != nil {
		if host, port, err := net.SplitHostPort(req.Conn.Remote.String()); err == nil {
			c.SourceAddr, c.SourcePort = host, port
		}
	}
	return c
}

// ClientMetricsInstance is one client instance's pushed metrics.
type ClientMetricsInstance = telemetry.InstanceStats

// ClientMetrics returns every client instance's latest pushed metrics,
// and how many pushes ended in each result ("ok" or the error's name).
func (b *Broker) ClientMetrics() ([]ClientMetricsInstance, map[string]uint64) {
	return b.telemetry.Snapshot(time.Now())
}
