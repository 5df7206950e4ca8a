package broker

// FindCoordinator v0–v6.
//
// Behavior: this broker coordinates every group (key type 0) and every
// transactional id (key type 1). Other key types get INVALID_REQUEST. v4+
// batches keys (CoordinatorKeys) and answers one coordinator per key. The
// first group lookup creates __consumer_offsets, as in Kafka; if that
// fails the answer is COORDINATOR_NOT_AVAILABLE, which clients retry.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleFindCoordinator(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	host, port := b.AdvertisedFor(req)
	code := int16(0)
	var msg *string
	if r.CoordinatorType != 0 && r.CoordinatorType != 1 {
		code = kerr.InvalidRequest.Code
		s := "unsupported coordinator key type"
		msg = &s
	}
	if code == 0 && r.CoordinatorType == 0 {
		// First group use: Kafka creates __consumer_offsets now.
		if err := b.ensureOffsetsTopic(); err != nil {
			b.log.Error("creating internal topic", "topic", offsetsTopic, "err", err)
			code = kerr.CoordinatorNotAvailable.Code
		}
	}
	node := b.NodeID()
	if code != 0 {
		node, host, port = -1, "", -1
	}
	if r.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage = code, msg
		resp.NodeID, resp.Host, resp.Port = node, host, port
		return protocol.Reply{Response: resp}
	}
	for _, k := range r.CoordinatorKeys {
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.NodeID, rc.Host, rc.Port = k, node, host, port
		rc.ErrorCode, rc.ErrorMessage = code, msg
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return protocol.Reply{Response: resp}
}
