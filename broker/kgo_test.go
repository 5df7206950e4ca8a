package broker

// Tests that drive the broker with franz-go (kgo/kadm) over a real TCP
// listener from the protocol package.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t *testing.T, adm *kadm.Client, topic string, parts int32, configs map[string]*string) {
	t.Helper()
	resp, err := adm.CreateTopic(testCtx(t), parts, 1, configs, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
}

// consumeN reads n records from the start of topic.
func consumeN(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before timeout", len(out), n)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

func TestKgoProduceConsumeCodecs(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			mustCreate(t, adm, topic, 1, nil)
			cl := newClient(t, addr, kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
			ts := time.UnixMilli(1_700_000_000_000)
			var want []*kgo.Record
			for i := 0; i < 200; i++ {
				r := &kgo.Record{Value: bytes.Repeat([]byte{byte(i)}, i), Timestamp: ts.Add(time.Duration(i) * time.Millisecond)}
				switch i % 4 {
				case 0:
					r.Key = []byte(fmt.Sprintf("key-%d", i))
				case 1:
					r.Key = nil // null key
				case 2:
					r.Value = nil // null value
				case 3:
					r.Headers = []kgo.RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "h2", Value: nil}}
				}
				want = append(want, r)
			}
			if err := cl.ProduceSync(testCtx(t), want...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			got := consumeN(t, addr, topic, len(want))
			for i, g := range got {
				w := want[i]
				if g.Offset != int64(i) || !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) ||
					!bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) || !g.Timestamp.Equal(w.Timestamp) || len(g.Headers) != len(w.Headers) {
					t.Fatalf("record %d: got %+v want %+v", i, g, w)
				}
				for j := range g.Headers {
					if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) {
						t.Fatalf("record %d header %d differs", i, j)
					}
				}
			}
		})
	}
}

func TestKgoLargeRecords(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "big", 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("2000000")})
	mustCreate(t, adm, "small", 1, nil)
	val := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	cl := newClient(t, addr, kgo.ProducerBatchMaxBytes(1_200_000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "big", Value: val}, &kgo.Record{Topic: "big", Value: val}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := consumeN(t, addr, "big", 2, kgo.FetchMaxPartitionBytes(1<<10)) // smaller than a batch: still one comes
	if !bytes.Equal(got[0].Value, val) || !bytes.Equal(got[1].Value, val) {
		t.Fatal("1 MiB record differs")
	}
	// Above the default max.message.bytes (1048588): MESSAGE_TOO_LARGE.
	err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "small", Value: val}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("1 MiB into default topic: %v", err)
	}
}

// On real files, so fetches go out with sendfile.
func TestKgo64Partitions(t *testing.T) {
	b := newTestBroker(t, func(c *Config) { c.FS, c.DataDir = vfs.Default, t.TempDir() })
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "wide", 64, nil)
	cl := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := int32(0); p < 64; p++ {
		for i := 0; i < 3; i++ {
			recs = append(recs, &kgo.Record{Topic: "wide", Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))})
		}
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := consumeN(t, addr, "wide", len(recs))
	seen := map[string]bool{}
	for _, r := range got {
		if want := fmt.Sprintf("%d-%d", r.Partition, r.Offset); string(r.Value) != want {
			t.Fatalf("got %q at %d/%d", r.Value, r.Partition, r.Offset)
		}
		seen[string(r.Value)] = true
	}
	if len(seen) != len(recs) {
		t.Fatalf("%d distinct records, want %d", len(seen), len(recs))
	}
	ends, err := adm.ListEndOffsets(testCtx(t), "wide")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 3 {
			t.Errorf("end offset of %d: %d %v", o.Partition, o.Offset, o.Err)
		}
	})
}

func TestKgoListOffsetsByTime(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "times", 1, nil)
	cl := newClient(t, addr, kgo.DefaultProduceTopic("times"))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Minute)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		at   time.Time
		want int64
	}{
		{base.Add(-time.Minute), 0},
		{base, 0},
		{base.Add(90 * time.Second), 2},
		{base.Add(9 * time.Minute), 9},
		{base.Add(20 * time.Minute), -1},
	} {
		lo, err := adm.ListOffsetsAfterMilli(testCtx(t), tc.at.UnixMilli(), "times")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := lo.Lookup("times", 0)
		// kadm turns "no record at or after" into the end offset.
		want := tc.want
		if want == -1 {
			want = 10
		}
		if o.Err != nil || o.Offset != want {
			t.Errorf("after %v: offset %d err %v, want %d", tc.at.Sub(base), o.Offset, o.Err, want)
		}
	}
	starts, err := adm.ListStartOffsets(testCtx(t), "times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("times", 0); o.Offset != 0 {
		t.Errorf("start offset %d", o.Offset)
	}
}

// A consumer long-polling with a 5 s max wait gets a new record as soon as
// it is produced, not at the end of the wait.
func TestKgoLongPollWake(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "poll", 1, nil)
	consumer := newClient(t, addr, kgo.ConsumeTopics("poll"), kgo.FetchMaxWait(5*time.Second))
	producer := newClient(t, addr, kgo.DefaultProduceTopic("poll"))
	// Let the consumer reach its long poll first.
	if fs := consumer.PollFetches(func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}()); len(fs.Records()) != 0 {
		t.Fatal("records from an empty topic")
	}
	var sent atomic.Int64
	go func() {
		time.Sleep(100 * time.Millisecond)
		sent.Store(time.Now().UnixNano())
		producer.Produce(context.Background(), &kgo.Record{Value: []byte("now")}, nil)
	}()
	fs := consumer.PollFetches(testCtx(t))
	got := time.Now()
	if len(fs.Records()) != 1 || string(fs.Records()[0].Value) != "now" {
		t.Fatalf("records: %v errs %v", fs.Records(), fs.Errors())
	}
	lat := got.Sub(time.Unix(0, sent.Load()))
	t.Logf("produce-to-consume latency through a long poll: %v", lat)
	if lat >= 4*time.Second {
		t.Fatalf("long poll was not woken by the append: %v", lat)
	}
}

// cuttingHandler closes the connection instead of answering every n-th
// produce request (after the broker appended it), so the producer must
// retry batches the broker already has.
type cuttingHandler struct {
	b    *Broker
	n    int64
	seen atomic.Int64
	cuts atomic.Int64
}

func (h *cuttingHandler) Serve(ctx context.Context, req *protocol.Request) protocol.Reply {
	rep := h.b.Serve(ctx, req)
	if req.Key == 0 && h.seen.Add(1)%h.n == 0 {
		h.cuts.Add(1)
		return protocol.Reply{Err: fmt.Errorf("test: cutting the connection")}
	}
	return rep
}

func TestKgoIdempotentProducerSurvivesConnectionCuts(t *testing.T) {
	b := newTestBroker(t)
	h := &cuttingHandler{b: b, n: 3}
	srv, err := protocol.Listen(protocol.Config{Addr: "127.0.0.1:0"}, h)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close(context.Background()) })
	addr := srv.Addr().String()
	b.SetAdvertised("127.0.0.1", int32(srv.Addr().(*net.TCPAddr).Port))
	adm := newAdmin(t, addr)
	mustCreate(t, adm, "idem", 2, nil)
	cl := newClient(t, addr, kgo.DefaultProduceTopic("idem"), kgo.ProducerLinger(0), kgo.RecordRetries(100),
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }))
	const n = 400
	ctx := testCtx(t)
	errs := make(chan error, n)
	// Waves of ten, so that there are many produce requests to cut.
	for w := 0; w < n; w += 10 {
		for i := w; i < w+10; i++ {
			cl.Produce(ctx, &kgo.Record{Key: []byte{byte(i % 2)}, Value: []byte(fmt.Sprint(i))}, func(_ *kgo.Record, err error) { errs <- err })
		}
		for i := 0; i < 10; i++ {
			if err := <-errs; err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	if h.cuts.Load() == 0 {
		t.Fatal("no connection was cut; the test did not test anything")
	}
	got := consumeN(t, addr, "idem", n)
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("value %s stored %d times", v, c)
		}
	}
	ends, _ := adm.ListEndOffsets(testCtx(t), "idem")
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if len(seen) != n || total != n {
		t.Fatalf("distinct %d, stored %d, want %d (cuts: %d)", len(seen), total, n, h.cuts.Load())
	}
	t.Logf("%d connection cuts, no duplicates", h.cuts.Load())
}
