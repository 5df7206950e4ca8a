package minikafka_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
)

// On a real filesystem that is full (a small tmpfs, filled to the last
// page), CreateTopics, auto-creation and OffsetCommit answer their storage
// codes, not UNKNOWN_SERVER_ERROR or COORDINATOR_NOT_AVAILABLE; once
// DeleteRecords frees space they succeed, without a restart, and after a
// restart the committed offset and the topic are there.
func TestDiskFullRealFilesystemAdmin(t *testing.T) {
	dir := smallFS(t, 4<<20)
	logs := &logSink{}
	start := func() *minikafka.Broker {
		b, err := minikafka.Start(context.Background(), minikafka.WithDataDir(dir), minikafka.WithListenAddr("127.0.0.1:0"),
			minikafka.WithDurability("always"), minikafka.WithAutoCreateTopics(true),
			minikafka.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() }) // before the unmount
		return b
	}
	b := start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordRetries(1), kgo.RequestRetries(1),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }), kgo.ProducerLinger(0),
		kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": strp("1048576")}, "fill"); err != nil {
		t.Fatal(err)
	}
	commit := func(off int64) error {
		resp, err := adm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "fill", Partition: 0, Offset: off - 1}))
		if err == nil {
			err = resp.Error()
		}
		return err
	}
	if err := commit(1); err != nil {
		t.Fatal(err)
	}
	// Fill to the last page: large records, then smaller ones, each
	// size until the broker refuses it.
	for _, size := range []int{64 << 10, 4 << 10, 256, 16} {
		v := make([]byte, size)
		for i := 0; ; i++ {
			if i == 10000 {
				t.Fatalf("%d records of %d bytes fit in a 4 MiB filesystem", i, size)
			}
			rand.Read(v)
			err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fill", Value: append([]byte(nil), v...)}).FirstErr()
			if errors.Is(err, kerr.KafkaStorageError) {
				break
			}
			if err != nil {
				t.Fatalf("filling: %v", err)
			}
		}
	}
	bm, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw := func(req kmsg.Request) kmsg.Response {
		resp, err := cl.Broker(int(bm.Brokers[0].NodeID)).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	create := func() int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new", 1, 1
		req.Topics = append(req.Topics, rt)
		return raw(req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	}
	autoCreate := func() int16 {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = true
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: strp("auto")}}
		return raw(req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	before := len(logs.String())
	if c := create(); c != kerr.KafkaStorageError.Code {
		t.Errorf("CreateTopics on a full filesystem: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(c))
	}
	if c := autoCreate(); c != kerr.KafkaStorageError.Code {
		t.Errorf("Metadata auto-creating on a full filesystem: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(c))
	}
	// The offsets file may have room left in its last page: commit
	// until it has none.
	var cerr error
	for i := 0; i < 2000 && cerr == nil; i++ {
		cerr = commit(int64(10 + i))
	}
	if !errors.Is(cerr, kerr.NotCoordinator) {
		t.Errorf("OffsetCommit on a full filesystem: %v, want NOT_COORDINATOR", cerr)
	}
	if logged := logs.String()[before:]; strings.Count(logged, "no space left on device") < 3 {
		t.Errorf("the refusals are not logged with their cause:\n%s", logged)
	}

	// Free space through Kafka's API, then everything goes through.
	offs, err := adm.ListEndOffsets(ctx, "fill")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := offs.Lookup("fill", 0)
	half := kadm.Offsets{}
	half.Add(kadm.Offset{Topic: "fill", Partition: 0, At: end.Offset / 2})
	dr, err := adm.DeleteRecords(ctx, half)
	if err == nil {
		err = dr.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords on a full filesystem: %v", err)
	}
	if c := create(); c != 0 {
		t.Errorf("CreateTopics once there is space: %v", kerr.ErrorForCode(c))
	}
	if c := autoCreate(); c != kerr.LeaderNotAvailable.Code {
		t.Errorf("Metadata auto-creating once there is space: %v, want LEADER_NOT_AVAILABLE (created)", kerr.ErrorForCode(c))
	}
	if err := commit(7); err != nil {
		t.Errorf("OffsetCommit once there is space: %v", err)
	}
	if t.Failed() {
		return
	}
	cl.Close()
	if err := b.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	b = start()
	cl2, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	adm2 := kadm.NewClient(cl2)
	topics, err := adm2.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("new") || !topics.Has("auto") {
		t.Errorf("topics after a restart: %v, want new and auto among them", topics.Names())
	}
	fo, err := adm2.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fo.Lookup("fill", 0); o.At != 7 {
		t.Errorf("committed offset after a restart: %d, want 7", o.At)
	}
}
