package broker

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/internal/records"
)

// deadAddr returns an address nothing listens on (until a test starts
// something there).
func deadAddr(t *testing.T) (string, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	return addr.String(), addr.Port
}

// While the upstream is unreachable, forwarded records are acknowledged,
// readable locally with stable offsets and listed by ListOffsets; from 90 %
// spool pressure produce responses carry throttle_time_ms, and a full spool
// answers the retriable KAFKA_STORAGE_ERROR without losing anything. Once
// the upstream appears, everything is shipped and the log start moves.
func TestUplinkBackpressureWhileUpstreamDown(t *testing.T) {
	addr, port := deadAddr(t)
	b := newTestBroker(t, func(c *Config) {
		c.Uplink = &uplink.Config{Brokers: []string{addr}, Forward: []uplink.ForwardRule{{Pattern: "f-*"}},
			SpoolMaxBytes: 64 << 10,
			ClientOpts:    []kgo.Opt{kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}}
	})
	createTopic(t, b, "f-1", 1)

	// Incompressible values, so the spool's use does not shrink when
	// segments are compressed and the pressure only grows.
	value := make([]byte, 1000)
	rand.New(rand.NewSource(1)).Read(value)
	var acked int
	var throttled bool
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("spool never filled")
		}
		copy(value, fmt.Sprintf("%06d", i))
		batch := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{key: []byte(strconv.Itoa(i)), value: value})
		resp := serve(t, b, produceReq(11, 1, "f-1", [16]byte{}, 0, batch)).(*kmsg.ProduceResponse)
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			if p.ErrorCode != kerr.KafkaStorageError.Code {
				t.Fatalf("produce %d: %v", i, kerr.ErrorForCode(p.ErrorCode))
			}
			if !kerr.IsRetriable(kerr.ErrorForCode(p.ErrorCode)) {
				t.Fatal("full spool error is not retriable")
			}
			if resp.ThrottleMillis <= 0 {
				t.Errorf("full spool: throttle %d", resp.ThrottleMillis)
			}
			break
		}
		if p.BaseOffset != int64(i) {
			t.Fatalf("produce %d: offset %d", i, p.BaseOffset)
		}
		if resp.ThrottleMillis > 0 {
			throttled = true
		} else if throttled {
			t.Fatalf("produce %d: throttle went away while the upstream is down", i)
		}
		acked++
	}
	if !throttled {
		t.Error("no produce response carried throttle_time_ms before the spool was full")
	}
	st := b.ForwardStats()
	if len(st) != 1 || st[0].Lag != int64(acked) || st[0].Pressure < 0.9 || st[0].LogStartOffset != 0 {
		t.Fatalf("stats while upstream down: %+v", st)
	}
	for deadline := time.Now().Add(10 * time.Second); b.ForwardStats()[0].LastError == ""; {
		if time.Now().After(deadline) {
			t.Fatal("stats never report the unreachable upstream")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Local consumers read the spooled records with their offsets.
	readLocal := func(from int64) []int64 {
		var offs []int64
		for off := from; ; {
			resp := serve(t, b, fetchReq(12, "f-1", [16]byte{}, 0, off, 0, 0)).(*kmsg.FetchResponse)
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 {
				t.Fatalf("fetch at %d: %v", off, kerr.ErrorForCode(p.ErrorCode))
			}
			if p.HighWatermark != int64(acked) {
				t.Fatalf("high watermark %d, want %d", p.HighWatermark, acked)
			}
			if len(p.RecordBatches) == 0 {
				return offs
			}
			err := records.Split(p.RecordBatches, func(_ int, h records.BatchHeader, batch []byte) error {
				if _, err := records.Validate(batch); err != nil {
					return err
				}
				it, err := records.BatchRecords(batch, 1<<20)
				if err != nil {
					return err
				}
				for it.Next() {
					if got, want := string(it.Record().Value[:6]), fmt.Sprintf("%06d", h.BaseOffset); got != want {
						return fmt.Errorf("offset %d holds %s", h.BaseOffset, got)
					}
				}
				offs = append(offs, h.BaseOffset)
				off = h.LastOffset() + 1
				return it.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if offs := readLocal(0); len(offs) != acked || offs[len(offs)-1] != int64(acked-1) {
		t.Fatalf("local fetch: %d batches, want %d", len(offs), acked)
	}
	if offs := readLocal(5); len(offs) != acked-5 || offs[0] != 5 {
		t.Fatalf("local fetch from 5: %v", offs)
	}
	listed := func(ts int64) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = 7
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "f-1"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return serve(t, b, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset
	}
	if e, l := listed(-2), listed(-1); e != 0 || l != int64(acked) {
		t.Fatalf("list offsets: earliest %d latest %d", e, l)
	}

	// The upstream comes up: everything is shipped, in order, and the log
	// start offset reaches the end.
	up, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	deadline := time.Now().Add(20 * time.Second)
	for listed(-2) != int64(acked) {
		if time.Now().After(deadline) {
			t.Fatalf("log start offset stuck at %d (stats %+v)", listed(-2), b.ForwardStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp := serve(t, b, fetchReq(12, "f-1", [16]byte{}, 0, 0, 0, 0)).(*kmsg.FetchResponse)
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.OffsetOutOfRange.Code {
		t.Errorf("fetch below the new log start: %v", kerr.ErrorForCode(c))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("f-1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < acked && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)) })
	}
	if len(got) != acked {
		t.Fatalf("upstream has %d records, want %d", len(got), acked)
	}
	for i, k := range got {
		if k != strconv.Itoa(i) {
			t.Fatalf("upstream record %d has key %s", i, k)
		}
	}
	// Room again: no throttle.
	resp2 := serve(t, b, produceReq(11, 1, "f-1", [16]byte{}, 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("x")}))).(*kmsg.ProduceResponse)
	if p := resp2.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != int64(acked) || resp2.ThrottleMillis != 0 {
		t.Fatalf("produce after drain: %+v throttle %d", p, resp2.ThrottleMillis)
	}
}

// Deleting a forwarded topic stops its forwarders and removes its spools;
// a topic of the same name created afterwards starts empty at offset 0.
func TestUplinkTopicDeletion(t *testing.T) {
	addr, _ := deadAddr(t)
	b := newTestBroker(t, func(c *Config) {
		c.Uplink = &uplink.Config{Brokers: []string{addr}, Forward: []uplink.ForwardRule{{Pattern: "/f-[0-9]+/"}}}
	})
	id := createTopic(t, b, "f-1", 2)
	for i := 0; i < 5; i++ {
		if p := produce(t, b, "f-1", int32(i%2), makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); p.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
		}
	}
	spoolDir := fmt.Sprintf("/data/spool/%x", id)
	if names, err := b.fs.ReadDir(spoolDir); err != nil || len(names) != 2 {
		t.Fatalf("spool dirs %v, %v", names, err)
	}
	if len(b.ForwardStats()) != 2 {
		t.Fatalf("stats %+v", b.ForwardStats())
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.Topics = append(req.Topics, kmsg.DeleteTopicsRequestTopic{Topic: kmsg.StringPtr("f-1")})
	if c := serve(t, b, req).(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode; c != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(c))
	}
	if s := b.ForwardStats(); len(s) != 0 {
		t.Fatalf("stats after delete: %+v", s)
	}
	if _, err := b.fs.Stat(spoolDir + "/0"); err == nil {
		t.Fatal("spool of the deleted topic still exists")
	}
	createTopic(t, b, "f-1", 1)
	if p := produce(t, b, "f-1", 0, makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("produce to the new topic: %+v", p)
	}
}
