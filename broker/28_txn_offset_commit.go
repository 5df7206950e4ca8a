package broker

// TxnOffsetCommit v0–v6.
//
// Stages a consumer group's offsets in the producer's open transaction
// (durably, in the transaction log). They are written to the group store
// when the transaction commits and dropped when it aborts; until then
// OffsetFetch returns the previous offsets, or UNSTABLE_OFFSET_COMMIT when
// it asks for stable offsets (require_stable). The committer is checked as
// OffsetCommit checks it (v3+ carry the member ID and generation):
// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, so a consumer
// that lost its partitions in a rebalance cannot commit for them. Producer
// errors as AddPartitionsToTxn (PRODUCER_FENCED from v3). The group must
// have been added with AddOffsetsToTxn (INVALID_TXN_STATE otherwise),
// except under KIP-890 (v5+), where the commit adds it.
//
// v6 names topics by ID (the same change as OffsetCommit v10): every
// partition of an ID no topic has is UNKNOWN_TOPIC_ID.
//
// A transaction log that cannot be written (a full disk) answers
// NOT_COORDINATOR, as Kafka's transaction coordinator answers a failed
// append: the client looks it up again and retries.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
	"github.com/minikafka/minikafka/protocol"
)

func (b *Broker) handleTxnOffsetCommit(_ context.Context, req *protocol.Request) protocol.Reply {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	resp.Version = req.Version

	code := b.groups.ValidateTxnCommit(r, req.Version)
	var ts *txnState
	if code == 0 {
		ts, code = b.txns.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 28, req.Version)
	}
	// What the transaction held before: a write that fails (a full disk)
	// leaves it so, as Kafka drops the pending offsets of a failed append.
	type staged struct {
		tp  tpName
		o   groupstore.Offset
		had bool
	}
	var (
		prev                   []staged
		hadGroup               bool
		prevState              txnStateKind
		prevStart, prevUpdated time.Time
	)
	if ts != nil {
		defer ts.mu.Unlock()
		hadGroup, prevState, prevStart, prevUpdated = ts.groups[r.Group], ts.state, ts.start, ts.updated
		if !ts.groups[r.Group] || ts.state != txnOngoing {
			if req.Version < 5 || (ts.state != txnOngoing && ts.state != txnEmpty && ts.state != txnCompleteCommit && ts.state != txnCompleteAbort) {
				code = kerr.InvalidTxnState.Code
			} else {
				ts.groups[r.Group] = true
				if ts.state != txnOngoing {
					ts.state, ts.start = txnOngoing, b.now()
				}
			}
		}
	}
	for _, rt := range r.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		ct := b.groups.CommitTopic(req.Version >= 6, rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = ct.PartitionError(code, rp.Partition, rp.Metadata)
			if sp.ErrorCode == 0 {
				o := groupstore.Offset{Offset: rp.Offset, LeaderEpoch: -1, ExpireMs: -1}
				if req.Version >= 2 {
					o.LeaderEpoch = rp.LeaderEpoch
				}
				if rp.Metadata != nil {
					o.Metadata = *rp.Metadata
				}
				if ts.offsets[r.Group] == nil {
					ts.offsets[r.Group] = map[tpName]groupstore.Offset{}
				}
				tp := tpName{ct.Name, rp.Partition}
				old, had := ts.offsets[r.Group][tp]
				prev = append(prev, staged{tp, old, had})
				ts.offsets[r.Group][tp] = o
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if ts != nil && code == 0 {
		b.txns.setPending(ts, true)
		ts.updated = b.now()
		if err := b.txns.persist(ts, true); err != nil {
			b.log.Error("txn offset commit", "transactional_id", r.TransactionalID, "err", err)
			b.txns.setPending(ts, false)
			for i := len(prev) - 1; i >= 0; i-- {
				if p := prev[i]; p.had {
					ts.offsets[r.Group][p.tp] = p.o
				} else {
					delete(ts.offsets[r.Group], p.tp)
				}
			}
			if len(ts.offsets[r.Group]) == 0 {
				delete(ts.offsets, r.Group)
			}
			if !hadGroup {
				delete(ts.groups, r.Group)
			}
			ts.state, ts.start, ts.updated = prevState, prevStart, prevUpdated
			b.txns.setPending(ts, true)
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					if resp.Topics[i].Partitions[j].ErrorCode == 0 {
						resp.Topics[i].Partitions[j].ErrorCode = coordinatorErrCode(err)
					}
				}
			}
		}
	}
	if code != 0 {
		b.logBad(req, "txn offset commit", "transactional_id", r.TransactionalID, "group", r.Group, "error", kerr.ErrorForCode(code))
	}
	return protocol.Reply{Response: resp}
}
