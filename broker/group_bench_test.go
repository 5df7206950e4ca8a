package broker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

func commitReq(group, topic string, parts int32, offset int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Group, r.Generation = group, -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	for p := range parts {
		pp := kmsg.NewOffsetCommitRequestTopicPartition()
		pp.Partition, pp.Offset, pp.LeaderEpoch = p, offset, -1
		t.Partitions = append(t.Partitions, pp)
	}
	r.Topics = []kmsg.OffsetCommitRequestTopic{t}
	return r
}

// BenchmarkOffsetCommitAlways measures OffsetCommit over TCP into one group
// with durability always: 8 connections each commit 100 partitions per
// request, so concurrent commits share fsyncs. Reports partition-commits/s.
func BenchmarkOffsetCommitAlways(b *testing.B) {
	const conns, parts = 8, 100
	gb := startGroupBroker(b, b.TempDir(), logstore.SyncAlways)
	gb.createTopic(b, "t", parts)
	cls := make([]*kgo.Client, conns)
	for i := range cls {
		cls[i] = gb.client(b)
		request[*kmsg.OffsetCommitResponse](b, cls[i], commitReq("g", "t", parts, 0)) // warm the connection
	}
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range cls {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				resp := request[*kmsg.OffsetCommitResponse](b, cl, commitReq("g", "t", parts, i))
				if c := resp.Topics[0].Partitions[0].ErrorCode; c != 0 {
					b.Errorf("commit error %d", c)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)*parts/time.Since(start).Seconds(), "partition-commits/s")
}

// BenchmarkOffsetCommitLatency measures one single-partition commit at a
// time with durability always (each waits for its own fsync) and reports
// the p50 and p99 latency.
func BenchmarkOffsetCommitLatency(b *testing.B) {
	gb := startGroupBroker(b, b.TempDir(), logstore.SyncAlways)
	gb.createTopic(b, "t", 1)
	cl := gb.client(b)
	request[*kmsg.OffsetCommitResponse](b, cl, commitReq("g", "t", 1, 0))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		request[*kmsg.OffsetCommitResponse](b, cl, commitReq("g", "t", 1, int64(i)))
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRebalance10x100 starts 10 kgo group members over 100 partitions
// (initial rebalance delay 0) and measures the time from creating the
// first client until every partition is assigned and every member holds
// some. Classic members (range, cooperative-sticky: the leader assigns)
// heartbeat every hb; KIP-848 members (kgo.ServerSideBalancer: the broker
// assigns, "uniform" or "range") are told to heartbeat every hb by the
// broker (group.consumer.heartbeat.interval.ms). Members that start later
// join a group that already rebalanced, and the earlier ones learn of it
// from their next heartbeat, so the heartbeat interval dominates: hb=20ms
// shows how much of hb=100ms it is. startup-ms is the time until the
// broker saw the first group request (client start-up, before any
// rebalance); BenchmarkRebalanceProtocol10x100 measures the coordinator
// alone. MINIKAFKA_GROUP_TRACE=file appends a per-request trace.
func BenchmarkRebalance10x100(b *testing.B) {
	for _, bal := range []struct {
		name   string
		b      kgo.GroupBalancer
		kip848 bool
	}{
		{"range", kgo.RangeBalancer(), false},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer(), false},
		{"kip848-uniform", kgo.CooperativeStickyBalancer(), true},
		{"kip848-range", kgo.RangeBalancer(), true},
	} {
		for _, hb := range []time.Duration{100 * time.Millisecond, 20 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/hb=%v", bal.name, hb), func(b *testing.B) { benchRebalance(b, bal.b, bal.kip848, hb) })
		}
	}
}

func benchRebalance(b *testing.B, balancer kgo.GroupBalancer, kip848 bool, hb time.Duration) {
	const members, parts = 10, 100
	tr := &groupTracer{start: time.Now()}
	gb := startWrappedGroupBroker(b, b.TempDir(), logstore.SyncNever, func(h protocol.Handler) protocol.Handler { tr.h = h; return tr },
		func(c *Config) { c.Groups.ConsumerHeartbeatInterval = hb })
	gb.createTopic(b, "t", parts)
	gb.client(b) // warm metadata path
	var total, startup time.Duration
	var each []time.Duration
	b.ResetTimer()
	for i := range b.N {
		group := fmt.Sprintf("g%d", i)
		var mu sync.Mutex
		owner := map[int32]int{}
		assigned := make(chan struct{}, 1)
		var cls []*kgo.Client
		ctx, cancel := context.WithCancel(context.Background())
		var polling sync.WaitGroup
		tr.reset()
		start := time.Now()
		for m := range members {
			cl, err := kgo.NewClient(kgo.SeedBrokers(gb.addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics("t"),
				kgo.Balancers(balancer), kgo.HeartbeatInterval(hb), serverSide(kip848),
				kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
					mu.Lock()
					for _, p := range a["t"] {
						owner[p] = m
					}
					n := len(owner)
					mu.Unlock()
					if n == parts {
						select {
						case assigned <- struct{}{}:
						default:
						}
					}
				}),
				kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
					mu.Lock()
					for _, p := range r["t"] {
						if owner[p] == m {
							delete(owner, p)
						}
					}
					mu.Unlock()
				}))
			if err != nil {
				b.Fatal(err)
			}
			cls = append(cls, cl)
			polling.Go(func() {
				for ctx.Err() == nil {
					cl.PollFetches(ctx)
				}
			})
		}
		// Wait for full coverage with every member holding partitions.
		for {
			<-assigned
			mu.Lock()
			per := map[int]int{}
			for _, m := range owner {
				per[m]++
			}
			done := len(owner) == parts && len(per) == members
			mu.Unlock()
			if done {
				break
			}
			go func() {
				time.Sleep(time.Millisecond)
				select {
				case assigned <- struct{}{}:
				default:
				}
			}()
		}
		took := time.Since(start)
		total += took
		each = append(each, took)
		b.StopTimer()
		startup += tr.firstGroupRequest()
		if f := os.Getenv("MINIKAFKA_GROUP_TRACE"); f != "" {
			// A file, not b.Log: the benchmark log is truncated.
			trace := fmt.Sprintf("%s run %d: %v\n%s\n", b.Name(), i, time.Since(start), tr)
			if err := appendFile(f, trace); err != nil {
				b.Fatal(err)
			}
		}
		cancel()
		polling.Wait()
		for _, cl := range cls {
			cl.Close()
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/rebalance")
	slices.Sort(each)
	b.ReportMetric(float64(each[len(each)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(startup.Microseconds())/1000/float64(b.N), "startup-ms")
}

// serverSide opts a kgo group member into KIP-848 (the broker assigns).
func serverSide(on bool) kgo.Opt {
	if on {
		return kgo.ServerSideBalancer()
	}
	return kgo.WithHooks() // no-op
}

// BenchmarkRebalanceProtocol10x100 measures the coordinator alone: 10
// connected members join a new group at once (MEMBER_ID_REQUIRED round
// trip included), the leader assigns 100 partitions, and the clock stops
// when every member's SyncGroup has returned its assignment.
func BenchmarkRebalanceProtocol10x100(b *testing.B) {
	const members, parts = 10, 100
	gb := startGroupBroker(b, b.TempDir(), logstore.SyncNever)
	gb.createTopic(b, "t", parts)
	cls := make([]*kgo.Client, members)
	for i := range cls {
		cls[i] = gb.client(b)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = "warm"
		request[*kmsg.FindCoordinatorResponse](b, cls[i], fc)
	}
	b.ResetTimer()
	for i := range b.N {
		group := fmt.Sprintf("p%d", i)
		var wg, haveIDs sync.WaitGroup
		haveIDs.Add(members)
		for _, cl := range cls {
			wg.Go(func() {
				// Everybody gets its member id before anybody rejoins, so
				// the ten form one generation (as they would with any
				// initial rebalance delay) instead of a chain of them.
				jr := request[*kmsg.JoinGroupResponse](b, cl, joinReq(group, "", 9))
				haveIDs.Done()
				haveIDs.Wait()
				jr = request[*kmsg.JoinGroupResponse](b, cl, joinReq(group, jr.MemberID, 9))
				if jr.ErrorCode != 0 {
					b.Errorf("join: %d", jr.ErrorCode)
					return
				}
				sr := kmsg.NewPtrSyncGroupRequest()
				sr.Group, sr.MemberID, sr.Generation = group, jr.MemberID, jr.Generation
				if jr.LeaderID == jr.MemberID {
					for k, m := range jr.Members {
						a := kmsg.NewConsumerMemberAssignment()
						at := kmsg.NewConsumerMemberAssignmentTopic()
						at.Topic = "t"
						for p := int32(k); p < parts; p += int32(len(jr.Members)) {
							at.Partitions = append(at.Partitions, p)
						}
						a.Topics = []kmsg.ConsumerMemberAssignmentTopic{at}
						sr.GroupAssignment = append(sr.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: a.AppendTo(nil)})
					}
				}
				resp := request[*kmsg.SyncGroupResponse](b, cl, sr)
				if resp.ErrorCode != 0 || len(resp.MemberAssignment) == 0 {
					b.Errorf("sync: %d, %d bytes", resp.ErrorCode, len(resp.MemberAssignment))
				}
			})
		}
		wg.Wait()
	}
}

func appendFile(name, s string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if err2 := f.Close(); err == nil {
		err = err2
	}
	return err
}
