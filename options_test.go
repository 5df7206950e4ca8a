package minikafka_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// WithLogCleanerBackoff reaches the cleaner: with 20 ms instead of Kafka's
// 15 s a compacted topic is cleaned within the test's few seconds.
func TestLogCleanerBackoffOption(t *testing.T) {
	b, err := minikafka.Start(ctxT(t), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithLogCleanerBackoff(20*time.Millisecond), minikafka.WithLogCleanerDedupeBufferSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl := client(t, b)
	ctx := ctxT(t)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("1024"),
		"segment.ms":                kadm.StringPtr("100"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, "c"); err != nil {
		t.Fatal(err)
	}
	val := strings.Repeat("v", 600)
	for i := 0; i < 20; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "c", Key: []byte("k"), Value: []byte(val)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond) // past segment.ms: the next record rolls
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "c", Key: []byte("end"), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(8 * time.Second)
	for {
		// Count the records of key k from the start: 1 once cleaned.
		cons, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ConsumeTopics("c"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		ks, done := 0, false
		for !done {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if string(r.Key) == "k" {
					ks++
				}
				done = done || string(r.Key) == "end"
			})
		}
		cons.Close()
		if ks == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key k still has %d records: the cleaner did not run", ks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestLogCleanerOptionErrors(t *testing.T) {
	for _, opt := range []minikafka.Option{minikafka.WithLogCleanerBackoff(-time.Second), minikafka.WithLogCleanerDedupeBufferSize(-1)} {
		if b, err := minikafka.Start(ctxT(t), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"), opt); err == nil {
			b.Close()
			t.Fatal("negative cleaner setting accepted")
		}
	}
}

// TestCompressedRecordValidationOption: an lz4 batch whose frame header is
// fine but whose body does not decompress (valid CRC) is stored by default
// and refused with CORRUPT_MESSAGE with WithCompressedRecordValidation(true).
func TestCompressedRecordValidationOption(t *testing.T) {
	body, err := records.Compress(records.CodecLZ4, bytes.Repeat([]byte("record bytes "), 100))
	if err != nil {
		t.Fatal(err)
	}
	for i := 16; i < len(body)-8; i++ {
		body[i] ^= 0x5a // keep the frame header, break the blocks and checksums
	}
	batch, err := records.AppendBatch(nil, records.BatchSpec{Codec: records.CodecLZ4, FirstTimestamp: time.Now().UnixMilli(),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, []records.Record{{Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	batch = append(batch[:records.BatchHeaderLen], body...)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], records.Checksum(batch))

	for _, full := range []bool{false, true} {
		b := start(t, minikafka.WithTopic("t", 1), minikafka.WithCompressedRecordValidation(full))
		cl := client(t, b, kgo.MaxVersions(kversion.V3_0_0())) // Produce v9: names topics
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = append([]byte(nil), batch...)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctxT(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		want := int16(0)
		if full {
			want = kerr.CorruptMessage.Code
		}
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != want {
			t.Fatalf("full=%v: %v, want %v", full, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
		}
	}
}
