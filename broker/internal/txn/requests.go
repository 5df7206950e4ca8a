package txn

// The transactional requests. The broker's NN_*.go files document each
// API's behaviour and hand the decoded requests over.

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/groupstore"
)

// fencedCode is the error for an old epoch, as each version's clients
// expect it (KIP-588 added PRODUCER_FENCED).
func fencedCode(key, version int16) int16 {
	newEnough := map[int16]int16{22: 4, 24: 2, 25: 2, 26: 2, 28: 3}[key]
	if version >= newEnough {
		return kerr.ProducerFenced.Code
	}
	return kerr.InvalidProducerEpoch.Code
}

// checkProducer validates a request's producer ID and epoch against ts. The
// caller holds ts.mu.
func checkProducer(ts *txnState, pid int64, epoch int16, key, version int16) int16 {
	switch {
	case ts.pid != pid:
		return kerr.InvalidProducerIDMapping.Code
	case epoch != ts.epoch:
		// Older or newer alike, as Kafka's coordinator compares them.
		return fencedCode(key, version)
	}
	return 0
}

// lookup finds a transactional ID and checks the request's producer. On
// success it returns with ts.mu held.
func (c *Coordinator) lookup(id string, pid int64, epoch int16, key, version int16) (*txnState, int16) {
	ts := c.get(id)
	if ts == nil {
		return nil, kerr.InvalidProducerIDMapping.Code
	}
	ts.mu.Lock()
	if ts.pid < 0 || ts.state == Dead {
		ts.mu.Unlock()
		return nil, kerr.InvalidProducerIDMapping.Code
	}
	if code := checkProducer(ts, pid, epoch, key, version); code != 0 {
		ts.mu.Unlock()
		return nil, code
	}
	if ts.state == PrepareCommit || ts.state == PrepareAbort {
		if err := c.complete(ts, ts.state == PrepareCommit, true); err != nil {
			ts.mu.Unlock()
			return nil, kerr.ConcurrentTransactions.Code
		}
	}
	return ts, 0
}

// BeginProduce checks a transactional batch of producer pid at epoch for
// p against its transaction and, for Produce v12+ (KIP-890, with
// transaction.version 2 finalized; UNSUPPORTED_VERSION without), adds p to
// it implicitly. A partition not in the transaction is what Kafka's
// verification answers: TRANSACTION_ABORTABLE from v11, INVALID_TXN_STATE
// before. On success it returns with the transaction locked (call the
// returned func to release it after the append) so that an EndTxn cannot
// slip between check and append.
func (c *Coordinator) BeginProduce(p Partition, pid int64, epoch int16, version int16) (func(), int16, error) {
	if version >= 12 && c.TxnVersion() < 2 {
		return nil, kerr.UnsupportedVersion.Code, fmt.Errorf("transactional produce v%d needs transaction.version 2, finalized at %d", version, c.TxnVersion())
	}
	ts := c.getPID(pid)
	if ts == nil {
		return nil, kerr.InvalidProducerIDMapping.Code, fmt.Errorf("no transaction for producer %d", pid)
	}
	ts.mu.Lock()
	if code := checkProducer(ts, pid, epoch, 0, version); code != 0 {
		ts.mu.Unlock()
		if code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		// Kafka's verification sends no message with these.
		return nil, code, nil
	}
	_, in := ts.parts[tpKey{p.TopicID(), p.Index()}]
	if !in || ts.state != Ongoing {
		implicit := version >= 12 && (ts.state == Ongoing || ts.state == Empty || ts.state == CompleteCommit || ts.state == CompleteAbort)
		if !implicit {
			ts.mu.Unlock()
			if version >= 11 {
				// Kafka sends no message with this one.
				return nil, kerr.TransactionAbortable.Code, nil
			}
			return nil, kerr.InvalidTxnState.Code, errors.New("Partition was not added to the transaction")
		}
		if err := c.addPartitions(ts, []Partition{p}); err != nil {
			ts.mu.Unlock()
			return nil, kerr.KafkaStorageError.Code, err
		}
	}
	return ts.mu.Unlock, 0, nil
}

// InitProducerID is InitProducerId for a transactional ID: a new ID starts
// at epoch 0; an existing one has its open transaction aborted and its
// epoch bumped, fencing the previous producer (a new producer ID once the
// epoch is exhausted). A storage failure is KAFKA_STORAGE_ERROR with err
// set; the broker answers it as Kafka does.
func (c *Coordinator) InitProducerID(id string, timeoutMs int32, pid int64, epoch int16, version int16) (int64, int16, int16, error) {
	if timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > maxTimeout {
		return -1, -1, kerr.InvalidTransactionTimeout.Code, fmt.Errorf("transaction timeout %d ms outside (0, %d]", timeoutMs, maxTimeout.Milliseconds())
	}
	timeout := time.Duration(timeoutMs) * time.Millisecond
	c.mu.Lock()
	ts := c.txns[id]
	if ts == nil {
		ts = &txnState{id: id, pid: -1, lastEpoch: -1, prevPID: -1, parts: map[tpKey]int64{}, groups: map[string]bool{}, offsets: map[string]map[tpName]groupstore.Offset{}}
		c.txns[id] = ts
	}
	c.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := c.now()
	if ts.pid < 0 {
		newPID, err := c.cfg.ProducerIDs.Allocate()
		if err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		ts.pid, ts.epoch, ts.state, ts.timeout, ts.updated = newPID, 0, Empty, timeout, now
		if err := c.persist(ts, true); err != nil {
			ts.pid = -1
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		c.mu.Lock()
		c.byPID[ts.pid] = ts
		c.mu.Unlock()
		return ts.pid, ts.epoch, 0, nil
	}
	if pid >= 0 {
		// KIP-360: the producer says who it was; only the current
		// producer (or a retry of the last bump) may re-initialize.
		if pid != ts.pid || (epoch != ts.epoch && epoch != ts.lastEpoch) {
			return -1, -1, fencedCode(22, version), fmt.Errorf("producer %d epoch %d is not the current producer %d epoch %d", pid, epoch, ts.pid, ts.epoch)
		}
	}
	switch ts.state {
	case PrepareCommit, PrepareAbort:
		// A completion failed half-way; finish it first.
		if err := c.complete(ts, ts.state == PrepareCommit, true); err != nil {
			return -1, -1, kerr.ConcurrentTransactions.Code, err
		}
	case Ongoing:
		// As Kafka: the open transaction's producer is fenced first (its
		// abort markers carry the bumped epoch), then the new producer
		// gets an epoch of its own. Kafka answers the first step with
		// CONCURRENT_TRANSACTIONS and bumps again on the retry; here both
		// happen in this call.
		c.bump(ts)
		if err := c.endTxn(ts, false); err != nil {
			return -1, -1, kerr.ConcurrentTransactions.Code, err
		}
		if err := c.bumpOrRenew(ts); err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		if pid < 0 {
			ts.lastEpoch = -1
		}
		ts.timeout, ts.state, ts.updated = timeout, Empty, c.now()
		if err := c.persist(ts, true); err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		return ts.pid, ts.epoch, 0, nil
	}
	if pid >= 0 && epoch != ts.epoch && epoch == ts.lastEpoch {
		// A retry of the call that made the last bump (KIP-360): the
		// current epoch, not bumped again, as Kafka answers it.
		ts.timeout = timeout
		if err := c.persist(ts, true); err != nil {
			return -1, -1, kerr.KafkaStorageError.Code, err
		}
		return ts.pid, ts.epoch, 0, nil
	}
	if err := c.bumpOrRenew(ts); err != nil {
		return -1, -1, kerr.KafkaStorageError.Code, err
	}
	if pid < 0 {
		ts.lastEpoch = -1 // a new producer: nothing before it retries
	}
	ts.timeout, ts.state, ts.updated = timeout, Empty, now
	if err := c.persist(ts, true); err != nil {
		return -1, -1, kerr.KafkaStorageError.Code, err
	}
	return ts.pid, ts.epoch, 0, nil
}

// AddPartitionsToTxn adds the request's partitions to the producer's
// transaction and fills resp; it returns the request-wide error code (0
// also when a partition was unknown: those are per partition).
func (c *Coordinator) AddPartitionsToTxn(r *kmsg.AddPartitionsToTxnRequest, version int16, resp *kmsg.AddPartitionsToTxnResponse) int16 {
	var ps []Partition
	bad := false
	for _, rt := range r.Topics {
		for _, i := range rt.Partitions {
			p := c.txnPartition(rt.Topic, i)
			if p == nil {
				bad = true
				continue
			}
			ps = append(ps, p)
		}
	}
	code := int16(0)
	if !bad {
		ts, cd := c.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 24, version)
		code = cd
		if ts != nil {
			if err := c.addPartitions(ts, ps); err != nil {
				code = coordinatorErrCode(err)
				c.slog.Error("add partitions to txn", "transactional_id", r.TransactionalID, "err", err)
			}
			ts.mu.Unlock()
		}
	}
	c.answerEach(r, resp, bad, func(Partition) int16 { return code })
	return code
}

// answerEach fills resp with an answer for each partition of r:
// UNKNOWN_TOPIC_OR_PARTITION for one no transaction may write, and when
// any is (bad) OPERATION_NOT_ATTEMPTED for the others; else code(p).
func (c *Coordinator) answerEach(r *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse, bad bool, code func(Partition) int16) {
	for _, rt := range r.Topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		for _, i := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition = i
			switch p := c.txnPartition(rt.Topic, i); {
			case p == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case bad:
				sp.ErrorCode = kerr.OperationNotAttempted.Code
			default:
				sp.ErrorCode = code(p)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
}

// AddPartitionsToTxns is AddPartitionsToTxn v4+ (KIP-890), the form one
// broker sends another's transaction coordinator for the transactions of
// a produce: each transaction is added to as v3 adds, or with
// verify_only checked, as Kafka's coordinator answers: its producer
// (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED for any other epoch), then
// each partition NONE when it is in the open transaction and
// TRANSACTION_ABORTABLE when not. An unknown partition makes the others
// of its transaction OPERATION_NOT_ATTEMPTED, in both forms.
func (c *Coordinator) AddPartitionsToTxns(r *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse) {
	for _, tr := range r.Transactions {
		sub := kmsg.NewPtrAddPartitionsToTxnRequest()
		sub.TransactionalID, sub.ProducerID, sub.ProducerEpoch = tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch
		for _, t := range tr.Topics {
			sub.Topics = append(sub.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		var one kmsg.AddPartitionsToTxnResponse
		if tr.VerifyOnly {
			c.verifyPartitions(sub, &one)
		} else {
			c.AddPartitionsToTxn(sub, 3, &one) // v3's errors: PRODUCER_FENCED
		}
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = tr.TransactionalID
		for _, t := range one.Topics {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				tp.Partition, tp.ErrorCode = p.Partition, p.ErrorCode
				tt.Partitions = append(tt.Partitions, tp)
			}
			rt.Topics = append(rt.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
}

// verifyPartitions answers a verify_only transaction of
// AddPartitionsToTxns in r's v3 form.
func (c *Coordinator) verifyPartitions(r *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse) {
	bad := false
	for _, rt := range r.Topics {
		for _, i := range rt.Partitions {
			bad = bad || c.txnPartition(rt.Topic, i) == nil
		}
	}
	code := int16(0)
	in := map[tpKey]bool{}
	if ts := c.get(r.TransactionalID); ts == nil {
		code = kerr.InvalidProducerIDMapping.Code
	} else {
		ts.mu.Lock()
		switch {
		case ts.pid < 0 || ts.state == Dead || ts.pid != r.ProducerID:
			code = kerr.InvalidProducerIDMapping.Code
		case ts.epoch != r.ProducerEpoch:
			code = kerr.ProducerFenced.Code
		case ts.state == Ongoing:
			for k := range ts.parts {
				in[k] = true
			}
		}
		ts.mu.Unlock()
	}
	c.answerEach(r, resp, bad, func(p Partition) int16 {
		if code == 0 && !in[tpKey{p.TopicID(), p.Index()}] {
			return kerr.TransactionAbortable.Code
		}
		return code
	})
}

// txnPartition is a partition a transaction may write: it exists and its
// topic is not internal.
func (c *Coordinator) txnPartition(topic string, i int32) Partition {
	if c.parts.Internal(topic) {
		return nil
	}
	return c.parts.ByName(topic, i)
}

// coordinatorErrCode is the answer to a transaction log or partition that
// cannot be written (a full disk): NOT_COORDINATOR, as Kafka's transaction
// coordinator answers a failed append; clients look it up and retry.
func coordinatorErrCode(err error) int16 {
	if err == nil {
		return 0
	}
	return kerr.NotCoordinator.Code
}

// AddOffsetsToTxn makes group's offsets part of the producer's
// transaction, starting it if none is open.
func (c *Coordinator) AddOffsetsToTxn(r *kmsg.AddOffsetsToTxnRequest, version int16) int16 {
	ts, code := c.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 25, version)
	if ts == nil {
		return code
	}
	defer ts.mu.Unlock()
	if ts.groups[r.Group] && ts.state == Ongoing {
		return code
	}
	had, state, start, updated := ts.groups[r.Group], ts.state, ts.start, ts.updated
	ts.groups[r.Group] = true
	if ts.state != Ongoing {
		ts.state, ts.start = Ongoing, c.now()
	}
	ts.updated = c.now()
	if err := c.persist(ts, true); err != nil {
		// Not written (a full disk): as if never asked, so that the
		// retry writes it.
		if !had {
			delete(ts.groups, r.Group)
		}
		ts.state, ts.start, ts.updated = state, start, updated
		c.slog.Error("add offsets to txn", "transactional_id", r.TransactionalID, "err", err)
		return coordinatorErrCode(err)
	}
	return code
}

// EndTxn commits or aborts the producer's transaction and sets resp's
// producer ID and epoch on success; it returns the error code. v5
// (KIP-890, transaction.version 2; UNSUPPORTED_VERSION without) bumps the
// epoch at every end, its markers carry the bumped epoch, and when the
// epochs run out the answer names a new producer ID at epoch 0. Older
// versions keep the epoch.
func (c *Coordinator) EndTxn(r *kmsg.EndTxnRequest, version int16, resp *kmsg.EndTxnResponse) int16 {
	if version >= 5 && c.TxnVersion() < 2 {
		return kerr.UnsupportedVersion.Code
	}
	ts := c.get(r.TransactionalID)
	if ts == nil {
		return kerr.InvalidProducerIDMapping.Code
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	answer := func() int16 {
		resp.ProducerID, resp.ProducerEpoch = ts.pid, ts.epoch
		return 0
	}
	complete := ts.state == CompleteCommit || ts.state == CompleteAbort
	done := (r.Commit && ts.state == CompleteCommit) || (!r.Commit && ts.state == CompleteAbort)
	if version >= 5 {
		// A retry of the v5 EndTxn that ended the last transaction names
		// the epoch before its bump, or the producer ID it replaced; so
		// does the abort of a transaction the timeout aborted (bumping
		// once), as Kafka takes it. A producer a new one fenced is two
		// epochs behind (InitProducerID).
		retry := complete && ((ts.pid == r.ProducerID && r.ProducerEpoch+1 == ts.epoch) ||
			(ts.prevPID >= 0 && ts.prevPID == r.ProducerID && r.ProducerEpoch == maxEpoch-1 && ts.epoch == 0))
		if retry {
			if done {
				return answer()
			}
			return kerr.InvalidTxnState.Code
		}
	}
	if ts.pid != r.ProducerID {
		return kerr.InvalidProducerIDMapping.Code
	}
	if version < 5 && done && (r.ProducerEpoch == ts.epoch || (r.ProducerEpoch == ts.lastEpoch && !ts.endBumped)) {
		// A retry of the EndTxn that completed this (or, for an
		// abort, the broker's timeout abort).
		return answer()
	}
	prepared := (r.Commit && ts.state == PrepareCommit) || (!r.Commit && ts.state == PrepareAbort)
	if prepared && (r.ProducerEpoch == ts.epoch || r.ProducerEpoch == ts.lastEpoch) {
		// A retry of the EndTxn whose Prepare is durable but whose
		// markers were not all written: write the missing ones.
		if err := c.complete(ts, r.Commit, true); err != nil {
			c.slog.Error("end txn: completing", "transactional_id", ts.id, "err", err)
			return coordinatorErrCode(err)
		}
		return answer()
	}
	if code := checkProducer(ts, r.ProducerID, r.ProducerEpoch, 26, version); code != 0 {
		return code
	}
	switch ts.state {
	case PrepareCommit, PrepareAbort:
		if err := c.complete(ts, ts.state == PrepareCommit, true); err != nil {
			c.slog.Error("end txn: completing", "transactional_id", ts.id, "err", err)
			return kerr.ConcurrentTransactions.Code
		}
		return kerr.InvalidTxnState.Code
	case Ongoing:
	default:
		if version < 5 || r.Commit {
			return kerr.InvalidTxnState.Code
		}
		// KIP-890: an abort with nothing produced still bumps the epoch.
	}
	pid, epoch, lastEpoch, endBumped := ts.pid, ts.epoch, ts.lastEpoch, ts.endBumped
	nextPID := int64(-1)
	if version >= 5 {
		if ts.epoch >= maxEpoch-1 {
			// The bump takes the last epoch: the markers carry it, and
			// the producer goes on under a new ID (Kafka's overflow).
			var err error
			if nextPID, err = c.cfg.ProducerIDs.Allocate(); err != nil {
				c.slog.Error("end txn: allocating a producer id", "transactional_id", ts.id, "err", err)
				return coordinatorErrCode(err)
			}
			ts.lastEpoch, ts.epoch = ts.epoch, maxEpoch
		} else {
			c.bump(ts) // the markers carry the new epoch, fencing the old one
		}
		ts.endBumped = true
	}
	if err := c.endTxn(ts, r.Commit); err != nil {
		c.slog.Error("end txn", "transactional_id", ts.id, "err", err)
		if ts.state != PrepareCommit && ts.state != PrepareAbort {
			// The Prepare was not written: as if this EndTxn never came.
			ts.epoch, ts.lastEpoch, ts.endBumped = epoch, lastEpoch, endBumped
		}
		return coordinatorErrCode(err)
	}
	if nextPID >= 0 {
		c.mu.Lock()
		delete(c.byPID, ts.pid)
		c.byPID[nextPID] = ts
		c.mu.Unlock()
		ts.prevPID, ts.pid, ts.epoch, ts.lastEpoch = pid, nextPID, 0, -1
		if err := c.persist(ts, true); err != nil {
			c.slog.Error("end txn: recording the new producer id", "transactional_id", ts.id, "err", err)
			return coordinatorErrCode(err)
		}
	} else if version >= 5 {
		ts.prevPID = -1
	}
	return answer()
}

// TxnOffsetCommit stages the request's offsets in the producer's open
// transaction, durably, and fills resp; it returns the request-wide error
// code.
func (c *Coordinator) TxnOffsetCommit(r *kmsg.TxnOffsetCommitRequest, version int16, resp *kmsg.TxnOffsetCommitResponse) int16 {
	code := c.cfg.Groups.ValidateTxnCommit(r, version)
	if code == 0 && version >= 5 && c.TxnVersion() < 2 {
		code = kerr.UnsupportedVersion.Code
	}
	var ts *txnState
	if code == 0 {
		ts, code = c.lookup(r.TransactionalID, r.ProducerID, r.ProducerEpoch, 28, version)
		if code == kerr.ProducerFenced.Code {
			// Kafka's group coordinator verifies the producer through
			// the transaction coordinator and answers a fenced epoch so.
			code = kerr.InvalidProducerEpoch.Code
		}
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
		prevState              State
		prevStart, prevUpdated time.Time
	)
	if ts != nil {
		defer ts.mu.Unlock()
		hadGroup, prevState, prevStart, prevUpdated = ts.groups[r.Group], ts.state, ts.start, ts.updated
		if !ts.groups[r.Group] || ts.state != Ongoing {
			switch {
			case version == 4:
				// Kafka's verification of a group not in the transaction,
				// as the versions that know the code get it.
				code = kerr.TransactionAbortable.Code
			case version < 5 || (ts.state != Ongoing && ts.state != Empty && ts.state != CompleteCommit && ts.state != CompleteAbort):
				code = kerr.InvalidTxnState.Code
			default:
				ts.groups[r.Group] = true
				if ts.state != Ongoing {
					ts.state, ts.start = Ongoing, c.now()
				}
			}
		}
	}
	for _, rt := range r.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		ct := c.cfg.Groups.CommitTopic(version >= 6, rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = ct.PartitionError(code, rp.Partition, rp.Metadata)
			if sp.ErrorCode == 0 {
				o := groupstore.Offset{Offset: rp.Offset, LeaderEpoch: -1, ExpireMs: -1}
				if version >= 2 {
					o.LeaderEpoch = rp.LeaderEpoch
				}
				if rp.Metadata != nil {
					o.Metadata = *rp.Metadata
				}
				if ts.offsets[r.Group] == nil {
					ts.offsets[r.Group] = map[tpName]groupstore.Offset{}
				}
				tp := tpName{ct.Name(), rp.Partition}
				old, had := ts.offsets[r.Group][tp]
				prev = append(prev, staged{tp, old, had})
				ts.offsets[r.Group][tp] = o
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if ts != nil && code == 0 {
		c.setPending(ts, true)
		ts.updated = c.now()
		if err := c.persist(ts, true); err != nil {
			c.slog.Error("txn offset commit", "transactional_id", r.TransactionalID, "err", err)
			c.setPending(ts, false)
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
			c.setPending(ts, true)
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					if resp.Topics[i].Partitions[j].ErrorCode == 0 {
						resp.Topics[i].Partitions[j].ErrorCode = coordinatorErrCode(err)
					}
				}
			}
		}
	}
	return code
}

// DescribeTransaction fills s, one transaction of a DescribeTransactions
// answer, for transactional ID s.TransactionalID, listing only the
// partitions of topics topicVisible allows.
func (c *Coordinator) DescribeTransaction(s *kmsg.DescribeTransactionsResponseTransactionState, topicVisible func(topic string) bool) {
	ts := c.get(s.TransactionalID)
	if ts == nil {
		s.ErrorCode = kerr.TransactionalIDNotFound.Code
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.pid < 0 || ts.state == Dead {
		s.ErrorCode = kerr.TransactionalIDNotFound.Code
		return
	}
	s.State = ts.state.String()
	s.TimeoutMillis = int32(ts.timeout.Milliseconds())
	s.ProducerID, s.ProducerEpoch = ts.pid, ts.epoch
	if ts.state == Ongoing || ts.state == PrepareCommit || ts.state == PrepareAbort {
		s.StartTimestamp = ts.start.UnixMilli()
	}
	byTopic := map[string][]int32{}
	for k := range ts.parts {
		if name, ok := c.parts.TopicName(k.id); ok && topicVisible(name) {
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

var stateNames = map[string]bool{"Empty": true, "Ongoing": true, "PrepareCommit": true, "PrepareAbort": true,
	"CompleteCommit": true, "CompleteAbort": true, "Dead": true, "PrepareEpochFence": true}

// ListTransactions fills resp with the transactions the request's filters
// and visible (the authorizer) let through.
func (c *Coordinator) ListTransactions(r *kmsg.ListTransactionsRequest, version int16, resp *kmsg.ListTransactionsResponse, visible func(id string) bool) {
	var re *regexp.Regexp
	if version >= 2 && r.TransactionalIDPattern != nil && *r.TransactionalIDPattern != "" {
		var err error
		if re, err = regexp.Compile(*r.TransactionalIDPattern); err != nil {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return
		}
	}
	states := map[string]bool{}
	for _, s := range r.StateFilters {
		if !stateNames[s] {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
		}
		states[s] = true
	}
	pids := map[int64]bool{}
	for _, p := range r.ProducerIDFilters {
		pids[p] = true
	}
	now := c.now()
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
		case pid < 0 || state == Dead,
			len(states) > 0 && !states[state.String()],
			len(pids) > 0 && !pids[pid],
			re != nil && !re.MatchString(id),
			!visible(id),
			version >= 1 && r.DurationFilterMillis >= 0 && (state != Ongoing || now.Sub(start).Milliseconds() < r.DurationFilterMillis):
			continue
		}
		s := kmsg.NewListTransactionsResponseTransactionState()
		s.TransactionalID, s.ProducerID, s.TransactionState = id, pid, state.String()
		resp.TransactionStates = append(resp.TransactionStates, s)
	}
	sort.Slice(resp.TransactionStates, func(i, j int) bool {
		return resp.TransactionStates[i].TransactionalID < resp.TransactionStates[j].TransactionalID
	})
}
