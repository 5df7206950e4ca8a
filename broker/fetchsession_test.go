package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/fetchsession"
	"github.com/minikafka/minikafka/internal/records"
)

// sessionFetch builds a fetch of partitions parts of topic (offsets from
// offs) in the given session.
func sessionFetch(version int16, topic string, id [16]byte, session, epoch int32, offs map[int32]int64) *kmsg.FetchRequest {
	req := fetchReq(version, topic, id, 0, 0, 0, 1)
	req.SessionID, req.SessionEpoch = session, epoch
	req.Topics[0].Partitions = nil
	for p := int32(0); p < 8; p++ {
		off, ok := offs[p]
		if !ok {
			continue
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 1<<20
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	if len(req.Topics[0].Partitions) == 0 {
		req.Topics = nil
	}
	return req
}

// answered lists the partitions a fetch response carries, with their
// record counts.
func answered(t *testing.T, resp *kmsg.FetchResponse) map[int32]int {
	t.Helper()
	got := map[int32]int{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			n := 0
			if err := records.Split(rp.RecordBatches, func(_ int, h records.BatchHeader, _ []byte) error {
				n += int(h.NumRecords)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			got[rp.Partition] = n
		}
	}
	return got
}

func TestFetchSessionLifecycle(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 3)
	one := func(p int32) {
		produce(t, b, "t", p, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	}
	one(0)
	fetch := func(req *kmsg.FetchRequest) *kmsg.FetchResponse {
		t.Helper()
		return serve(t, b, req).(*kmsg.FetchResponse)
	}

	// Epoch 0 opens a session and answers in full.
	resp := fetch(sessionFetch(12, "t", [16]byte{}, 0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}))
	if resp.ErrorCode != 0 || resp.SessionID == 0 {
		t.Fatalf("open: err %v id %d", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID)
	}
	if got := answered(t, resp); fmt.Sprint(got) != "map[0:1 1:0 2:0]" {
		t.Fatalf("full answer %v", got)
	}
	id := resp.SessionID

	// Epoch 1 moves partition 0 past its record: nothing changed, so the
	// incremental answer is empty.
	resp = fetch(sessionFetch(12, "t", [16]byte{}, id, 1, map[int32]int64{0: 1}))
	if resp.ErrorCode != 0 || resp.SessionID != id || len(resp.Topics) != 0 {
		t.Fatalf("idle incremental: err %v id %d topics %d", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, len(resp.Topics))
	}

	// A record on partition 2 (not named by the request) comes back alone.
	one(2)
	resp = fetch(sessionFetch(12, "t", [16]byte{}, id, 2, nil))
	if got := answered(t, resp); fmt.Sprint(got) != "map[2:1]" {
		t.Fatalf("incremental answer %v, want only partition 2", got)
	}

	// Partition 0 stays at offset 1 in the session: a new record there
	// is answered although this request does not name partition 0.
	one(0)
	resp = fetch(sessionFetch(12, "t", [16]byte{}, id, 3, map[int32]int64{2: 1}))
	if got := answered(t, resp); fmt.Sprint(got) != "map[0:1]" {
		t.Fatalf("incremental answer %v, want only partition 0", got)
	}

	// A stale or future epoch.
	for _, e := range []int32{3, 9} {
		resp = fetch(sessionFetch(12, "t", [16]byte{}, id, e, nil))
		if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
			t.Fatalf("epoch %d: %v", e, kerr.ErrorForCode(resp.ErrorCode))
		}
	}

	// Forgetting partition 1: its new records are not sent.
	one(1)
	req := sessionFetch(12, "t", [16]byte{}, id, 4, map[int32]int64{0: 2})
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic, ft.Partitions = "t", []int32{1}
	req.ForgottenTopics = append(req.ForgottenTopics, ft)
	if got := answered(t, fetch(req)); len(got) != 0 {
		t.Fatalf("after forgetting partition 1: %v", got)
	}

	// The same session by topic ID (v13) is inconsistent.
	resp = fetch(sessionFetch(13, "", b.lookupTopic("t", [16]byte{}).id, id, 5, nil))
	if resp.ErrorCode != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("v13 on a name session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	// Deleting the topic: the error is in every answer.
	deleteTopicByName(t, b, "t")
	for e := int32(5); e <= 6; e++ {
		resp = fetch(sessionFetch(12, "t", [16]byte{}, id, e, nil))
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 ||
			resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("deleted topic, epoch %d: %+v", e, resp)
		}
	}

	// Epoch -1 closes the session and is answered sessionless.
	resp = fetch(sessionFetch(12, "t", [16]byte{}, id, -1, nil))
	if resp.ErrorCode != 0 || resp.SessionID != 0 {
		t.Fatalf("close: err %v id %d", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID)
	}
	resp = fetch(sessionFetch(12, "t", [16]byte{}, id, 7, nil))
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if n := b.fetchSessions.Len(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
}

func deleteTopicByName(t *testing.T, b *Broker, name string) {
	t.Helper()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 5
	req.TopicNames = []string{name}
	resp := serve(t, b, req).(*kmsg.DeleteTopicsResponse)
	if c := resp.Topics[0].ErrorCode; c != 0 {
		t.Fatalf("delete %s: %v", name, kerr.ErrorForCode(c))
	}
}

func TestFetchSessionByTopicID(t *testing.T) {
	b := newTestBroker(t)
	id := createTopic(t, b, "t", 2)
	produce(t, b, "t", 1, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	resp := serve(t, b, sessionFetch(13, "", id, 0, 0, map[int32]int64{0: 0, 1: 0})).(*kmsg.FetchResponse)
	if resp.SessionID == 0 || resp.Topics[0].TopicID != id {
		t.Fatalf("open by id: %+v", resp)
	}
	produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	req := sessionFetch(13, "", id, resp.SessionID, 1, map[int32]int64{1: 1})
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.TopicID, ft.Partitions = id, []int32{1}
	req.ForgottenTopics = append(req.ForgottenTopics, ft)
	req.Topics = nil
	resp2 := serve(t, b, req).(*kmsg.FetchResponse)
	if got := answered(t, resp2); fmt.Sprint(got) != "map[0:1]" || resp2.Topics[0].TopicID != id {
		t.Fatalf("incremental by id: %v", got)
	}
	// Partition 1 is forgotten: a record there goes unanswered.
	produce(t, b, "t", 1, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	resp3 := serve(t, b, sessionFetch(13, "", id, resp.SessionID, 2, map[int32]int64{0: 1})).(*kmsg.FetchResponse)
	if got := answered(t, resp3); len(got) != 0 {
		t.Fatalf("forgotten partition answered: %v", got)
	}
}

func TestFetchSessionCacheEviction(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 3)
	b.fetchSessions.SetMax(1)
	now := time.Now()
	b.now = func() time.Time { return now }
	open := func(parts map[int32]int64) int32 {
		return serve(t, b, sessionFetch(12, "t", [16]byte{}, 0, 0, parts)).(*kmsg.FetchResponse).SessionID
	}
	first := open(map[int32]int64{0: 0, 1: 0})
	if first == 0 {
		t.Fatal("first session declined")
	}
	// Full cache, the newcomer is no larger and the holder is fresh:
	// declined with session ID 0, answered in full all the same.
	if id := open(map[int32]int64{2: 0}); id != 0 {
		t.Fatalf("small newcomer got session %d", id)
	}
	// A larger newcomer displaces the smaller session.
	big := open(map[int32]int64{0: 0, 1: 0, 2: 0})
	if big == 0 || b.fetchSessions.Get(first) != nil {
		t.Fatalf("large newcomer: id %d, first still cached %v", big, b.fetchSessions.Get(first) != nil)
	}
	// Once idle past the eviction time, any newcomer displaces it.
	now = now.Add(fetchsession.EvictAfter + time.Second)
	if id := open(map[int32]int64{0: 0}); id == 0 || b.fetchSessions.Get(big) != nil {
		t.Fatalf("stale session not evicted: new id %d", id)
	}
}

// TestFetchSessionRotation: with a response byte limit that one partition
// fills, every partition still gets its turn.
func TestFetchSessionRotation(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 3)
	val := make([]byte, 1000)
	for p := int32(0); p < 3; p++ {
		for i := 0; i < 3; i++ {
			produce(t, b, "t", p, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: val}))
		}
	}
	offs := map[int32]int64{0: 0, 1: 0, 2: 0}
	req := sessionFetch(12, "t", [16]byte{}, 0, 0, offs)
	req.MaxBytes = 1 // one batch per answer
	resp := serve(t, b, req).(*kmsg.FetchResponse)
	id := resp.SessionID
	got := answered(t, resp)
	served := map[int32]int{}
	for epoch := int32(1); ; epoch++ {
		changed := map[int32]int64{}
		for p, n := range got {
			if n > 0 {
				served[p] += n
				offs[p] += int64(n)
				changed[p] = offs[p]
			}
		}
		if epoch == 3 {
			// Three answers of one batch each: one per partition.
			if fmt.Sprint(served) != "map[0:1 1:1 2:1]" {
				t.Fatalf("records served per partition after 3 answers: %v, want 1 each", served)
			}
		}
		if epoch == 10 {
			break
		}
		req = sessionFetch(12, "t", [16]byte{}, id, epoch, changed)
		req.MaxBytes = 1
		resp = serve(t, b, req).(*kmsg.FetchResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("epoch %d: %v", epoch, kerr.ErrorForCode(resp.ErrorCode))
		}
		got = answered(t, resp)
	}
	if fmt.Sprint(served) != "map[0:3 1:3 2:3]" {
		t.Fatalf("records served per partition %v, want 3 each", served)
	}
}

// TestFetchSessionsWithKgo: kgo uses fetch sessions by default; a consumer
// of 16 partitions with producers running gets every record exactly once,
// through incremental fetches.
func TestFetchSessionsWithKgo(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	createTopic(t, b, "s", 16)
	const perPart = 200
	prod := newClient(t, addr, kgo.DefaultProduceTopic("s"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cons := newClient(t, addr, kgo.ConsumeTopics("s"), kgo.FetchMaxWait(50*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < perPart; i++ {
			for p := int32(0); p < 16; p++ {
				if p%3 == int32(i%3) { // uneven: some partitions idle each round
					continue
				}
				prod.Produce(ctx, &kgo.Record{Partition: p, Value: []byte(fmt.Sprintf("%d/%d", p, i))}, nil)
			}
			if i%20 == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		if err := prod.Flush(ctx); err != nil {
			t.Error(err)
		}
	}()
	want := 0
	for i := 0; i < perPart; i++ {
		for p := 0; p < 16; p++ {
			if p%3 != i%3 {
				want++
			}
		}
	}
	seen := map[string]bool{}
	for len(seen) < want && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			k := string(r.Value)
			if seen[k] {
				t.Errorf("duplicate %s at offset %d", k, r.Offset)
			}
			seen[k] = true
		})
	}
	wg.Wait()
	if len(seen) != want {
		t.Fatalf("consumed %d of %d", len(seen), want)
	}
	if b.fetchSessions.Len() == 0 {
		t.Fatal("kgo's fetch session was not kept")
	}
}
