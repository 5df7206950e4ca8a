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
	"regexp"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/protocol"
)

var txnStateNames = map[string]bool{"Empty": true, "Ongoing": true, "PrepareCommit": true, "PrepareAbort": true,
	"CompleteCommit": true, "CompleteAbort": true, "Dead": true, "PrepareEpochFence": true}

func (b *Broker) handleListTransactions(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.ListTransactionsRequest)
	resp := r.ResponseKind().(*kmsg.ListTransactionsResponse)
	resp.Version = req.Version
	var re *regexp.Regexp
	if req.Version >= 2 && r.TransactionalIDPattern != nil && *r.TransactionalIDPattern != "" {
		var err error
		if re, err = regexp.Compile(*r.TransactionalIDPattern); err != nil {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return protocol.Reply{Response: resp}
		}
	}
	states := map[string]bool{}
	for _, s := range r.StateFilters {
		if !txnStateNames[s] {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
		}
		states[s] = true
	}
	pids := map[int64]bool{}
	for _, p := range r.ProducerIDFilters {
		pids[p] = true
	}
	now := b.now()
	az := b.authorizer(req)
	c := b.txns
	c.mu.Lock()
	all := make([]*txnState, 0, len(c.txns))
	for _, ts := range c.txns {
		all = append(all, ts)
	}
	c.mu.Unlock()
	for _, ts := range all {
		ts.mu.Lock()
		id, pid, state, start := ts.id, ts.pid, ts.state, ts.start
		ts.mu.Unlock()
		switch {
		case pid < 0 || state == txnDead,
			len(states) > 0 && !states[state.String()],
			len(pids) > 0 && !pids[pid],
			re != nil && !re.MatchString(id),
			!az.visible(opDescribe, kmsg.ACLResourceTypeTransactionalId, id),
			req.Version >= 1 && r.DurationFilterMillis >= 0 && (state != txnOngoing || now.Sub(start).Milliseconds() < r.DurationFilterMillis):
			continue
		}
		s := kmsg.NewListTransactionsResponseTransactionState()
		s.TransactionalID, s.ProducerID, s.TransactionState = id, pid, state.String()
		resp.TransactionStates = append(resp.TransactionStates, s)
	}
	sort.Slice(resp.TransactionStates, func(i, j int) bool {
		return resp.TransactionStates[i].TransactionalID < resp.TransactionStates[j].TransactionalID
	})
	return protocol.Reply{Response: resp}
}
