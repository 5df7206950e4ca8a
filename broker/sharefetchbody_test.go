package broker

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/share"
	"github.com/minikafka/minikafka/internal/vfs"
)

// shareFetchResp is the ShareFetch response in a handler's reply, plain or
// written from pooled read buffers.
func shareFetchResp(r kmsg.Response) *kmsg.ShareFetchResponse {
	if sb, ok := r.(*share.FetchBody); ok {
		return sb.ShareFetchResponse
	}
	return r.(*kmsg.ShareFetchResponse)
}

// Two kgo share consumers over TCP read records of varying sizes (many
// batches, several reads per partition) from real segment files: each
// record arrives once, intact, and the answers went out from the pooled
// buffers (share.FetchBody), not through kmsg's encoder.
func TestShareFetchBodyOverTCP(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.FS, c.DataDir = vfs.Default, t.TempDir() })
	addr := listen(t, b)
	createTopic(t, b, "sfb", 3)
	admin := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if code := setGroupConfig(t, b, "g", "share.auto.offset.reset", "earliest"); code != 0 {
		t.Fatalf("share.auto.offset.reset: %v", code)
	}
	const n = 600
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100+(i*37)%9000) }
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "sfb", Partition: int32(i % 3), Key: fmt.Appendf(nil, "%d", i), Value: val(i)})
	}
	if err := admin.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	before := share.BodyWrites()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := map[int]int{}
	var wg sync.WaitGroup
	var failed error
	for range 2 {
		cl := newClient(t, addr, kgo.ConsumeTopics("sfb"), kgo.ShareGroup("g"), kgo.FetchMaxBytes(64<<10))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollRecords(ctx, 100)
				fs.EachRecord(func(r *kgo.Record) {
					var i int
					fmt.Sscanf(string(r.Key), "%d", &i)
					mu.Lock()
					defer mu.Unlock()
					if !bytes.Equal(r.Value, val(i)) && failed == nil {
						failed = fmt.Errorf("record %d: %d bytes differ", i, len(r.Value))
					}
					seen[i]++
				})
				mu.Lock()
				done := len(seen) == n
				mu.Unlock()
				if done {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	if len(seen) != n {
		t.Fatalf("%d of %d records arrived", len(seen), n)
	}
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("record %d arrived %d times", i, k)
		}
	}
	if share.BodyWrites() == before {
		t.Fatal("no ShareFetch answer went out from the pooled buffers")
	}
}
