package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// groupBroker is a broker on a real TCP listener, for group tests.
type groupBroker struct {
	t    testing.TB
	b    *Broker
	srv  *protocol.Server
	addr string
	dir  string
	done chan struct{}
}

func startGroupBroker(t testing.TB, dir string, sync logstore.SyncMode, mods ...func(*Config)) *groupBroker {
	t.Helper()
	return startWrappedGroupBroker(t, dir, sync, nil, mods...)
}

// shortSessions lowers group.min.session.timeout.ms (Kafka's default is
// 6 s) for tests whose members time out in a second or two.
func shortSessions(c *Config) { c.Groups.MinSessionTimeout = 100 * time.Millisecond }

// startWrappedGroupBroker is startGroupBroker with the listener serving
// wrap(broker) instead of the broker itself (a tracer, for instance).
func startWrappedGroupBroker(t testing.TB, dir string, sync logstore.SyncMode, wrap func(protocol.Handler) protocol.Handler, mods ...func(*Config)) *groupBroker {
	t.Helper()
	cfg := Config{DataDir: dir, Sync: logstore.SyncPolicy{Mode: sync}, DefaultPartitions: 1}
	for _, m := range mods {
		m(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h protocol.Handler = b
	if wrap != nil {
		h = wrap(b)
	}
	srv, err := protocol.Listen(protocol.Config{Addr: "127.0.0.1:0"}, h)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	a := srv.Addr().(*net.TCPAddr)
	b.SetAdvertised("127.0.0.1", int32(a.Port))
	gb := &groupBroker{t: t, b: b, srv: srv, addr: a.String(), dir: dir, done: make(chan struct{})}
	go func() { defer close(gb.done); _ = srv.Serve() }()
	t.Cleanup(gb.close)
	return gb
}

func (gb *groupBroker) close() {
	select {
	case <-gb.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = gb.srv.Close(ctx)
	<-gb.done
	if err := gb.b.Close(); err != nil {
		gb.t.Errorf("closing broker: %v", err)
	}
}

func (gb *groupBroker) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(gb.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (gb *groupBroker) createTopic(t testing.TB, name string, parts int32) {
	t.Helper()
	adm := kadm.NewClient(gb.client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, parts, 1, nil, name); err != nil {
		t.Fatal(err)
	}
}

// produce writes n records to every partition of topic and returns them as
// "partition/offset" keys.
func (gb *groupBroker) produce(t testing.TB, topic string, parts int32, n int) {
	t.Helper()
	cl := gb.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range parts {
		for i := range n {
			recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// request sends one kmsg request and fails the test on transport errors.
func request[R kmsg.Response](t testing.TB, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// kgo sends the highest version both sides speak and the requests
	// below name topics: give each its id too, so that the test holds for
	// the versions that name topics by id (OffsetCommit v10+, OffsetFetch
	// v10+, TxnOffsetCommit v6+) as well as the ones before.
	switch r := req.(type) {
	case *kmsg.OffsetCommitRequest:
		for i := range r.Topics {
			r.Topics[i].TopicID = topicIDFor(t, cl, r.Topics[i].Topic, r.Topics[i].TopicID)
		}
	case *kmsg.TxnOffsetCommitRequest:
		for i := range r.Topics {
			r.Topics[i].TopicID = topicIDFor(t, cl, r.Topics[i].Topic, r.Topics[i].TopicID)
		}
	case *kmsg.OffsetFetchRequest:
		for i := range r.Groups {
			for j := range r.Groups[i].Topics {
				r.Groups[i].Topics[j].TopicID = topicIDFor(t, cl, r.Groups[i].Topics[j].Topic, r.Groups[i].Topics[j].TopicID)
			}
		}
	}
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp.(R)
}

// topicIDFor returns id, or when it is zero the id of the named topic (zero
// if there is no such topic).
func topicIDFor(t testing.TB, cl *kgo.Client, name string, id [16]byte) [16]byte {
	t.Helper()
	if id != ([16]byte{}) || name == "" {
		return id
	}
	mr := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &name
	mr.Topics = []kmsg.MetadataRequestTopic{mt}
	resp, err := mr.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("metadata for %s: %v", name, err)
	}
	if len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
		return resp.Topics[0].TopicID
	}
	return id
}

func wantCode(t testing.TB, what string, got int16, want error) {
	t.Helper()
	var w int16
	if want != nil {
		w = want.(*kerr.Error).Code
	}
	if got != w {
		t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

func joinReq(group, member string, version int16) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = version
	r.Group, r.MemberID = group, member
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 10_000, 10_000
	r.ProtocolType = "consumer"
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = []string{"t"}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", md.AppendTo(nil)
	r.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return r
}

// TestClassicProtocolErrors drives JoinGroup/SyncGroup/Heartbeat/
// OffsetCommit/LeaveGroup by hand and checks the error codes Kafka gives.
func TestClassicProtocolErrors(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 3)
	cl := gb.client(t)

	// v4+: an empty member id gets MEMBER_ID_REQUIRED and an id.
	jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", "", 9))
	wantCode(t, "first join", jr.ErrorCode, kerr.MemberIDRequired)
	id := jr.MemberID
	if id == "" {
		t.Fatal("no member id handed out")
	}
	jr = request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", id, 9))
	wantCode(t, "rejoin", jr.ErrorCode, nil)
	if jr.Generation != 1 || jr.LeaderID != id || len(jr.Members) != 1 || jr.Protocol == nil || *jr.Protocol != "range" {
		t.Fatalf("join response %+v", jr)
	}

	// Heartbeat in CompletingRebalance with the right generation is fine;
	// wrong generation and unknown members are not.
	hb := func(member string, gen int32) int16 {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Group, r.MemberID, r.Generation = "g", member, gen
		return request[*kmsg.HeartbeatResponse](t, cl, r).ErrorCode
	}
	wantCode(t, "heartbeat", hb(id, 1), nil)
	wantCode(t, "heartbeat stale generation", hb(id, 0), kerr.IllegalGeneration)
	wantCode(t, "heartbeat unknown member", hb("nobody", 1), kerr.UnknownMemberID)

	// Commit while CompletingRebalance: REBALANCE_IN_PROGRESS.
	commit := func(member string, gen int32) int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.MemberID, r.Generation = "g", member, gen
		tt := kmsg.NewOffsetCommitRequestTopic()
		tt.Topic = "t"
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = 0, 42
		tt.Partitions = append(tt.Partitions, p)
		r.Topics = append(r.Topics, tt)
		return request[*kmsg.OffsetCommitResponse](t, cl, r).Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "commit completing", commit(id, 1), kerr.RebalanceInProgress)

	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = "g", id, 1
	sr.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: id, MemberAssignment: []byte("mine")}}
	sresp := request[*kmsg.SyncGroupResponse](t, cl, sr)
	wantCode(t, "sync", sresp.ErrorCode, nil)
	if string(sresp.MemberAssignment) != "mine" {
		t.Fatalf("assignment %q", sresp.MemberAssignment)
	}
	wantCode(t, "commit stale generation", commit(id, 0), kerr.IllegalGeneration)
	wantCode(t, "commit unknown member", commit("nobody", 1), kerr.UnknownMemberID)
	wantCode(t, "simple commit into a live group", commit("", -1), kerr.UnknownMemberID)
	wantCode(t, "commit", commit(id, 1), nil)

	// A second member triggers a rebalance: the first sees it on heartbeat.
	// Its join parks until the first member rejoins; run it in the
	// background. (kgo sends the newest version both sides speak.)
	// Its own client: a parked request holds up later responses on the
	// same connection, as in Kafka.
	cl2 := gb.client(t)
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		first := request[*kmsg.JoinGroupResponse](t, cl2, joinReq("g", "", 9))
		done <- request[*kmsg.JoinGroupResponse](t, cl2, joinReq("g", first.MemberID, 9))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for hb(id, 1) != kerr.RebalanceInProgress.Code {
		if time.Now().After(deadline) {
			g, _ := gb.b.groups.Group("g")
			t.Fatalf("no REBALANCE_IN_PROGRESS after a new member joined: hb %v state %v members %d", kerr.ErrorForCode(hb(id, 1)), g.State, g.Members)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A stale-generation commit is still accepted during
	// PreparingRebalance from the current generation.
	wantCode(t, "commit preparing", commit(id, 1), nil)
	jr = request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", id, 9))
	wantCode(t, "rejoin after rebalance", jr.ErrorCode, nil)
	j2 := <-done
	wantCode(t, "second join", j2.ErrorCode, nil)
	if jr.Generation != 2 || j2.Generation != 2 {
		t.Fatalf("generations %d %d", jr.Generation, j2.Generation)
	}

	// DeleteGroups refuses a group with members.
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{"g", "missing"}
	dresp := request[*kmsg.DeleteGroupsResponse](t, cl, dg)
	wantCode(t, "delete live group", dresp.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantCode(t, "delete missing group", dresp.Groups[1].ErrorCode, kerr.GroupIDNotFound)

	// LeaveGroup v3+ batches; unknown members get their own error.
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 5
	lr.Group = "g"
	lr.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}, {MemberID: j2.MemberID}, {MemberID: "nobody"}}
	lresp := request[*kmsg.LeaveGroupResponse](t, cl, lr)
	wantCode(t, "leave", lresp.Members[0].ErrorCode, nil)
	wantCode(t, "leave 2", lresp.Members[1].ErrorCode, nil)
	wantCode(t, "leave unknown", lresp.Members[2].ErrorCode, kerr.UnknownMemberID)

	// Empty now: describe says so, offsets survive, simple commits work.
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Groups = []string{"g"}
	desc := request[*kmsg.DescribeGroupsResponse](t, cl, dr)
	if desc.Groups[0].State != "Empty" || len(desc.Groups[0].Members) != 0 {
		t.Fatalf("describe after leave: %+v", desc.Groups[0])
	}
	wantCode(t, "simple commit", commit("", -1), nil)
	dresp = request[*kmsg.DeleteGroupsResponse](t, cl, dg)
	wantCode(t, "delete empty group", dresp.Groups[0].ErrorCode, nil)
}

// TestOffsetAPIs covers OffsetCommit/OffsetFetch (old and batched
// versions), FindCoordinator, ListGroups filters and OffsetDelete.
func TestOffsetAPIs(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncAlways)
	gb.createTopic(t, "t", 4)
	cl := gb.client(t)
	adm := kadm.NewClient(cl)
	ctx := context.Background()

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"a", "b"}
	fresp := request[*kmsg.FindCoordinatorResponse](t, cl, fc)
	// kgo may split the keys over requests and merge the answers, so the
	// order is not fixed.
	keys := map[string]bool{}
	for _, c := range fresp.Coordinators {
		keys[c.Key] = true
		if c.ErrorCode != 0 || c.NodeID != gb.b.NodeID() || c.Port == 0 {
			t.Fatalf("find coordinator v4+: %+v", fresp)
		}
	}
	if len(fresp.Coordinators) != 2 || !keys["a"] || !keys["b"] {
		t.Fatalf("find coordinator v4+: %+v", fresp)
	}
	fc = kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey, fc.CoordinatorType = 3, "txn", 1
	fresp = request[*kmsg.FindCoordinatorResponse](t, cl, fc)
	wantCode(t, "find txn coordinator", fresp.ErrorCode, nil)

	for _, g := range []string{"g1", "g2"} {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "t", Partition: 1, At: 10, LeaderEpoch: 3, Metadata: "md-" + g})
		os.Add(kadm.Offset{Topic: "t", Partition: 2, At: 20, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, g, os)
		if err != nil || resp.Error() != nil {
			t.Fatalf("commit %s: %v %v", g, err, resp.Error())
		}
	}
	// Unknown topics and oversized metadata are refused per partition.
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "nope", Partition: 0, At: 1})
	os.Add(kadm.Offset{Topic: "t", Partition: 9, At: 1})
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 1, Metadata: string(make([]byte, 5000))})
	resp, err := adm.CommitOffsets(ctx, "g1", os)
	if err != nil {
		t.Fatal(err)
	}
	if e := resp["nope"][0].Err; !errors.Is(e, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %v", e)
	}
	if e := resp["t"][9].Err; !errors.Is(e, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown partition: %v", e)
	}
	if e := resp["t"][0].Err; !errors.Is(e, kerr.OffsetMetadataTooLarge) {
		t.Fatalf("big metadata: %v", e)
	}

	// v8 batched fetch: both groups, one with null topics (all).
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	g1 := kmsg.NewOffsetFetchRequestGroup()
	g1.Group = "g1"
	g2 := kmsg.NewOffsetFetchRequestGroup()
	g2.Group = "g2"
	tt := kmsg.NewOffsetFetchRequestGroupTopic()
	tt.Topic, tt.Partitions = "t", []int32{0, 1}
	g2.Topics = []kmsg.OffsetFetchRequestGroupTopic{tt}
	of.Groups = []kmsg.OffsetFetchRequestGroup{g1, g2}
	ofr := request[*kmsg.OffsetFetchResponse](t, cl, of)
	if len(ofr.Groups) != 2 {
		t.Fatalf("groups %d", len(ofr.Groups))
	}
	all := ofr.Groups[0].Topics
	if len(all) != 1 || len(all[0].Partitions) != 2 || all[0].Partitions[0].Offset != 10 || all[0].Partitions[0].LeaderEpoch != 3 || *all[0].Partitions[0].Metadata != "md-g1" {
		t.Fatalf("g1 all offsets: %+v", all)
	}
	ps := ofr.Groups[1].Topics[0].Partitions
	if ps[0].Offset != -1 || ps[1].Offset != 10 {
		t.Fatalf("g2 offsets: %+v", ps)
	}
	// v1 single-group fetch.
	of = kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 1, "g2"
	ot := kmsg.NewOffsetFetchRequestTopic()
	ot.Topic, ot.Partitions = "t", []int32{2}
	of.Topics = []kmsg.OffsetFetchRequestTopic{ot}
	ofr = request[*kmsg.OffsetFetchResponse](t, cl, of)
	if ofr.Topics[0].Partitions[0].Offset != 20 {
		t.Fatalf("v1 fetch: %+v", ofr.Topics)
	}

	// ListGroups: offset-only groups are Empty; filters apply.
	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version = 5
	lgr := request[*kmsg.ListGroupsResponse](t, cl, lg)
	if len(lgr.Groups) != 2 || lgr.Groups[0].GroupState != "Empty" || lgr.Groups[0].GroupType != "classic" {
		t.Fatalf("list groups: %+v", lgr.Groups)
	}
	lg.StatesFilter = []string{"stable"}
	if lgr = request[*kmsg.ListGroupsResponse](t, cl, lg); len(lgr.Groups) != 0 {
		t.Fatalf("state filter: %+v", lgr.Groups)
	}
	lg.StatesFilter, lg.TypesFilter = nil, []string{"consumer"}
	if lgr = request[*kmsg.ListGroupsResponse](t, cl, lg); len(lgr.Groups) != 0 {
		t.Fatalf("type filter: %+v", lgr.Groups)
	}

	// OffsetDelete on an empty group; unknown groups are not found.
	dresp, err := adm.DeleteOffsets(ctx, "g1", kadm.TopicsSet{"t": {1: {}}})
	if err != nil || dresp.Error() != nil {
		t.Fatalf("delete offsets: %v %v", err, dresp.Error())
	}
	fetched, err := adm.FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fetched.Lookup("t", 1); ok {
		t.Fatal("deleted offset still fetched")
	}
	if _, ok := fetched.Lookup("t", 2); !ok {
		t.Fatal("other offset gone")
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "missing"
	wantCode(t, "offset delete unknown group", request[*kmsg.OffsetDeleteResponse](t, cl, od).ErrorCode, kerr.GroupIDNotFound)

	// Deleting the topic drops its offsets.
	if _, err := adm.DeleteTopics(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if got := gb.b.groups.GroupOffsets("g2"); len(got) != 0 {
		t.Fatalf("offsets of deleted topic kept: %v", got)
	}
}

// TestInitialRebalanceDelay: with group.initial.rebalance.delay.ms, members
// joining an empty group within the delay form one generation, and the
// first answer comes no sooner than the delay.
func TestInitialRebalanceDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) { c.GroupInitialRebalanceDelay = delay })
	type res struct {
		resp *kmsg.JoinGroupResponse
		at   time.Duration
	}
	start := time.Now()
	out := make(chan res, 3)
	for range 3 {
		cl := gb.client(t)
		go func() {
			first := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", "", 9))
			r := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", first.MemberID, 9))
			out <- res{r, time.Since(start)}
		}()
	}
	for range 3 {
		r := <-out
		wantCode(t, "join", r.resp.ErrorCode, nil)
		if r.resp.Generation != 1 {
			t.Fatalf("generation %d: members did not form one generation", r.resp.Generation)
		}
		if r.at < delay {
			t.Fatalf("join answered after %v, before the %v initial delay", r.at, delay)
		}
	}
}

// TestStaticMemberFencing: a static member that rejoins under a new member
// id fences the old id, and leaving by instance id works.
func TestStaticMemberFencing(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	cl := gb.client(t)
	join := func(member string) *kmsg.JoinGroupResponse {
		r := joinReq("g", member, 9)
		iid := "instance-1"
		r.InstanceID = &iid
		return request[*kmsg.JoinGroupResponse](t, cl, r)
	}
	j1 := join("")
	wantCode(t, "static join", j1.ErrorCode, nil) // static members skip MEMBER_ID_REQUIRED
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = "g", j1.MemberID, j1.Generation
	iid := "instance-1"
	sr.InstanceID = &iid
	sr.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: j1.MemberID, MemberAssignment: []byte("a")}}
	wantCode(t, "sync", request[*kmsg.SyncGroupResponse](t, cl, sr).ErrorCode, nil)

	j2 := join("") // the same instance restarting
	wantCode(t, "static rejoin", j2.ErrorCode, nil)
	if j2.MemberID == j1.MemberID || j2.Generation != j1.Generation {
		t.Fatalf("rejoin: member %s gen %d (was %s gen %d)", j2.MemberID, j2.Generation, j1.MemberID, j1.Generation)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = "g", j1.MemberID, j1.Generation, &iid
	wantCode(t, "old member heartbeat", request[*kmsg.HeartbeatResponse](t, cl, hb).ErrorCode, kerr.FencedInstanceID)
	sr.MemberID = j2.MemberID
	sresp := request[*kmsg.SyncGroupResponse](t, cl, sr)
	if sresp.ErrorCode != 0 || string(sresp.MemberAssignment) != "a" {
		t.Fatalf("restarted member's sync: %v %q", kerr.ErrorForCode(sresp.ErrorCode), sresp.MemberAssignment)
	}

	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Group = "g"
	lr.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: &iid}}
	if m := request[*kmsg.LeaveGroupResponse](t, cl, lr).Members; len(m) != 1 || m[0].ErrorCode != 0 {
		t.Fatalf("leave by instance id: %+v", m)
	}
}

// TestOffsetsExpireForEmptyGroups: offsets of a group without members
// expire after the retention, counted from when the group became empty;
// a live group keeps them.
func TestOffsetsExpireForEmptyGroups(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	clock := func() time.Time { return time.UnixMilli(now.Load()) }
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, func(c *Config) { c.Now, c.Groups.OffsetsRetention = clock, time.Hour })
	gb.createTopic(t, "t", 1)
	cl := gb.client(t)
	c := gb.b.groups

	commit := func(group, member string, gen int32) {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.MemberID, r.Generation = group, member, gen
		tt := kmsg.NewOffsetCommitRequestTopic()
		tt.Topic = "t"
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Offset = 5
		tt.Partitions = append(tt.Partitions, p)
		r.Topics = append(r.Topics, tt)
		wantCode(t, "commit "+group, request[*kmsg.OffsetCommitResponse](t, cl, r).Topics[0].Partitions[0].ErrorCode, nil)
	}
	commit("simple", "", -1)
	first := request[*kmsg.JoinGroupResponse](t, cl, joinReq("live", "", 9))
	jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("live", first.MemberID, 9))
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = "live", jr.MemberID, jr.Generation
	request[*kmsg.SyncGroupResponse](t, cl, sr)
	commit("live", jr.MemberID, jr.Generation)

	now.Add((2 * time.Hour).Milliseconds())
	c.ExpireOffsets()
	if len(c.GroupOffsets("simple")) != 0 {
		t.Fatal("empty group's offsets outlived the retention")
	}
	if len(c.GroupOffsets("live")) != 1 {
		t.Fatal("a live group's offsets expired")
	}
	if _, ok := c.Group("simple"); ok {
		t.Fatal("empty group without offsets not forgotten")
	}
}

// TestShutdownAnswersParkedJoins: a graceful shutdown does not wait for a
// rebalance; a JoinGroup parked in it is answered NOT_COORDINATOR.
func TestShutdownAnswersParkedJoins(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	cl := gb.client(t)
	first := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", "", 9))
	jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("g", first.MemberID, 9))
	wantCode(t, "join", jr.ErrorCode, nil) // generation 1, leader; never syncs or rejoins

	cl2 := gb.client(t)
	second := request[*kmsg.JoinGroupResponse](t, cl2, joinReq("g", "", 9))
	parked := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cl2.Request(ctx, joinReq("g", second.MemberID, 9))
		if err == nil {
			if code := resp.(*kmsg.JoinGroupResponse).ErrorCode; code != kerr.NotCoordinator.Code {
				err = fmt.Errorf("parked join answered %v", kerr.ErrorForCode(code))
			}
		}
		parked <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if g, _ := gb.b.groups.Group("g"); g.State == "PreparingRebalance" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second join never parked")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	gb.close()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %v with a parked join", d)
	}
	// kgo may retry NOT_COORDINATOR against the closed broker; either way
	// the request must not have been answered with anything else.
	select {
	case err := <-parked:
		if err != nil && !isConnErr(err) {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("parked join not answered after shutdown")
	}
}

func isConnErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, kerr.NotCoordinator)
}

// TestGroupChurn has members join, sync, heartbeat, commit and leave
// concurrently (raw protocol, several connections) to shake out races and
// deadlocks in the coordinator; at the end every member has left and the
// group is Empty with its offsets intact.
func TestGroupChurn(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 3)
	var wg sync.WaitGroup
	stop := time.Now().Add(1500 * time.Millisecond)
	for w := range 6 {
		cl := gb.client(t)
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				first, err := cl.Request(ctx, joinReq("churn", "", 9))
				cancel()
				if err != nil {
					t.Errorf("worker %d join: %v", w, err)
					return
				}
				id := first.(*kmsg.JoinGroupResponse).MemberID
				gen := int32(-1)
				for range 4 { // a few rounds of join/sync/heartbeat/commit
					jr := request[*kmsg.JoinGroupResponse](t, cl, joinReq("churn", id, 9))
					if jr.ErrorCode == kerr.UnknownMemberID.Code {
						break
					}
					if jr.ErrorCode != 0 {
						continue
					}
					gen = jr.Generation
					sr := kmsg.NewPtrSyncGroupRequest()
					sr.Group, sr.MemberID, sr.Generation = "churn", id, gen
					if jr.LeaderID == id {
						for _, m := range jr.Members {
							sr.GroupAssignment = append(sr.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: []byte(m.MemberID)})
						}
					}
					request[*kmsg.SyncGroupResponse](t, cl, sr)
					hb := kmsg.NewPtrHeartbeatRequest()
					hb.Group, hb.MemberID, hb.Generation = "churn", id, gen
					request[*kmsg.HeartbeatResponse](t, cl, hb)
					oc := kmsg.NewPtrOffsetCommitRequest()
					oc.Group, oc.MemberID, oc.Generation = "churn", id, gen
					tt := kmsg.NewOffsetCommitRequestTopic()
					tt.Topic = "t"
					p := kmsg.NewOffsetCommitRequestTopicPartition()
					p.Partition, p.Offset = int32(w%3), int64(w)
					tt.Partitions = append(tt.Partitions, p)
					oc.Topics = append(oc.Topics, tt)
					request[*kmsg.OffsetCommitResponse](t, cl, oc)
				}
				lr := kmsg.NewPtrLeaveGroupRequest()
				lr.Group = "churn"
				lr.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
				request[*kmsg.LeaveGroupResponse](t, cl, lr)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for {
		g, _ := gb.b.groups.Group("churn")
		st, n, pend := g.State, g.Members, g.Pending
		if st == "Empty" && n == 0 && pend == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group left in %v with %d members, %d pending", st, n, pend)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOffsetFetchRequireStable: with a transactional offset pending for
// one partition, require_stable (v8 groups form) gets
// UNSTABLE_OFFSET_COMMIT for that partition only.
func TestOffsetFetchRequireStable(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 2)
	r := initTxn(t, b, "stable", 4, 60000, -1, -1)
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.Version, ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = 3, "stable", r.ProducerID, r.ProducerEpoch, "g"
	wantCode(t, "add offsets", serve(t, b, ao).(*kmsg.AddOffsetsToTxnResponse).ErrorCode, nil)
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version, tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = 3, "stable", "g", r.ProducerID, r.ProducerEpoch, -1
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 1, Offset: 7, LeaderEpoch: -1}}}}
	wantCode(t, "txn offset commit", serve(t, b, tc).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, nil)
	fetch := func(stable bool) []kmsg.OffsetFetchResponseGroupTopicPartition {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version, of.RequireStable = 8, stable
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "g"
		tt := kmsg.NewOffsetFetchRequestGroupTopic()
		tt.Topic, tt.Partitions = "t", []int32{0, 1}
		g.Topics = []kmsg.OffsetFetchRequestGroupTopic{tt}
		of.Groups = []kmsg.OffsetFetchRequestGroup{g}
		return serve(t, b, of).(*kmsg.OffsetFetchResponse).Groups[0].Topics[0].Partitions
	}
	ps := fetch(true)
	wantCode(t, "stable partition", ps[0].ErrorCode, nil)
	wantCode(t, "pending partition", ps[1].ErrorCode, kerr.UnstableOffsetCommit)
	ps = fetch(false)
	wantCode(t, "without require_stable", ps[1].ErrorCode, nil)
}

// TestRebalanceTimeoutDropsLaggards: a member that does not rejoin within
// the rebalance timeout is dropped and the others get their generation; a
// MEMBER_ID_REQUIRED id that never comes back stops holding the join up
// after its session timeout.
func TestRebalanceTimeoutDropsLaggards(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever, shortSessions)
	join := func(cl *kgo.Client, member string) *kmsg.JoinGroupResponse {
		r := joinReq("g", member, 9)
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 5000, 400
		return request[*kmsg.JoinGroupResponse](t, cl, r)
	}
	clA, clB, clC := gb.client(t), gb.client(t), gb.client(t)
	a := join(clA, join(clA, "").MemberID)
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Group, sr.MemberID, sr.Generation = "g", a.MemberID, a.Generation
	request[*kmsg.SyncGroupResponse](t, clA, sr)

	// b joins: a must rejoin, and does; b is a laggard that got its id but
	// never comes back. The round completes only once b's pending id ages
	// out (session timeout 5s would be slow: use a short one for b).
	rb := joinReq("g", "", 9)
	rb.SessionTimeoutMillis, rb.RebalanceTimeoutMillis = 300, 400
	wantCode(t, "b first join", request[*kmsg.JoinGroupResponse](t, clB, rb).ErrorCode, kerr.MemberIDRequired)
	cID := join(clC, "").MemberID
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		r := joinReq("g", cID, 9)
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 5000, 400
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := clC.Request(ctx, r)
		if err != nil {
			resp = &kmsg.JoinGroupResponse{ErrorCode: -1}
		}
		done <- resp.(*kmsg.JoinGroupResponse)
	}()
	start := time.Now()
	ja := join(clA, a.MemberID)
	jc := <-done
	wantCode(t, "a rejoin", ja.ErrorCode, nil)
	wantCode(t, "c join", jc.ErrorCode, nil)
	if ja.Generation != a.Generation+1 || jc.Generation != ja.Generation {
		t.Fatalf("generations a=%d c=%d (before %d)", ja.Generation, jc.Generation, a.Generation)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("round completed after %v while b's id was still pending", d)
	}
	if ja.LeaderID == ja.MemberID && len(ja.Members) != 2 {
		t.Fatalf("leader sees %d members, want 2 (b never joined)", len(ja.Members))
	}

	// Both sync (a is the leader or not; either way the group goes
	// Stable), then c goes silent: a rejoins with changed metadata, which
	// starts a round that c never joins, so c is dropped at the rebalance
	// timeout.
	syncC := kmsg.NewPtrSyncGroupRequest()
	syncC.Group, syncC.MemberID, syncC.Generation = "g", cID, jc.Generation
	cSynced := make(chan struct{})
	go func() {
		defer close(cSynced)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = clC.Request(ctx, syncC)
	}()
	sr.MemberID, sr.Generation = a.MemberID, ja.Generation
	request[*kmsg.SyncGroupResponse](t, clA, sr)
	<-cSynced
	r := joinReq("g", a.MemberID, 9)
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 5000, 400
	r.Protocols[0].Metadata = append([]byte(nil), r.Protocols[0].Metadata...)
	r.Protocols[0].Metadata = append(r.Protocols[0].Metadata, 0) // changed metadata: rebalance
	start = time.Now()
	ja = request[*kmsg.JoinGroupResponse](t, clA, r)
	wantCode(t, "a alone", ja.ErrorCode, nil)
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Fatalf("round completed after %v, before c's rebalance timeout", d)
	}
	if len(ja.Members) != 1 || ja.LeaderID != a.MemberID {
		t.Fatalf("after c was dropped: leader %s members %d", ja.LeaderID, len(ja.Members))
	}
}

// TestOffsetCommitFsyncFailure: under durability always, a commit whose
// groupstore fsync fails is answered with an error for every partition,
// and OffsetFetch never answers the refused offset: the store is dead
// until restart, so it answers COORDINATOR_NOT_AVAILABLE (clients retry).
// After a power loss the acknowledged commit is there; after a clean
// restart it is too, or the refused one if its bytes reached the disk
// anyway (a commit answered with an error is "unknown", as in Kafka).
func TestOffsetCommitFsyncFailure(t *testing.T) {
	var fail atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, p string, n int) (int, error) {
		if fail.Load() && op == vfs.OpSync && strings.Contains(p, "group_offsets") {
			return 0, vfs.ErrInjected
		}
		return n, nil
	})
	mem := vfs.NewMem()
	fsys := vfs.NewFaultFS(mem, inj)
	b, err := New(Config{DataDir: "/data", FS: fsys, NodeID: 1, DefaultPartitions: 1,
		Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}})
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, b, "t", 2)
	commit := func(off int64) []int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Version, r.Group, r.Generation = 8, "g", -1
		tt := kmsg.NewOffsetCommitRequestTopic()
		tt.Topic = "t"
		for p := range int32(2) {
			pp := kmsg.NewOffsetCommitRequestTopicPartition()
			pp.Partition, pp.Offset = p, off
			tt.Partitions = append(tt.Partitions, pp)
		}
		r.Topics = append(r.Topics, tt)
		var codes []int16
		for _, p := range serve(t, b, r).(*kmsg.OffsetCommitResponse).Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		return codes
	}
	fetched := func() []int64 {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group = 7, "g"
		r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
		var out []int64
		for _, p := range serve(t, b, r).(*kmsg.OffsetFetchResponse).Topics[0].Partitions {
			out = append(out, p.Offset)
		}
		return out
	}
	if codes := commit(5); codes[0] != 0 || codes[1] != 0 {
		t.Fatalf("first commit: %v", codes)
	}
	fail.Store(true)
	for i, c := range commit(9) {
		if c == 0 {
			t.Fatalf("partition %d: commit acknowledged although its fsync failed", i)
		}
	}
	fail.Store(false)
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, "g"
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	resp := serve(t, b, r).(*kmsg.OffsetFetchResponse)
	wantCode(t, "fetch after the failure", resp.ErrorCode, kerr.CoordinatorNotAvailable)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.Offset == 9 {
				t.Fatalf("partition %d: OffsetFetch answers the refused offset 9", p.Partition)
			}
		}
	}
	crashed := mem.CrashClone()
	b.Close()
	reopen := func(fs vfs.FS) {
		var err error
		if b, err = New(Config{DataDir: "/data", FS: fs, NodeID: 1, DefaultPartitions: 1,
			Sync: logstore.SyncPolicy{Mode: logstore.SyncAlways}}); err != nil {
			t.Fatal(err)
		}
	}
	reopen(crashed)
	if got := fetched(); got[0] != 5 || got[1] != 5 {
		t.Fatalf("after a power loss OffsetFetch answers %v, want the acknowledged 5", got)
	}
	b.Close()
	reopen(fsys)
	defer b.Close()
	if got := fetched(); got[0] != got[1] || (got[0] != 5 && got[0] != 9) {
		t.Fatalf("after a clean restart OffsetFetch answers %v, want the acknowledged 5 (or the refused 9, whole)", got)
	}
}
