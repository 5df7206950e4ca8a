package minikafkatest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// A failing fsync and a full disk answer KAFKA_STORAGE_ERROR; after a
// restart every acknowledged record is there, in order.
func TestDiskFaultsKeepAcked(t *testing.T) {
	b, disk := minikafkatest.NewWithDisk(t, minikafka.WithTopic("sync", 1), minikafka.WithTopic("full", 1))
	cl := minikafkatest.Client(t, b, kgo.DisableIdempotentWrite(), kgo.RecordRetries(1),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(topic string, i int) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr()
	}
	for _, topic := range []string{"sync", "full"} {
		for i := range 10 {
			if err := produce(topic, i); err != nil {
				t.Fatalf("%s: produce %d: %v", topic, i, err)
			}
		}
	}
	disk.FailSync(true)
	if err := produce("sync", 10); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce with fsync failing: %v, want KAFKA_STORAGE_ERROR", err)
	}
	disk.FailSync(false)
	disk.Full(true)
	if err := produce("full", 10); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("produce on a full disk: %v, want KAFKA_STORAGE_ERROR", err)
	}
	disk.Full(false)
	if disk.Failed() == 0 {
		t.Fatal("the disk failed nothing")
	}
	cl.Close()
	dir := b.DataDir()
	if err := b.Close(); err != nil {
		t.Logf("close after storage faults: %v", err) // the failed logs report their error
	}
	b2 := minikafkatest.New(t, minikafka.WithDataDir(dir))
	for _, topic := range []string{"sync", "full"} {
		c := minikafkatest.Client(t, b2, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []string
		pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
		for len(got) < 10 && pctx.Err() == nil {
			c.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		pcancel()
		if len(got) < 10 {
			t.Fatalf("%s: %d records after restart, want the 10 acknowledged: %v", topic, len(got), got)
		}
		for i := range 10 {
			if got[i] != strconv.Itoa(i) {
				t.Fatalf("%s: record %d is %q: acknowledged records lost or reordered (%v)", topic, i, got[i], got)
			}
		}
	}
}

// A slow fsync delays the produce answer but loses nothing.
func TestDiskSlowSync(t *testing.T) {
	b, disk := minikafkatest.NewWithDisk(t, minikafka.WithTopic("t", 1))
	b.EnableRequestLog(50)
	cl := minikafkatest.Client(t, b)
	disk.SlowSync(100 * time.Millisecond)
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	slow := false
	for _, e := range b.RequestLog() {
		if e.Key == 0 && e.Latency >= 100*time.Millisecond && e.ErrorCode == 0 {
			slow = true
		}
	}
	if !slow {
		t.Fatalf("no produce answered after the slow fsync: %+v", b.RequestLog())
	}
}
