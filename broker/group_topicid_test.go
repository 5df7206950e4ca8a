package broker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/logstore"
	"github.com/minikafka/minikafka/protocol"
)

// TestOffsetsByTopicID: OffsetCommit v10 and OffsetFetch v10 name topics
// by id over TCP; an id no topic has is UNKNOWN_TOPIC_ID on every one of
// its partitions; a fetch of all offsets lists topics by id; the offsets
// are the ones the name-based versions see.
func TestOffsetsByTopicID(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 3)
	cl := gb.client(t)
	id := topicIDFor(t, cl, "t", [16]byte{})
	if id == ([16]byte{}) {
		t.Fatal("topic has no id")
	}
	bogus := [16]byte{1, 2, 3}

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group = "g"
	for _, tid := range [][16]byte{id, bogus} {
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.TopicID = tid
		for p := range int32(2) {
			cp := kmsg.NewOffsetCommitRequestTopicPartition()
			cp.Partition, cp.Offset, cp.LeaderEpoch = p, 100+int64(p), 7
			ct.Partitions = append(ct.Partitions, cp)
		}
		oc.Topics = append(oc.Topics, ct)
	}
	ocr := request[*kmsg.OffsetCommitResponse](t, cl, oc)
	if ocr.Version != 10 {
		t.Fatalf("kgo sent OffsetCommit v%d, want v10", ocr.Version)
	}
	if len(ocr.Topics) != 2 || ocr.Topics[0].TopicID != id || ocr.Topics[1].TopicID != bogus {
		t.Fatalf("commit response topics: %+v", ocr.Topics)
	}
	for _, p := range ocr.Topics[0].Partitions {
		wantCode(t, "commit by id", p.ErrorCode, nil)
	}
	for _, p := range ocr.Topics[1].Partitions {
		wantCode(t, "commit by unknown id", p.ErrorCode, kerr.UnknownTopicID)
	}
	// Unknown ids are answered before the group is looked at, as Kafka.
	stale := *oc
	stale.Topics = oc.Topics[1:]
	stale.Group, stale.Generation, stale.MemberID = "nobody", 5, "m"
	wantCode(t, "unknown id with a bad generation",
		request[*kmsg.OffsetCommitResponse](t, cl, &stale).Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicID)

	// OffsetFetch v10 by id, and all offsets.
	of := kmsg.NewPtrOffsetFetchRequest()
	byID := kmsg.NewOffsetFetchRequestGroup()
	byID.Group = "g"
	for _, tid := range [][16]byte{id, bogus} {
		ft := kmsg.NewOffsetFetchRequestGroupTopic()
		ft.TopicID, ft.Partitions = tid, []int32{0, 1, 2}
		byID.Topics = append(byID.Topics, ft)
	}
	all := kmsg.NewOffsetFetchRequestGroup()
	all.Group = "g"
	of.Groups = []kmsg.OffsetFetchRequestGroup{byID, all}
	// Straight to the broker's connection: kgo's sharder would rewrite
	// the ids it does not know.
	ofr := fetchV10(t, gb, of)
	g := ofr.Groups[0]
	if len(g.Topics) != 2 || g.Topics[0].TopicID != id || g.Topics[1].TopicID != bogus {
		t.Fatalf("fetch by id topics: %+v", g.Topics)
	}
	want := []int64{100, 101, -1}
	for i, p := range g.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Offset != want[i] || (p.Offset >= 0 && p.LeaderEpoch != 7) {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
	for _, p := range g.Topics[1].Partitions {
		wantCode(t, "fetch by unknown id", p.ErrorCode, kerr.UnknownTopicID)
		if p.Offset != -1 {
			t.Fatalf("unknown id has offset %d", p.Offset)
		}
	}
	if a := ofr.Groups[1].Topics; len(a) != 1 || a[0].TopicID != id || len(a[0].Partitions) != 2 {
		t.Fatalf("all offsets by id: %+v", a)
	}

	// The name-based versions see the same offsets.
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.Lookup("t", 1); !ok || o.At != 101 {
		t.Fatalf("kadm sees %+v", got)
	}
	v9 := kmsg.NewPtrOffsetFetchRequest()
	v9.Version = 9
	nt := kmsg.NewOffsetFetchRequestGroupTopic()
	nt.Topic, nt.Partitions = "t", []int32{0}
	v9.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g", Topics: []kmsg.OffsetFetchRequestGroupTopic{nt}}}
	if p := serve(t, gb.b, v9).(*kmsg.OffsetFetchResponse).Groups[0].Topics[0]; p.Topic != "t" || p.Partitions[0].Offset != 100 {
		t.Fatalf("v9 by name: %+v", p)
	}

	// Deleting the topic leaves no offsets and makes its id unknown.
	if _, err := adm.DeleteTopics(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	ofr = fetchV10(t, gb, of)
	wantCode(t, "deleted topic's id", ofr.Groups[0].Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicID)
	if n := len(ofr.Groups[1].Topics); n != 0 {
		t.Fatalf("all offsets after deletion: %+v", ofr.Groups[1].Topics)
	}
}

// fetchV10 sends an OffsetFetch v10 on a raw connection to the broker.
func fetchV10(t *testing.T, gb *groupBroker, of *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	t.Helper()
	cl := gb.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Broker(0).RetriableRequest(ctx, of)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.OffsetFetchResponse)
	if r.Version != 10 || len(r.Groups) != len(of.Groups) {
		t.Fatalf("OffsetFetch v%d with %d groups", r.Version, len(r.Groups))
	}
	return r
}

// TestTxnOffsetCommitByTopicID: TxnOffsetCommit v6 names topics by id
// over TCP; unknown ids are UNKNOWN_TOPIC_ID; the staged offset becomes
// the group's offset when the transaction commits.
func TestTxnOffsetCommitByTopicID(t *testing.T) {
	gb := startGroupBroker(t, t.TempDir(), logstore.SyncNever)
	gb.createTopic(t, "t", 1)
	cl := gb.client(t)
	id := topicIDFor(t, cl, "t", [16]byte{})

	ip := kmsg.NewPtrInitProducerIDRequest()
	tx := "tx"
	ip.TransactionalID, ip.TransactionTimeoutMillis = &tx, 60000
	ipr := request[*kmsg.InitProducerIDResponse](t, cl, ip)
	wantCode(t, "init producer id", ipr.ErrorCode, nil)
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = tx, ipr.ProducerID, ipr.ProducerEpoch, "g"
	wantCode(t, "add offsets", request[*kmsg.AddOffsetsToTxnResponse](t, cl, ao).ErrorCode, nil)

	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = tx, "g", ipr.ProducerID, ipr.ProducerEpoch
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{
		{TopicID: id, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 33, LeaderEpoch: -1}}},
		{TopicID: [16]byte{9}, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}},
	}
	tcr := request[*kmsg.TxnOffsetCommitResponse](t, cl, tc)
	if tcr.Version != 6 {
		t.Fatalf("kgo sent TxnOffsetCommit v%d, want v6", tcr.Version)
	}
	if tcr.Topics[0].TopicID != id || tcr.Topics[1].TopicID != ([16]byte{9}) {
		t.Fatalf("response topics %+v", tcr.Topics)
	}
	wantCode(t, "txn commit by id", tcr.Topics[0].Partitions[0].ErrorCode, nil)
	wantCode(t, "txn commit by unknown id", tcr.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicID)

	et := kmsg.NewPtrEndTxnRequest()
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = tx, ipr.ProducerID, ipr.ProducerEpoch, true
	wantCode(t, "end txn", request[*kmsg.EndTxnResponse](t, cl, et).ErrorCode, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if o, ok := gb.b.groups.Committed("g", "t", 0); ok && o.Offset == 33 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("committed transactional offset never reached the group")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKgoCommitsByTopicID: a kgo group consumer commits with OffsetCommit
// v10 and a second consumer of the group resumes from those offsets
// (OffsetFetch v10), for the classic and the KIP-848 protocol.
func TestKgoCommitsByTopicID(t *testing.T) {
	for _, proto := range []string{"classic", "consumer"} {
		t.Run(proto, func(t *testing.T) {
			rec := &versionRecorder{seen: map[int16][]int16{}}
			gb := startWrappedGroupBroker(t, t.TempDir(), logstore.SyncNever, func(h protocol.Handler) protocol.Handler { rec.h = h; return rec },
				func(c *Config) { c.Groups.ConsumerHeartbeatInterval = 200 * time.Millisecond })
			gb.createTopic(t, "t", 2)
			gb.produce(t, "t", 2, 10)
			opts := []kgo.Opt{kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.DisableAutoCommit(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
			if proto == "consumer" {
				opts = append(opts, kgo.ServerSideBalancer())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c1 := gb.client(t, opts...)
			n := 0
			for n < 12 {
				fs := c1.PollRecords(ctx, 12-n)
				if err := ctx.Err(); err != nil {
					t.Fatalf("consumed %d: %v", n, err)
				}
				n += fs.NumRecords()
			}
			if err := c1.CommitUncommittedOffsets(ctx); err != nil {
				t.Fatal(err)
			}
			c1.Close()
			if v := rec.versions(8); len(v) == 0 || v[len(v)-1] != 10 {
				t.Fatalf("OffsetCommit versions sent: %v", v)
			}
			// The rest, exactly: 20 records in all.
			c2 := gb.client(t, opts...)
			for n < 20 {
				fs := c2.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					t.Fatalf("consumed %d: %v", n, err)
				}
				n += fs.NumRecords()
			}
			if n != 20 {
				t.Fatalf("consumed %d records in all, want 20", n)
			}
			if v := rec.versions(9); len(v) == 0 || v[len(v)-1] != 10 {
				t.Fatalf("OffsetFetch versions sent: %v", v)
			}
		})
	}
}

// versionRecorder records the version of every request by key.
type versionRecorder struct {
	h    protocol.Handler
	mu   sync.Mutex
	seen map[int16][]int16
}

func (r *versionRecorder) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	r.mu.Lock()
	r.seen[req.Key] = append(r.seen[req.Key], req.Version)
	r.mu.Unlock()
	return r.h.Serve(ctx, req)
}

func (r *versionRecorder) versions(key int16) []int16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int16(nil), r.seen[key]...)
}
