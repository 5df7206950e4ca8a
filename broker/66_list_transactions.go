package broker

// ListTransactions v0–v2.
//
// Every transactional ID with its producer ID and state, filtered by state
// names (unknown names are echoed in UnknownStateFilters), producer IDs,
// v1+ minimum running time (DurationFilterMillis: open transactions older
// than that) and v2+ a transactional ID regular expression (INVALID_REQUEST
// if it does not compile). With the authorizer on, only the IDs the
// principal may DESCRIBE are listed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleListTransactions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListTransactionsRequest)
	resp := r.ResponseKind().(*kmsg.ListTransactionsResponse)
	resp.Version = req.Version
	az := b.authorizer(req)
	node, routed := b.reqNode(req)
	b.txns.ListTransactions(r, req.Version, resp, func(id string) bool {
		// Each node lists the transactional IDs it coordinates.
		if routed && b.cl.Coordinator(coordTxn, id) != node {
			return false
		}
		return az.visible(opDescribe, kmsg.ACLResourceTypeTransactionalId, id)
	})
	return protocol.Reply{Response: resp}
}
