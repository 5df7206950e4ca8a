package broker

// PushTelemetry v0: see 71_get_telemetry_subscriptions.go.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handlePushTelemetry(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.PushTelemetryRequest)
	resp := r.ResponseKind().(*kmsg.PushTelemetryResponse)
	resp.Version = req.Version
	err := b.telemetry.Push(r.ClientInstanceID, r.SubscriptionID, r.Terminating, r.CompressionType, r.Metrics, telemetryClient(req), time.Now())
	if ke, ok := err.(*kerr.Error); ok {
		resp.ErrorCode = ke.Code
		switch ke {
		case kerr.InvalidRecord, kerr.InvalidRequest, kerr.UnsupportedCompressionType:
			b.logBad(req, "client metrics push refused", "err", err, "bytes", len(r.Metrics))
		default:
			b.logRoutine(req, "client metrics push refused", "err", err)
		}
	}
	return protocol.Reply{Response: resp}
}
