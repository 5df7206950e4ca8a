package minikafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Inspection without a Kafka client: what a test checks after its clients
// ran (offsets, committed positions, group state, lag), and waits for such
// a condition. See broker/inspect.go for the views themselves.

// PartitionOffsets reports a partition's log start, high watermark and
// last stable offset.
func (b *Broker) PartitionOffsets(topic string, partition int32) (broker.PartitionOffsets, error) {
	return b.brk.PartitionOffsets(topic, partition)
}

// GroupOffsets lists a group's committed offsets.
func (b *Broker) GroupOffsets(group string) []broker.CommittedOffset {
	return b.brk.GroupOffsets(group)
}

// GroupState reports a group's state and member count; false for a group
// the broker does not hold in memory.
func (b *Broker) GroupState(group string) (broker.GroupState, bool) {
	return b.brk.GroupState(group)
}

// PartitionLag is a group's lag on one partition: high watermark minus
// committed offset (the whole log when nothing is committed).
type PartitionLag struct {
	Topic                         string
	Partition                     int32
	Committed, HighWatermark, Lag int64
}

// GroupLag reports the group's lag on every partition of topic.
func (b *Broker) GroupLag(group, topic string) ([]PartitionLag, error) {
	n, ok := b.brk.PartitionCount(topic)
	if !ok {
		return nil, fmt.Errorf("topic %q: %w", topic, broker.ErrUnknownPartition)
	}
	committed := map[int32]int64{}
	for _, c := range b.brk.GroupOffsets(group) {
		if c.Topic == topic {
			committed[c.Partition] = c.Offset
		}
	}
	out := make([]PartitionLag, 0, n)
	for p := int32(0); p < n; p++ {
		po, err := b.brk.PartitionOffsets(topic, p)
		if err != nil {
			return nil, err
		}
		c, ok := committed[p]
		if !ok {
			c = po.LogStart
		}
		out = append(out, PartitionLag{Topic: topic, Partition: p, Committed: c, HighWatermark: po.HighWatermark, Lag: max(po.HighWatermark-c, 0)})
	}
	return out, nil
}

// ForwardStats returns the state of every forwarded partition: offsets,
// lag (records not yet acknowledged upstream), spool bytes and pressure,
// last upstream error. Nil without forwarding.
func (b *Broker) ForwardStats() []uplink.ForwardStat { return b.brk.ForwardStats() }

// ForwardGroupOffsets is the last pass of the group offset sync
// (WithForwardGroupOffsets): per group and forwarded partition, the local
// committed offset, its upstream translation and what the upstream group
// holds; nil when the sync is off or has not run yet.
func (b *Broker) ForwardGroupOffsets() []uplink.GroupOffsetSync { return b.brk.ForwardGroupOffsets() }

// waitPoll is how often a wait re-checks its condition: reads of in-memory
// state only, so 1 ms costs nothing and keeps a wait within ~1 ms of the
// condition (no hook on the produce path).
const waitPoll = time.Millisecond

// waitFor returns nil once cond holds, or an error naming what was awaited
// and the last state seen when ctx ends or the broker's wait limit passes.
func (b *Broker) waitFor(ctx context.Context, what string, cond func() (bool, string)) error {
	limit := ""
	if _, has := ctx.Deadline(); !has {
		end, wl := time.Time{}, b.waitLimit
		if wl.timeout > 0 {
			end = time.Now().Add(wl.timeout)
			limit = "gave up after " + wl.timeout.String()
		}
		if !wl.deadline.IsZero() && (end.IsZero() || wl.deadline.Before(end)) {
			end = wl.deadline
			limit = "gave up at the test's deadline"
		}
		if !end.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, end)
			defer cancel()
		}
	}
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		ok, last := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if limit != "" && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("waiting for %s: %s (WithWaitTimeout): %w (last seen: %s)", what, limit, ctx.Err(), last)
			}
			return fmt.Errorf("waiting for %s: %w (last seen: %s)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}

// WaitTopic returns once topic exists.
func (b *Broker) WaitTopic(ctx context.Context, topic string) error {
	return b.waitFor(ctx, "topic "+topic, func() (bool, string) {
		return b.brk.TopicExists(topic), "absent"
	})
}

// WaitHighWatermark returns once the partition's high watermark reaches
// offset.
func (b *Broker) WaitHighWatermark(ctx context.Context, topic string, partition int32, offset int64) error {
	return b.waitFor(ctx, fmt.Sprintf("%s/%d high watermark %d", topic, partition, offset), func() (bool, string) {
		po, err := b.brk.PartitionOffsets(topic, partition)
		if err != nil {
			return false, err.Error()
		}
		return po.HighWatermark >= offset, fmt.Sprintf("high watermark %d", po.HighWatermark)
	})
}

// WaitGroupStable returns once the group is Stable with members members.
func (b *Broker) WaitGroupStable(ctx context.Context, group string, members int) error {
	return b.waitFor(ctx, fmt.Sprintf("group %s stable with %d members", group, members), func() (bool, string) {
		g, ok := b.brk.GroupState(group)
		if !ok {
			return false, "unknown group"
		}
		return g.State == "Stable" && g.Members == members, fmt.Sprintf("%s with %d members", g.State, g.Members)
	})
}

// WaitLagZero returns once the group has consumed every partition of
// topic: its committed offset is the high watermark, or only transaction
// markers lie between them. A consumer that read a transaction to its end
// commits the offset after its last record, which is the commit marker's
// (kgo does), so the lag Kafka reports stays 1 although nothing is left to
// read.
func (b *Broker) WaitLagZero(ctx context.Context, group, topic string) error {
	return b.waitFor(ctx, fmt.Sprintf("group %s lag 0 on %s", group, topic), func() (bool, string) {
		lags, err := b.GroupLag(group, topic)
		if err != nil {
			return false, err.Error()
		}
		var total int64
		for _, l := range lags {
			if l.Lag > 0 {
				if recs, _, err := b.brk.ReadRecords(topic, l.Partition, l.Committed, 1, false); err == nil && len(recs) == 0 {
					continue // only markers left
				}
			}
			total += l.Lag
		}
		return total == 0, fmt.Sprintf("lag %d", total)
	})
}

// GroupMember is one member of a consumer group with what it is assigned:
// for a classic group the assignment its leader handed out (decoded when
// the group uses the consumer protocol), for a KIP-848 group the
// coordinator's current assignment.
type GroupMember struct {
	MemberID   string             `json:"member_id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	ClientHost string             `json:"client_host"`
	Assignment map[string][]int32 `json:"assignment"`
}

// GroupMembers lists a group's members and their assignments, by member
// ID; empty for a group without members (or unknown).
func (b *Broker) GroupMembers(ctx context.Context, group string) ([]GroupMember, error) {
	g, ok := b.GroupState(group)
	if !ok || g.Members == 0 {
		return []GroupMember{}, nil
	}
	var out []GroupMember
	if g.Type == "consumer" {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := b.do(ctx, req)
		if err != nil {
			return nil, err
		}
		d := resp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			return nil, fmt.Errorf("group %q: %w", group, err)
		}
		for _, m := range d.Members {
			gm := newGroupMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			for _, tp := range m.Assignment.TopicPartitions {
				gm.Assignment[tp.Topic] = append(gm.Assignment[tp.Topic], tp.Partitions...)
			}
			out = append(out, gm)
		}
	} else {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Version = 5
		req.Groups = []string{group}
		resp, err := b.do(ctx, req)
		if err != nil {
			return nil, err
		}
		d := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			return nil, fmt.Errorf("group %q: %w", group, err)
		}
		for _, m := range d.Members {
			gm := newGroupMember(m.MemberID, m.InstanceID, m.ClientID, m.ClientHost)
			if d.ProtocolType == "consumer" && len(m.MemberAssignment) > 0 {
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(m.MemberAssignment); err == nil {
					for _, t := range a.Topics {
						gm.Assignment[t.Topic] = append(gm.Assignment[t.Topic], t.Partitions...)
					}
				}
			}
			out = append(out, gm)
		}
	}
	for i := range out {
		for t := range out[i].Assignment {
			sort.Slice(out[i].Assignment[t], func(a, c int) bool { return out[i].Assignment[t][a] < out[i].Assignment[t][c] })
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MemberID < out[j].MemberID })
	return out, nil
}

func newGroupMember(id string, instance *string, clientID, host string) GroupMember {
	gm := GroupMember{MemberID: id, ClientID: clientID, ClientHost: host, Assignment: map[string][]int32{}}
	if instance != nil {
		gm.InstanceID = *instance
	}
	return gm
}

// Transactions and producer state, as kafka-transactions.sh shows them,
// without a Kafka client: the broker's own DescribeTransactions,
// ListTransactions and DescribeProducers answers, asked in process.

// Transaction is one transactional ID's state. State is Kafka's name
// (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
// CompleteAbort); StartMs is set while a transaction is open; Partitions
// are those of the open transaction, by topic.
type Transaction struct {
	ID         string             `json:"transactional_id"`
	ProducerID int64              `json:"producer_id"`
	Epoch      int16              `json:"producer_epoch"`
	State      string             `json:"state"`
	TimeoutMs  int32              `json:"timeout_ms"`
	StartMs    int64              `json:"start_ms"`
	Partitions map[string][]int32 `json:"partitions"`
}

// ErrUnknownTransaction is returned for a transactional ID the broker
// does not know.
var ErrUnknownTransaction = kerr.TransactionalIDNotFound

// Transaction reports one transactional ID.
func (b *Broker) Transaction(ctx context.Context, id string) (Transaction, error) {
	txns, err := b.describeTransactions(ctx, []string{id})
	if err != nil {
		return Transaction{}, err
	}
	return txns[0], nil
}

// Transactions lists every transactional ID with its state, sorted.
func (b *Broker) Transactions(ctx context.Context) ([]Transaction, error) {
	resp, err := b.do(ctx, kmsg.NewPtrListTransactionsRequest())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range resp.(*kmsg.ListTransactionsResponse).TransactionStates {
		ids = append(ids, s.TransactionalID)
	}
	if len(ids) == 0 {
		return []Transaction{}, nil
	}
	sort.Strings(ids)
	return b.describeTransactions(ctx, ids)
}

func (b *Broker) describeTransactions(ctx context.Context, ids []string) ([]Transaction, error) {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = ids
	resp, err := b.do(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []Transaction
	for _, s := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
		if err := kerr.ErrorForCode(s.ErrorCode); err != nil {
			return nil, fmt.Errorf("transactional id %q: %w", s.TransactionalID, err)
		}
		t := Transaction{ID: s.TransactionalID, ProducerID: s.ProducerID, Epoch: s.ProducerEpoch, State: s.State,
			TimeoutMs: s.TimeoutMillis, StartMs: s.StartTimestamp, Partitions: map[string][]int32{}}
		for _, tp := range s.Topics {
			t.Partitions[tp.Topic] = append(t.Partitions[tp.Topic], tp.Partitions...)
		}
		out = append(out, t)
	}
	return out, nil
}

// Producer is one producer's idempotence state on a partition;
// TxnStartOffset is the first offset of its open transaction there, -1 if
// none.
type Producer struct {
	ProducerID      int64 `json:"producer_id"`
	Epoch           int32 `json:"producer_epoch"`
	LastSequence    int32 `json:"last_sequence"`
	LastTimestampMs int64 `json:"last_timestamp_ms"`
	TxnStartOffset  int64 `json:"txn_start_offset"`
}

// Producers lists the producers a partition holds state for, by ID.
func (b *Broker) Producers(ctx context.Context, topic string, partition int32) ([]Producer, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{partition}
	req.Topics = append(req.Topics, rt)
	resp, err := b.do(ctx, req)
	if err != nil {
		return nil, err
	}
	p := resp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, fmt.Errorf("%s/%d: %w", topic, partition, err)
	}
	out := []Producer{}
	for _, ap := range p.ActiveProducers {
		out = append(out, Producer{ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp, ap.CurrentTxnStartOffset})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out, nil
}

// WaitTransaction returns once the transactional ID has no transaction
// open or being completed (its state is Empty, CompleteCommit or
// CompleteAbort): its producer committed or aborted, or the broker
// aborted it on timeout.
func (b *Broker) WaitTransaction(ctx context.Context, id string) error {
	return b.waitFor(ctx, "transaction "+id+" complete", func() (bool, string) {
		t, err := b.Transaction(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		switch t.State {
		case "Empty", "CompleteCommit", "CompleteAbort":
			return true, t.State
		}
		return false, t.State
	})
}
