package broker

// FindCoordinator v0–v6.
//
// Behavior: a group (key type 0) or transactional id (key type 1) is
// coordinated by the node of its coordinator slot (cluster.go; the one
// node when there is one). Other key types get INVALID_REQUEST. v4+
// batches keys (CoordinatorKeys) and answers one coordinator per key. The
// first group lookup creates __consumer_offsets, as in Kafka; if that
// fails the answer is COORDINATOR_NOT_AVAILABLE, which clients retry.
// With the authorizer on a key needs DESCRIBE on its group or
// transactional ID (GROUP_ or TRANSACTIONAL_ID_AUTHORIZATION_FAILED).

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
	// coordinatorOf is key's node and its address on req's listener.
	coordinatorOf := func(key string) (int32, string, int32, int16) {
		if code != 0 {
			return -1, "", -1, code
		}
		if !b.cl.Multi() {
			return b.NodeID(), host, port, 0
		}
		kind := coordGroup
		if r.CoordinatorType == 1 {
			kind = coordTxn
		}
		node := b.cl.Coordinator(kind, key)
		h, p, ok := b.addrFor(req, node)
		if !ok || !b.cl.IsUp(node) {
			return -1, "", -1, kerr.CoordinatorNotAvailable.Code
		}
		return node, h, p, 0
	}
	az := b.authorizer(req)
	// keyAuthz is Kafka's check of the key: DESCRIBE on the group or
	// the transactional ID.
	keyAuthz := func(key string) int16 {
		switch {
		case code != 0:
		case r.CoordinatorType == 0 && !az.group(opDescribe, key):
			return errGroupAuth
		case r.CoordinatorType == 1 && !az.txnID(opDescribe, key):
			return errTxnIDAuth
		}
		return 0
	}
	if r.Version < 4 {
		resp.ErrorMessage = msg
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = coordinatorOf(r.CoordinatorKey)
		if c := keyAuthz(r.CoordinatorKey); c != 0 {
			resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c, -1, "", -1
		}
		return protocol.Reply{Response: resp}
	}
	for _, k := range r.CoordinatorKeys {
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.ErrorMessage = k, msg
		rc.NodeID, rc.Host, rc.Port, rc.ErrorCode = coordinatorOf(k)
		if c := keyAuthz(k); c != 0 {
			rc.ErrorCode, rc.NodeID, rc.Host, rc.Port = c, -1, "", -1
		}
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return protocol.Reply{Response: resp}
}
