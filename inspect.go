package minikafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minikafka/minikafka/broker"
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

// waitPoll is how often a wait re-checks its condition: reads of in-memory
// state only, so 1 ms costs nothing and keeps a wait within ~1 ms of the
// condition (no hook on the produce path).
const waitPoll = time.Millisecond

// waitLimit bounds the Wait methods whose context has no deadline
// (WithWaitTimeout).
type waitLimit struct {
	timeout  time.Duration // 0: none
	deadline time.Time     // zero: none
}

// WithWaitTimeout bounds every Wait method (WaitTopic, WaitHighWatermark,
// WaitGroupStable, WaitLagZero, WaitTransaction) called with a context
// that has no deadline of its own: it gives up after timeout, or at
// deadline if that comes first, with an error saying what it last saw.
// Zero values mean no bound (the default: a wait lasts as long as its
// context). minikafkatest.New sets it from the test's deadline.
func WithWaitTimeout(timeout time.Duration, deadline time.Time) Option {
	return optionFunc(func(c *config) { c.waitLimit = waitLimit{timeout, deadline} })
}

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
