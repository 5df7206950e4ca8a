package compat_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KIP-848 consumer groups (group.protocol=consumer): the broker assigns.

// consumerProtocolClient starts group members that use the consumer protocol.
type consumerProtocolClient interface {
	// cpMember joins group, subscribed to topic, with the consumer
	// protocol, reading from the earliest offset where the group has no
	// commit. It commits every record before it reads on, so a partition
	// that moves to another member resumes after the last record read.
	cpMember(t *testing.T, topic, group string) (cpMember, error)
}

type cpMember interface {
	recs() []rec       // every record read so far
	assigned() []int32 // the partitions the member holds now, sorted
	close() error      // leave the group; the first read or commit error, if any
}

func init() {
	scenarios = append(scenarios,
		scenario{"group/consumer-protocol", func(c caps) bool { return c.consumerProtocol }, scenarioConsumerProtocol})
}

// cpGroupConsumer is a groupConsumer whose members use the consumer protocol.
type cpGroupConsumer struct{ c consumerProtocolClient }

func (g cpGroupConsumer) groupConsume(t *testing.T, topic, group string, count int) ([]rec, error) {
	m, err := g.c.cpMember(t, topic, group)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(m.recs()) < count && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	err = m.close()
	out := m.recs()
	if err == nil && len(out) < count {
		err = fmt.Errorf("got %d of %d records in 30 s (assigned %v)", len(out), count, m.assigned())
	}
	return out, err
}

// scenarioConsumerProtocol runs group/consume-commit-resume with
// consumer-protocol members, then a second member joining a live one:
// partitions move, the new owner resumes at the committed offsets, and
// every record is read exactly once by the two.
func scenarioConsumerProtocol(t *testing.T, e *env) {
	cp, ok := e.cl.(consumerProtocolClient)
	if !ok {
		t.Fatalf("%s: caps.consumerProtocol set but no cpMember", e.name)
	}
	groupResume(t, e, cpGroupConsumer{cp}, "cpr")

	const parts, per = 4, 5
	topic := e.topic("cpm")
	group := topic + "-g"
	makeTopic(t, e, topic, parts)
	m1, err := cp.cpMember(t, topic, group)
	if err != nil {
		t.Fatalf("%s first member: %v", e.name, err)
	}
	defer m1.close()
	first := expectOffsets(testRecords("cpm1", parts, per, 0, false), map[int32]int64{})
	kgoProduce(t, e.addrs, topic, first)
	waitFor(t, e.name+" first member reads every partition", func() (bool, string) {
		return len(m1.recs()) >= len(first), fmt.Sprintf("read %d of %d, assigned %v", len(m1.recs()), len(first), m1.assigned())
	})

	m2, err := cp.cpMember(t, topic, group)
	if err != nil {
		t.Fatalf("%s second member: %v", e.name, err)
	}
	defer m2.close()
	waitFor(t, e.name+" partitions shared by the two members", func() (bool, string) {
		a1, a2 := m1.assigned(), m2.assigned()
		all := append(slices.Clone(a1), a2...)
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		return len(a1) > 0 && len(a2) > 0 && slices.Equal(all, []int32{0, 1, 2, 3}), fmt.Sprintf("m1 %v m2 %v", a1, a2)
	})
	next := map[int32]int64{}
	for p := range int32(parts) {
		next[p] = per
	}
	second := expectOffsets(testRecords("cpm2", parts, per, 0, false), next)
	kgoProduce(t, e.addrs, topic, second)
	want := append(slices.Clone(first), second...)
	waitFor(t, e.name+" the two members read everything", func() (bool, string) {
		n := len(m1.recs()) + len(m2.recs())
		return n >= len(want), fmt.Sprintf("m1 read %d, m2 %d, of %d (m1 %v m2 %v)", len(m1.recs()), len(m2.recs()), len(want), m1.assigned(), m2.assigned())
	})
	// A moment for a duplicate to show up, were one coming.
	time.Sleep(300 * time.Millisecond)
	if err := m1.close(); err != nil {
		t.Errorf("%s first member: %v", e.name, err)
	}
	if err := m2.close(); err != nil {
		t.Errorf("%s second member: %v", e.name, err)
	}
	r1, r2 := m1.recs(), m2.recs()
	if len(r2) == 0 {
		t.Errorf("%s: the second member read nothing; no partition moved to it", e.name)
	}
	for _, r := range r2 {
		if r.O < per {
			t.Errorf("%s: second member read p%d@%d, below the offset %d the first member committed", e.name, r.P, r.O, per)
			break
		}
	}
	all := append(slices.Clone(r1), r2...)
	seen := map[[2]int64]bool{}
	for _, r := range all {
		k := [2]int64{int64(r.P), r.O}
		if seen[k] {
			t.Errorf("%s: p%d@%d read twice", e.name, r.P, r.O)
		}
		seen[k] = true
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].P != all[j].P {
			return all[i].P < all[j].P
		}
		return all[i].O < all[j].O
	})
	verifyRecords(t, e.name+" consumer-protocol members", want, all)
}

// memberState is what both clients' members keep.
type memberState struct {
	mu   sync.Mutex
	out  []rec
	own  []int32
	err  error
	once sync.Once
	done chan struct{}
	stop context.CancelFunc
}

func (m *memberState) recs() []rec {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.out)
}

func (m *memberState) assigned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.own)
}

func (m *memberState) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
}

type kgoCPMember struct {
	memberState
	cl *kgo.Client
}

func (c *kgoClient) cpMember(t *testing.T, topic, group string) (cpMember, error) {
	m := &kgoCPMember{memberState: memberState{done: make(chan struct{})}}
	track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range ps[topic] {
				m.own = slices.DeleteFunc(m.own, func(q int32) bool { return q == p })
				if add {
					m.own = append(m.own, p)
				}
			}
			slices.Sort(m.own)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.OnPartitionsAssigned(track(true)), kgo.OnPartitionsRevoked(track(false)), kgo.OnPartitionsLost(track(false)))
	if err != nil {
		return nil, err
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				cl.AllowRebalance()
				return
			}
			if err := fs.Err(); err != nil {
				m.fail(fmt.Errorf("poll: %w", err))
			}
			recs := fs.Records()
			if len(recs) > 0 {
				m.mu.Lock()
				for _, r := range recs {
					m.out = append(m.out, fromKgo(r))
				}
				m.mu.Unlock()
				if err := cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
					m.fail(fmt.Errorf("commit: %w", err))
				}
			}
			cl.AllowRebalance()
		}
	}()
	return m, nil
}

func (m *kgoCPMember) close() error {
	m.once.Do(func() {
		m.stop()
		<-m.done
		m.cl.Close() // leaves the group
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

type confluentCPMember struct {
	memberState
	cons *kafka.Consumer
}

func (c *confluentClient) cpMember(t *testing.T, topic, group string) (cpMember, error) {
	cons, err := kafka.NewConsumer(c.conf(kafka.ConfigMap{
		"group.id": group, "group.protocol": "consumer",
		"enable.auto.commit": false, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
	}))
	if err != nil {
		return nil, err
	}
	if err := cons.Subscribe(topic, nil); err != nil {
		cons.Close()
		return nil, err
	}
	m := &confluentCPMember{memberState: memberState{done: make(chan struct{})}, cons: cons}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			msg, err := cons.ReadMessage(100 * time.Millisecond)
			if a, aerr := cons.Assignment(); aerr == nil {
				var own []int32
				for _, tp := range a {
					own = append(own, tp.Partition)
				}
				slices.Sort(own)
				m.mu.Lock()
				m.own = own
				m.mu.Unlock()
			}
			if err != nil {
				var ke kafka.Error
				if errors.As(err, &ke) && (ke.IsTimeout() || !ke.IsFatal()) {
					continue
				}
				m.fail(fmt.Errorf("read: %w", err))
				continue
			}
			r := rec{P: msg.TopicPartition.Partition, O: int64(msg.TopicPartition.Offset), TS: msg.Timestamp.UnixMilli()}
			if msg.Key != nil {
				r.K = sp(string(msg.Key))
			}
			if msg.Value != nil {
				r.V = sp(string(msg.Value))
			}
			for _, h := range msg.Headers {
				r.H = append(r.H, hdr{h.Key, string(h.Value)})
			}
			m.mu.Lock()
			m.out = append(m.out, r)
			m.mu.Unlock()
			if _, err := cons.CommitMessage(msg); err != nil {
				m.fail(fmt.Errorf("commit p%d@%d: %w", r.P, r.O, err))
			}
		}
	}()
	return m, nil
}

func (m *confluentCPMember) close() error {
	m.once.Do(func() {
		m.stop()
		<-m.done
		if err := m.cons.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
			m.fail(fmt.Errorf("close: %w", err))
		}
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
