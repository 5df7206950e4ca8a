package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/minikafkatest"
)

// Batches of every shape reach the upstream intact: large compressed
// batches shipped as they are, runs of one-record batches merged, and
// LogAppendTime batches re-encoded with the local append time as each
// record's timestamp.
func TestUplinkShipsEveryBatchShape(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("s-*"))
	ctx := context.Background()
	adm := kadm.NewClient(minikafkatest.Client(t, local))
	if _, err := adm.CreateTopic(ctx, 2, -1, nil, "s-create"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"message.timestamp.type": kadm.StringPtr("LogAppendTime")}, "s-append"); err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_600_000_000_000)
	mk := func(topic string, i int) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: []byte("k" + strconv.Itoa(i)),
			Value: []byte(fmt.Sprintf("v%06d", i)), Timestamp: base.Add(time.Duration(i) * time.Second),
			Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}, {Key: "nil"}}}
	}
	const big, small = 1000, 100
	// Large batches, one client per codec (the codec is a client option).
	codecs := []kgo.CompressionCodec{kgo.SnappyCompression(), kgo.ZstdCompression(), kgo.NoCompression()}
	n := 0
	for _, codec := range codecs {
		cl := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(50*time.Millisecond))
		for j := 0; j < big; j++ {
			cl.Produce(ctx, mk("s-create", n), func(_ *kgo.Record, err error) {
				if err != nil {
					t.Error(err)
				}
			})
			n++
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// One record per batch, spooled while the upstream is down so that
	// the forwarder finds them all pending: merged before shipping.
	waitFor(t, 20*time.Second, "the large batches shipped", func() bool { return local.ForwardStats()[0].Lag == 0 && local.ForwardStats()[1].Lag == 0 })
	up.Stop()
	smallFrom := n
	one := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.GzipCompression()))
	for j := 0; j < small; j++ {
		if err := one.ProduceSync(ctx, mk("s-create", n)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	up.Start()
	before := time.Now().Truncate(time.Millisecond)
	for j := 0; j < 20; j++ {
		r := mk("s-append", j)
		r.Partition = 0
		if err := one.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()

	got := readAll(t, up.addr, "s-create", 2, n, 20*time.Second)
	for p := int32(0); p < 2; p++ {
		rs := got[p]
		if len(rs) != n/2 {
			t.Fatalf("partition %d: %d records upstream, want %d", p, len(rs), n/2)
		}
		for j, r := range rs {
			w := mk("s-create", 2*j+int(p))
			if string(r.Key) != string(w.Key) || string(r.Value) != string(w.Value) || !r.Timestamp.Equal(w.Timestamp) ||
				len(r.Headers) != 2 || string(r.Headers[0].Value) != string(w.Headers[0].Value) || r.Headers[1].Value != nil {
				t.Fatalf("partition %d record %d: key %q value %q ts %v headers %v; want %q %q %v", p, j, r.Key, r.Value, r.Timestamp, r.Headers, w.Key, w.Value, w.Timestamp)
			}
		}
	}
	// The small ones arrived in a few merged batches, not one each.
	// Fetch v12 names topics (v13 wants topic ids).
	upCl, err := kgo.NewClient(kgo.SeedBrokers(up.addr), kgo.MaxVersions(kversion.V3_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer upCl.Close()
	for p := int32(0); p < 2; p++ {
		req := kmsg.NewPtrFetchRequest()
		req.MaxBytes, req.MaxWaitMillis, req.ReplicaID = 64<<20, 0, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "s-create"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, int64(smallFrom/2), 64<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, upCl)
		if err != nil {
			t.Fatal(err)
		}
		batches, recs := 0, 0
		if err := records.Split(resp.Topics[0].Partitions[0].RecordBatches, func(_ int, h records.BatchHeader, _ []byte) error {
			batches++
			recs += int(h.NumRecords)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if recs != small/2 || batches > 5 {
			t.Errorf("partition %d: the %d one-record batches arrived as %d batches of %d records", p, small/2, batches, recs)
		}
	}
	ga := readAll(t, up.addr, "s-append", 1, 20, 20*time.Second)[0]
	if len(ga) != 20 {
		t.Fatalf("s-append: %d records upstream", len(ga))
	}
	for j, r := range ga {
		if string(r.Value) != fmt.Sprintf("v%06d", j) || r.Timestamp.Before(before) || r.Timestamp.After(after) {
			t.Fatalf("s-append record %d: value %q ts %v, want the local append time, in [%v, %v]", j, r.Value, r.Timestamp, before, after)
		}
	}
}

// A forwarded topic that gains partitions locally gains them upstream
// before records of the new partitions are shipped there.
func TestUplinkPartitionGrowth(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("grow"), minikafka.WithTopic("grow", 2))
	cl := minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	produce := func(parts int32, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "grow", Partition: int32(i) % parts, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(2, 0, 10)
	if got := readAll(t, up.addr, "grow", 2, 10, 20*time.Second); len(got[0])+len(got[1]) != 10 {
		t.Fatalf("before growth: %d+%d records upstream", len(got[0]), len(got[1]))
	}
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, "grow"); err != nil {
		t.Fatal(err)
	}
	cl = minikafkatest.Client(t, local, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce(4, 10, 30)
	upCl, err := kgo.NewClient(kgo.SeedBrokers(up.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer upCl.Close()
	// A raw metadata request: kadm's answers may be cached for seconds.
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("grow")}}
	resp, err := req.RequestWith(ctx, upCl)
	if err != nil {
		t.Fatal(err)
	}
	// Records of partitions 2 and 3 were acknowledged locally; their
	// forwarders may still be at work, but the upstream partitions must
	// exist by the time anything was shipped to them.
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 4 {
		waitFor(t, 10*time.Second, "upstream with 4 partitions", func() bool {
			resp, err := req.RequestWith(ctx, upCl)
			return err == nil && len(resp.Topics) == 1 && len(resp.Topics[0].Partitions) == 4
		})
	}
	got := readAll(t, up.addr, "grow", 4, 30, 20*time.Second)
	for p := int32(0); p < 4; p++ {
		var want []string
		for i := 0; i < 30; i++ {
			if (i < 10 && int32(i)%2 == p) || (i >= 10 && int32(i)%4 == p) {
				want = append(want, strconv.Itoa(i))
			}
		}
		var have []string
		for _, r := range got[p] {
			have = append(have, string(r.Value))
		}
		if fmt.Sprint(have) != fmt.Sprint(want) {
			t.Errorf("upstream partition %d holds %v, want %v", p, have, want)
		}
	}
}

// An upstream rebuilt empty (topic and producer state gone) gets the topic
// again and accepts the forwarder under a new producer id: everything
// produced after the loss arrives, in order.
func TestUplinkUpstreamLosesState(t *testing.T) {
	up := newUpstream(t)
	local := minikafkatest.New(t, minikafka.WithUpstream(up.addr), minikafka.WithForward("lost"), minikafka.WithTopic("lost", 1))
	cl := minikafkatest.Client(t, local)
	ctx := context.Background()
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lost", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 50)
	if got := readAll(t, up.addr, "lost", 1, 50, 20*time.Second); len(got[0]) != 50 {
		t.Fatalf("%d records upstream", len(got[0]))
	}
	up.Stop()
	up.dir = t.TempDir()
	up.Start()
	produce(50, 100)
	got := readAll(t, up.addr, "lost", 1, 50, 20*time.Second)[0]
	if len(got) != 50 {
		t.Fatalf("%d records in the rebuilt upstream, want 50 (stats %+v)", len(got), local.ForwardStats())
	}
	for j, r := range got {
		if string(r.Value) != strconv.Itoa(50+j) {
			t.Fatalf("record %d is %s", j, r.Value)
		}
	}
}
