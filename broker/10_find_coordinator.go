package broker

// FindCoordinator v0–v6.
//
// Behavior: a group (key type 0) or transactional id (key type 1) is
// coordinated by the node of its coordinator slot (cluster.go; the one
// node when there is one); groups.FindCoordinator checks the key type and
// shapes the answer (one key before v4, a batch from v4). The first group
// lookup creates __consumer_offsets, as in Kafka; if that fails the answer
// is COORDINATOR_NOT_AVAILABLE, which clients retry. With the authorizer on
// a key needs DESCRIBE on its group or transactional ID (GROUP_ or
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/groups"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleFindCoordinator(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	host, port := b.AdvertisedFor(req)
	var code int16
	if r.CoordinatorType == 0 {
		// First group use: Kafka creates __consumer_offsets now.
		if err := b.ensureOffsetsTopic(); err != nil {
			b.log.Error("creating internal topic", "topic", offsetsTopic, "err", err)
			code = kerr.CoordinatorNotAvailable.Code
		}
	}
	az := b.authorizer(req)
	// locate checks the key as Kafka does (DESCRIBE on the group or the
	// transactional ID) and names its node on req's listener.
	locate := func(key string) groups.Located {
		switch {
		case code != 0:
			return groups.Located{Code: code}
		case r.CoordinatorType == 0 && !az.group(opDescribe, key):
			return groups.Located{Code: errGroupAuth}
		case r.CoordinatorType == 1 && !az.txnID(opDescribe, key):
			return groups.Located{Code: errTxnIDAuth}
		case !b.cl.Multi():
			return groups.Located{Node: b.NodeID(), Host: host, Port: port}
		}
		kind := coordGroup
		if r.CoordinatorType == 1 {
			kind = coordTxn
		}
		node := b.cl.Coordinator(kind, key)
		h, p, ok := b.addrFor(req, node)
		if !ok || !b.cl.IsUp(node) {
			return groups.Located{Code: kerr.CoordinatorNotAvailable.Code}
		}
		return groups.Located{Node: node, Host: h, Port: p}
	}
	return protocol.Reply{Response: groups.FindCoordinator(r, locate)}
}
