package broker

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/logstore"
)

func TestFetchErrors(t *testing.T) {
	b := newTestBroker(t)
	id := createTopic(t, b, "t", 1)
	produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")}))
	for _, tc := range []struct {
		name string
		req  *kmsg.FetchRequest
		want *kerr.Error
	}{
		{"unknown topic", fetchReq(11, "nope", [16]byte{}, 0, 0, 0, 1), kerr.UnknownTopicOrPartition},
		{"unknown partition", fetchReq(11, "t", [16]byte{}, 3, 0, 0, 1), kerr.UnknownTopicOrPartition},
		{"unknown topic id", fetchReq(13, "", [16]byte{9}, 0, 0, 0, 1), kerr.UnknownTopicID},
		{"offset past end", fetchReq(11, "t", [16]byte{}, 0, 2, 0, 1), kerr.OffsetOutOfRange},
		{"negative offset", fetchReq(11, "t", [16]byte{}, 0, -1, 0, 1), kerr.OffsetOutOfRange},
		{"ok by id", fetchReq(13, "", id, 0, 0, 0, 1), nil},
		{"ok at end", fetchReq(11, "t", [16]byte{}, 0, 1, 0, 1), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := serve(t, b, tc.req).(*kmsg.FetchResponse)
			p := resp.Topics[0].Partitions[0]
			want := int16(0)
			if tc.want != nil {
				want = tc.want.Code
			}
			if p.ErrorCode != want {
				t.Fatalf("code %v, want %v", kerr.ErrorForCode(p.ErrorCode), tc.want)
			}
			if p.RecordBatches == nil {
				t.Fatal("null records field (librdkafka 2.0 cannot parse it); Kafka sends empty")
			}
			if tc.want == kerr.OffsetOutOfRange && (p.HighWatermark != 1 || p.LogStartOffset != 0) {
				t.Fatalf("out of range answer lacks offsets: %+v", p)
			}
		})
	}
	// Fenced and unknown leader epochs (v9+).
	req := fetchReq(12, "t", [16]byte{}, 0, 0, 0, 1)
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
	if c := serve(t, b, req).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; c != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("future epoch: %v", kerr.ErrorForCode(c))
	}
}

func TestFetchByteLimits(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 2)
	val := bytes.Repeat([]byte("x"), 1000)
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 5; i++ {
			produce(t, b, "t", p, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: val}))
		}
	}
	count := func(raw []byte) int {
		n := 0
		if err := records.Split(raw, func(int, records.BatchHeader, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Partition max bytes of 1: the first partition still gets one batch
	// (KIP-74); the second gets nothing because the first used the budget.
	req := fetchReq(11, "t", [16]byte{}, 0, 0, 0, 1)
	req.Topics[0].Partitions[0].PartitionMaxBytes = 1
	p1 := kmsg.NewFetchRequestTopicPartition()
	p1.Partition, p1.PartitionMaxBytes = 1, 1
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, p1)
	resp := serve(t, b, req).(*kmsg.FetchResponse)
	if n0, n1 := count(resp.Topics[0].Partitions[0].RecordBatches), count(resp.Topics[0].Partitions[1].RecordBatches); n0 != 1 || n1 != 0 {
		t.Fatalf("batches %d/%d, want 1/0", n0, n1)
	}
	// MaxBytes 2500 across both partitions: two batches of ~1070 from the
	// first, none from the second (never a partial batch).
	req = fetchReq(11, "t", [16]byte{}, 0, 0, 0, 1)
	req.MaxBytes = 2500
	p1.PartitionMaxBytes = 1 << 20
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, p1)
	resp = serve(t, b, req).(*kmsg.FetchResponse)
	if n0, n1 := count(resp.Topics[0].Partitions[0].RecordBatches), count(resp.Topics[0].Partitions[1].RecordBatches); n0 != 2 || n1 != 0 {
		t.Fatalf("batches %d/%d, want 2/0", n0, n1)
	}
}

func TestFetchLongPoll(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 4)
	// Nothing to read: the reply must wait, not answer.
	req := fetchReq(11, "t", [16]byte{}, 2, 0, 5*time.Second, 1)
	for p := int32(0); p < 4; p++ {
		if p == 2 {
			continue
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = p, 1<<20
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	rep := serveReply(b, req)
	if rep.Wait == nil {
		t.Fatal("fetch with no data and max wait must long-poll")
	}
	start := time.Now()
	got := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, _ := rep.Wait()
		got <- resp.(*kmsg.FetchResponse) // small: copied, not a fetchBody
	}()
	time.Sleep(20 * time.Millisecond)
	produce(t, b, "t", 3, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("wake")}))
	resp := <-got
	if el := time.Since(start); el >= 5*time.Second {
		t.Fatalf("long poll not woken by the append: %v", el)
	}
	var found bool
	for _, p := range resp.Topics[0].Partitions {
		if p.Partition == 3 && len(p.RecordBatches) > 0 && p.HighWatermark == 1 {
			found = true
		}
	}
	if !found {
		t.Fatalf("woken fetch lacks the record: %+v", resp.Topics[0].Partitions)
	}

	// With nothing appended the poll ends at max wait with an empty answer.
	rep = serveReply(b, fetchReq(11, "t", [16]byte{}, 0, 0, 50*time.Millisecond, 1))
	start = time.Now()
	r, _ := rep.Wait()
	if el := time.Since(start); el < 40*time.Millisecond {
		t.Fatalf("returned after %v, before max wait", el)
	}
	if len(r.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatal("data from nowhere")
	}

	// Deleting the topic wakes the poll too.
	rep = serveReply(b, fetchReq(11, "t", [16]byte{}, 0, 0, 5*time.Second, 1))
	done := make(chan struct{})
	go func() { rep.Wait(); close(done) }()
	time.Sleep(10 * time.Millisecond)
	dreq := kmsg.NewPtrDeleteTopicsRequest()
	dreq.Version = 5
	dreq.TopicNames = []string{"t"}
	serve(t, b, dreq)
	select {
	case <-done:
	case <-time.After(4 * time.Second):
		t.Fatal("topic deletion did not wake the poll")
	}
}

// A fetch under durability "always" only sees what was fsynced, and an
// acks=all produce is answered once its bytes are durable.
func TestProduceFetchSyncAlways(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.Sync = logstore.SyncPolicy{Mode: logstore.SyncAlways} })
	createTopic(t, b, "t", 1)
	rep := serveReply(b, produceReq(11, -1, "t", [16]byte{}, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})))
	if rep.Wait == nil {
		t.Fatal("acks=all under SyncAlways must wait for durability")
	}
	resp, err := rep.Wait()
	if err != nil || resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("%v %+v", err, resp)
	}
	f := serve(t, b, fetchReq(11, "t", [16]byte{}, 0, 0, 0, 1)).(*kmsg.FetchResponse)
	if f.Topics[0].Partitions[0].HighWatermark != 1 {
		t.Fatalf("high watermark %d after acked produce", f.Topics[0].Partitions[0].HighWatermark)
	}
}

// MinBytes above what is there: the fetch waits (up to max wait) for more,
// then answers with what it has; once enough arrives it answers at once.
func TestFetchMinBytes(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "t", 1)
	produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("small")}))
	rep := serveReply(b, fetchReq(11, "t", [16]byte{}, 0, 0, 100*time.Millisecond, 10000))
	if rep.Wait == nil {
		t.Fatal("fetch below MinBytes must wait")
	}
	start := time.Now()
	r, _ := rep.Wait()
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Fatalf("answered after %v, before max wait", el)
	}
	if len(r.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatal("the data that was there is missing")
	}

	rep = serveReply(b, fetchReq(11, "t", [16]byte{}, 0, 0, 5*time.Second, 10000))
	done := make(chan kmsg.Response, 1)
	go func() { r, _ := rep.Wait(); done <- r }()
	time.Sleep(10 * time.Millisecond)
	produce(t, b, "t", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: bytes.Repeat([]byte("x"), 20000)}))
	select {
	case r := <-done:
		if fb, ok := r.(*fetchBody); ok {
			fb.Release()
		}
	case <-time.After(4 * time.Second):
		t.Fatal("reaching MinBytes did not end the wait")
	}
}
