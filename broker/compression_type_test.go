package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// compression.type as Kafka applies it: a topic naming a codec stores
// every batch in that codec whatever the producer used, a consumer reads
// the records unchanged, and "producer" keeps the producer's codec.
func TestCompressionTypeRecompresses(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	producerCodecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	stored := map[string]records.Codec{
		"uncompressed": records.CodecNone, "gzip": records.CodecGzip, "snappy": records.CodecSnappy,
		"lz4": records.CodecLZ4, "zstd": records.CodecZstd,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for topicCodec, want := range stored {
		for prodName, pc := range producerCodecs {
			topic := fmt.Sprintf("ct-%s-from-%s", topicCodec, prodName)
			cfgs := []string{"compression.type", topicCodec}
			if topicCodec == "zstd" {
				cfgs = append(cfgs, "compression.zstd.level", "19")
			}
			createTopic(t, b, topic, 1, cfgs...)
			cl := newClient(t, addr, kgo.ProducerBatchCompression(pc), kgo.DefaultProduceTopic(topic))
			const n = 20
			for i := 0; i < n; i++ {
				cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("value %d of %s", i, topic)),
					Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}}}, nil)
			}
			if err := cl.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			consumeAll(t, ctx, addr, topic, n)
			// Every stored batch is in the topic's codec.
			fr := serve(t, b, fetchReq(12, topic, [16]byte{}, 0, 0, 0, 1)).(*kmsg.FetchResponse)
			raw := fr.Topics[0].Partitions[0].RecordBatches
			if len(raw) == 0 {
				t.Fatalf("%s: nothing stored", topic)
			}
			if err := records.Split(raw, func(_ int, h records.BatchHeader, _ []byte) error {
				if h.Compression() != want {
					return fmt.Errorf("batch at %d stored as %v, want %v", h.BaseOffset, h.Compression(), want)
				}
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", topic, err)
			}
		}
	}
}

// consumeAll reads topic from the start with kgo until n records,
// checking they are the ones produced, in order.
func consumeAll(t *testing.T, ctx context.Context, addr, topic string, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("%s: consuming: %v", topic, err)
		}
		got = append(got, fs.Records()...)
	}
	for i, r := range got {
		if string(r.Key) != fmt.Sprint(i) || string(r.Value) != fmt.Sprintf("value %d of %s", i, topic) ||
			len(r.Headers) != 1 || string(r.Headers[0].Value) != fmt.Sprint(i) || r.Offset != int64(i) {
			t.Fatalf("%s: record %d read back as offset %d key %q value %q headers %v", topic, i, r.Offset, r.Key, r.Value, r.Headers)
		}
	}
}

// The configs are validated as Kafka validates them.
func TestCompressionTypeConfigValidation(t *testing.T) {
	b := newTestBroker(t)
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"compression.type", "producer", true},
		{"compression.type", "uncompressed", true},
		{"compression.type", "zstd", true},
		{"compression.type", "brotli", false},
		{"compression.gzip.level", "-1", true},
		{"compression.gzip.level", "0", false},
		{"compression.gzip.level", "9", true},
		{"compression.gzip.level", "10", false},
		{"compression.lz4.level", "17", true},
		{"compression.lz4.level", "0", false},
		{"compression.zstd.level", "-131072", true},
		{"compression.zstd.level", "23", false},
	} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "v", 1, 1
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = tc.name, kmsg.StringPtr(tc.value)
		rt.Configs = append(rt.Configs, c)
		req.Topics = append(req.Topics, rt)
		req.ValidateOnly = true
		resp := serve(t, b, req).(*kmsg.CreateTopicsResponse)
		code := resp.Topics[0].ErrorCode
		if tc.ok && code != 0 || !tc.ok && code != kerr.InvalidConfig.Code {
			t.Errorf("%s=%s: code %d (%v)", tc.name, tc.value, code, deref(resp.Topics[0].ErrorMessage))
		}
	}
}

// A batch that grows past max.message.bytes when stored uncompressed is
// refused with MESSAGE_TOO_LARGE, as Kafka checks the validated batch.
func TestCompressionTypeTooLargeAfterDecompression(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "small", 1, "compression.type", "uncompressed", "max.message.bytes", "10000")
	big := make([]byte, 50000) // zeros: compresses to almost nothing
	batch := makeBatch(t, records.CodecZstd, -1, 0, 0, testRec{value: big})
	if len(batch) > 10000 {
		t.Fatalf("test batch %d bytes compressed", len(batch))
	}
	if got := produce(t, b, "small", 0, batch); got.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("code %d, want MESSAGE_TOO_LARGE", got.ErrorCode)
	}
}

// A topic that recompresses checks the records it decoded for
// recompression exactly as a validating topic checks them by streaming:
// per-record errors with record_errors (v8+), keys on a compacted topic,
// and CORRUPT_MESSAGE for a body that does not decode, over real TCP; a
// good batch is stored in the topic's codec with the records unchanged.
func TestCompressionTypeValidatesWhatItDecodes(t *testing.T) {
	b := newTestBroker(t)
	cl := dialRaw(t, listen(t, b))
	createTopic(t, b, "to-zstd", 1, "compression.type", "zstd", "message.timestamp.after.max.ms", "60000")
	createTopic(t, b, "to-gzip-compacted", 1, "compression.type", "gzip", "cleanup.policy", "compact")
	hour := int64(time.Hour / time.Millisecond)
	for _, codec := range []records.Codec{records.CodecNone, records.CodecLZ4, records.CodecSnappy, records.CodecGzip} {
		late := makeBatchCodec(t, codec, testRec{value: []byte("now")}, testRec{value: []byte("late"), tsDelta: 2 * hour})
		r := tcpProduce(t, cl, 11, "to-zstd", late)
		if r.ErrorCode != kerr.InvalidTimestamp.Code || len(r.ErrorRecords) != 1 || r.ErrorRecords[0].RelativeOffset != 1 {
			t.Fatalf("%s, late record: %v %+v", codec, kerr.ErrorForCode(r.ErrorCode), r.ErrorRecords)
		}
		keyless := makeBatchCodec(t, codec, testRec{key: []byte("k"), value: []byte("a")}, testRec{value: []byte("b")})
		r = tcpProduce(t, cl, 11, "to-gzip-compacted", keyless)
		if r.ErrorCode != kerr.InvalidRecord.Code || len(r.ErrorRecords) != 1 || r.ErrorRecords[0].RelativeOffset != 1 {
			t.Fatalf("%s, keyless record on a compacted topic: %v %+v", codec, kerr.ErrorForCode(r.ErrorCode), r.ErrorRecords)
		}
		if codec != records.CodecNone {
			good := makeBatchCodec(t, codec, testRec{value: []byte("x")})
			if r := tcpProduce(t, cl, 11, "to-zstd", withBody(good, garbageBody(t, codec))); r.ErrorCode != kerr.CorruptMessage.Code {
				t.Fatalf("%s garbage body: %v", codec, kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
	if _, hw := tcpFetchAll(t, cl, "to-zstd"); hw != 0 {
		t.Fatalf("a refused batch was stored: hw %d", hw)
	}
	want := makeBatchCodec(t, records.CodecLZ4, testRec{key: []byte("k1"), value: []byte("v1")}, testRec{key: []byte("k2"), value: bytes.Repeat([]byte("v2"), 500), tsDelta: 3})
	if r := tcpProduce(t, cl, 11, "to-zstd", want); r.ErrorCode != 0 {
		t.Fatalf("good batch: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	stored, _ := tcpFetchAll(t, cl, "to-zstd")
	if len(stored) != 1 {
		t.Fatalf("%d batches stored", len(stored))
	}
	sh, err := records.Validate(stored[0])
	if err != nil || sh.Compression() != records.CodecZstd {
		t.Fatalf("stored batch: %v, codec %v", err, sh.Compression())
	}
	wh, _ := records.Validate(want)
	got, err := records.Decompress(records.CodecZstd, stored[0][records.BatchHeaderLen:], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := records.Decompress(records.CodecLZ4, want[records.BatchHeaderLen:], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) || sh.NumRecords != wh.NumRecords || sh.FirstTimestamp != wh.FirstTimestamp || sh.MaxTimestamp != wh.MaxTimestamp {
		t.Fatalf("records changed in recompression")
	}
}
