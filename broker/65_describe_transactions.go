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
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
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
		ts := b.txns.get(id)
		if ts == nil {
			s.ErrorCode = kerr.TransactionalIDNotFound.Code
			resp.TransactionStates = append(resp.TransactionStates, s)
			continue
		}
		ts.mu.Lock()
		if ts.pid < 0 || ts.state == txnDead {
			s.ErrorCode = kerr.TransactionalIDNotFound.Code
		} else {
			s.State = ts.state.String()
			s.TimeoutMillis = int32(ts.timeout.Milliseconds())
			s.ProducerID, s.ProducerEpoch = ts.pid, ts.epoch
			if ts.state == txnOngoing || ts.state == txnPrepareCommit || ts.state == txnPrepareAbort {
				s.StartTimestamp = ts.start.UnixMilli()
			}
			byTopic := map[string][]int32{}
			for k := range ts.parts {
				if name, ok := b.TopicName(k.id); ok && az.topicVisible(opDescribe, name) {
					byTopic[name] = append(byTopic[name], k.part)
				}
			}
			names := make([]string, 0, len(byTopic))
			for n := range byTopic {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic, t.Partitions = n, byTopic[n]
				sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i] < t.Partitions[j] })
				s.Topics = append(s.Topics, t)
			}
		}
		ts.mu.Unlock()
		resp.TransactionStates = append(resp.TransactionStates, s)
	}
	return protocol.Reply{Response: resp}
}
