package broker

// DescribeTransactions v0.
//
// The state of each named transactional ID: state name (Kafka's: Empty,
// Ongoing, PrepareCommit, ...), timeout, start time of the open
// transaction (-1 if none), producer ID and epoch, and its partitions.
// Unknown IDs: TRANSACTIONAL_ID_NOT_FOUND. With the authorizer on an ID
// needs DESCRIBE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and partitions of
// topics the principal may not DESCRIBE are left out.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleDescribeTransactions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.DescribeTransactionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	resp.Version = req.Version
	az := b.authorizer(req)
	for _, id := range r.TransactionalIDs {
		s := kmsg.NewDescribeTransactionsResponseTransactionState()
		s.TransactionalID = id
		s.StartTimestamp, s.ProducerID, s.ProducerEpoch = -1, -1, -1
		if !az.txnID(opDescribe, id) {
			s.ErrorCode = errTxnIDAuth
			resp.TransactionStates = append(resp.TransactionStates, s)
			continue
		}
		b.txns.DescribeTransaction(&s, func(name string) bool { return az.topicVisible(opDescribe, name) })
		resp.TransactionStates = append(resp.TransactionStates, s)
	}
	return protocol.Reply{Response: resp}
}
