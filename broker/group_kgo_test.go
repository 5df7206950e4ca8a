package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/logstore"
)

// testConsumer is a kgo group consumer whose TCP connections the test can
// cut (a crashed process: no LeaveGroup, the session must expire).
type testConsumer struct {
	name   string
	cl     *kgo.Client
	killed atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	owned map[int32]bool
	conns []net.Conn
}

// recordSet counts every consumed record by partition and offset.
type recordSet struct {
	mu   sync.Mutex
	seen map[int32]map[int64]int
}

func (s *recordSet) add(p int32, o int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[p] == nil {
		s.seen[p] = map[int64]int{}
	}
	s.seen[p][o]++
}

// missing returns how many of the first n offsets of each partition were
// never consumed.
func (s *recordSet) missing(parts int32, n int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	miss := 0
	for p := range parts {
		for o := range n {
			if s.seen[p][o] == 0 {
				miss++
			}
		}
	}
	return miss
}

func startConsumer(t *testing.T, gb *groupBroker, name, group, topic string, seen *recordSet, opts ...kgo.Opt) *testConsumer {
	t.Helper()
	c := &testConsumer{name: name, owned: map[int32]bool{}, done: make(chan struct{})}
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		if c.killed.Load() {
			return nil, errors.New("consumer killed")
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, network, host)
		if err == nil {
			c.mu.Lock()
			c.conns = append(c.conns, conn)
			c.mu.Unlock()
		}
		return conn, err
	}
	set := func(m map[string][]int32, v bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range m[topic] {
			if v {
				c.owned[p] = true
			} else {
				delete(c.owned, p)
			}
		}
	}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(gb.addr),
		kgo.Dialer(dial),
		kgo.ClientID(name),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(1500 * time.Millisecond),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(5 * time.Second),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.AutoCommitInterval(200 * time.Millisecond),
		kgo.RetryTimeout(3 * time.Second),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { set(m, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { set(m, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { set(m, false) }),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatal(err)
	}
	c.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() {
		defer close(c.done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { seen.add(r.Partition, r.Offset) })
		}
	}()
	t.Cleanup(c.stop)
	return c
}

// stop closes the client (a graceful leave, unless killed).
func (c *testConsumer) stop() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

// kill cuts every connection and refuses new ones: the member vanishes
// without a LeaveGroup.
func (c *testConsumer) kill() {
	c.killed.Store(true)
	c.mu.Lock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.mu.Unlock()
}

func (c *testConsumer) partitions() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []int32
	for p := range c.owned {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// waitBalanced waits until the consumers own every partition exactly once,
// each owning at least one.
func waitBalanced(t *testing.T, parts int32, cs ...*testConsumer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		owner := map[int32]string{}
		ok := true
		var desc string
		for _, c := range cs {
			ps := c.partitions()
			desc += fmt.Sprintf(" %s=%v", c.name, ps)
			if len(ps) == 0 {
				ok = false
			}
			for _, p := range ps {
				if prev, dup := owner[p]; dup {
					ok = false
					desc += fmt.Sprintf(" (partition %d also owned by %s)", p, prev)
				}
				owner[p] = c.name
			}
		}
		if ok && int32(len(owner)) == parts {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group never balanced:%s", desc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitConsumed(t *testing.T, seen *recordSet, parts int32, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for seen.missing(parts, n) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records never consumed", seen.missing(parts, n), int64(parts)*n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKgoGroupRebalances runs three kgo consumers over 12 partitions, adds
// a fourth, kills one (TCP cut, no LeaveGroup) and checks after each step
// that partitions are shared with no overlap and no gap, and that every
// record produced is consumed.
func TestKgoGroupRebalances(t *testing.T) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			t.Parallel()
			const parts, per = 12, 20
			gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, shortSessions)
			gb.createTopic(t, "t", parts)
			gb.produce(t, "t", parts, per)
			seen := &recordSet{seen: map[int32]map[int64]int{}}
			b := kgo.Balancers(bal.b)
			c1 := startConsumer(t, gb, "c1", "g", "t", seen, b)
			c2 := startConsumer(t, gb, "c2", "g", "t", seen, b)
			c3 := startConsumer(t, gb, "c3", "g", "t", seen, b)
			waitBalanced(t, parts, c1, c2, c3)
			waitConsumed(t, seen, parts, per)

			c4 := startConsumer(t, gb, "c4", "g", "t", seen, b)
			waitBalanced(t, parts, c1, c2, c3, c4)
			gb.produce(t, "t", parts, per)
			waitConsumed(t, seen, parts, 2*per)

			killedAt := time.Now()
			c2.kill()
			waitBalanced(t, parts, c1, c3, c4)
			if d := time.Since(killedAt); d < time.Second {
				t.Fatalf("partitions moved %v after the kill, before the 1.5s session timeout", d)
			}
			gb.produce(t, "t", parts, per)
			waitConsumed(t, seen, parts, 3*per)
		})
	}
}

// TestGroupResumeAfterRestart commits, restarts the broker on the same
// directory (durability always) and checks a consumer in the same group
// starts exactly at the committed offsets.
func TestGroupResumeAfterRestart(t *testing.T) {
	const parts, per = 4, 10
	dir := t.TempDir()
	gb := startGroupBroker(t, dir, logstore.SyncAlways)
	gb.createTopic(t, "t", parts)
	gb.produce(t, "t", parts, per)

	// Consume and commit an uneven prefix of each partition.
	cl := gb.client(t, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	want := map[int32]int64{0: 3, 1: 5, 2: 7, 3: 10}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	got := map[int32]int64{}
	var toCommit []*kgo.Record
	for len(got) < parts {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset+1 == want[r.Partition] {
				toCommit = append(toCommit, r)
				got[r.Partition] = r.Offset + 1
			}
		})
	}
	if err := cl.CommitRecords(ctx, toCommit...); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	gb.close()

	gb = startGroupBroker(t, dir, logstore.SyncAlways)
	adm := kadm.NewClient(gb.client(t))
	offs, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	for p, o := range want {
		if r, ok := offs.Lookup("t", p); !ok || r.At != o {
			t.Fatalf("partition %d: committed %+v after restart, want %d", p, r, o)
		}
	}
	first := map[int32]int64{}
	cl = gb.client(t, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.FetchMaxWait(100*time.Millisecond))
	gb.produce(t, "t", parts, 1) // partition 3 was fully consumed: give it one more
	for len(first) < parts {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("resumed partitions %v: %v", first, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := first[r.Partition]; !ok {
				first[r.Partition] = r.Offset
			}
		})
	}
	for p, o := range want {
		if first[p] != o {
			t.Fatalf("partition %d resumed at %d, want %d (all: %v)", p, first[p], o, first)
		}
	}
}

// TestStaticMemberRestart restarts a static member (group.instance.id),
// classic and KIP-848: it gets its partitions back with no new generation
// (group epoch) and the other member keeps its partitions throughout.
func TestStaticMemberRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"classic", nil},
		{"848", []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer())}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const parts = 6
			gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) {
				c.Groups.ConsumerHeartbeatInterval, c.Groups.ConsumerSessionTimeout = 100*time.Millisecond, 10*time.Second
			})
			gb.createTopic(t, "t", parts)
			seen := &recordSet{seen: map[int32]map[int64]int{}}
			opts := func(id string) []kgo.Opt {
				return append([]kgo.Opt{kgo.InstanceID(id), kgo.SessionTimeout(10 * time.Second)}, tc.opts...)
			}
			a := startConsumer(t, gb, "a", "g", "t", seen, opts("a")...)
			b := startConsumer(t, gb, "b", "g", "t", seen, opts("b")...)
			waitBalanced(t, parts, a, b)
			generation := func() int32 {
				g, _ := gb.b.groups.Group("g")
				return g.Epoch
			}
			gen := generation()
			aParts, bParts := a.partitions(), b.partitions()

			a.stop() // static: no LeaveGroup (848: leaves with epoch -2)
			a2 := startConsumer(t, gb, "a2", "g", "t", seen, opts("a")...)
			deadline := time.Now().Add(10 * time.Second)
			for fmt.Sprint(a2.partitions()) != fmt.Sprint(aParts) {
				if time.Now().After(deadline) {
					t.Fatalf("restarted static member owns %v, had %v", a2.partitions(), aParts)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if g := generation(); g != gen {
				t.Fatalf("generation moved %d → %d: the restart caused a rebalance", gen, g)
			}
			if fmt.Sprint(b.partitions()) != fmt.Sprint(bParts) {
				t.Fatalf("other member's partitions changed: %v → %v", bParts, b.partitions())
			}
		})
	}
}
