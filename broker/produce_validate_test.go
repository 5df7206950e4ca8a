package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// rawConn speaks the Kafka protocol over one TCP connection at exactly
// the versions a test asks for (kgo would pick its own).
type rawConn struct {
	c    net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c}
}

// do sends req (its version set) and decodes the response.
func (rc *rawConn) do(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	rc.corr++
	buf := make([]byte, 4, 256)
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.Key()))
	buf = binary.BigEndian.AppendUint16(buf, uint16(req.GetVersion()))
	buf = binary.BigEndian.AppendUint32(buf, uint32(rc.corr))
	buf = binary.BigEndian.AppendUint16(buf, 4)
	buf = append(buf, "test"...)
	if req.IsFlexible() {
		buf = append(buf, 0) // no tagged fields in the header
	}
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	rc.c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := rc.c.Write(buf); err != nil {
		t.Fatalf("write: %v", err)
	}
	var size [4]byte
	if _, err := io.ReadFull(rc.c, size[:]); err != nil {
		t.Fatalf("read: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(rc.c, body); err != nil {
		t.Fatalf("read: %v", err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != rc.corr {
		t.Fatalf("correlation id %d, want %d", got, rc.corr)
	}
	body = body[4:]
	if req.IsFlexible() {
		body = body[1:] // empty response header tags
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode %s response: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// tcpProduce sends one batch in a Produce request of the given version
// and returns the partition result.
func tcpProduce(t *testing.T, rc *rawConn, version int16, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	resp := rc.do(t, produceReq(version, -1, topic, [16]byte{}, 0, batch)).(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0]
}

// tcpFetchAll returns the stored batches of topic-0 from offset 0, over TCP.
func tcpFetchAll(t *testing.T, rc *rawConn, topic string) (batches [][]byte, hw int64) {
	t.Helper()
	resp := rc.do(t, fetchReq(12, topic, [16]byte{}, 0, 0, 0, 0)).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	if err := records.Split(p.RecordBatches, func(_ int, _ records.BatchHeader, b []byte) error {
		batches = append(batches, append([]byte(nil), b...))
		return nil
	}); err != nil {
		t.Fatalf("stored batches: %v", err)
	}
	return batches, p.HighWatermark
}

// codecBatch builds a batch of n records with codec; xerial selects the
// snappy-java stream framing for snappy.
func codecBatch(t *testing.T, codec records.Codec, xerial bool, n int) []byte {
	t.Helper()
	var raw []records.Record
	for i := 0; i < n; i++ {
		raw = append(raw, records.Record{TimestampDelta: int64(i), Key: []byte(fmt.Sprintf("key-%d", i)),
			Value: bytes.Repeat([]byte(fmt.Sprintf("value %d ", i)), 40)})
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{Codec: codec, FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, raw)
	if err != nil {
		t.Fatal(err)
	}
	if xerial {
		// Re-frame the body as the Java client does.
		plain, err := records.Decompress(codec, b[records.BatchHeaderLen:], 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		b = withBody(b[:records.BatchHeaderLen], records.XerialSnappy(plain, 256))
	}
	return b
}

// withBody returns a copy of header with body appended, the length and
// CRC32C fixed up: a well-framed batch whatever the body holds.
func withBody(header, body []byte) []byte {
	b := append(append([]byte(nil), header[:records.BatchHeaderLen]...), body...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], records.Checksum(b))
	return b
}

// TestCompressedPassthroughByteIdentical: with the passthrough opt-out and
// with validation (the default), every codec's batch is stored exactly as sent (only the base offset,
// not covered by the CRC, differs), over real TCP; and kgo reads it back.
func TestCompressedPassthroughByteIdentical(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			b := newTestBroker(t, func(c *Config) { c.PassCompressedRecords = !full })
			cl := dialRaw(t, listen(t, b))
			cases := []struct {
				name   string
				codec  records.Codec
				xerial bool
			}{{"none", records.CodecNone, false}, {"gzip", records.CodecGzip, false}, {"snappy", records.CodecSnappy, false},
				{"snappy-xerial", records.CodecSnappy, true}, {"lz4", records.CodecLZ4, false}, {"zstd", records.CodecZstd, false}}
			for _, tc := range cases {
				topic := "t-" + tc.name
				createTopic(t, b, topic, 1)
				var sent [][]byte
				for i := 0; i < 3; i++ {
					batch := codecBatch(t, tc.codec, tc.xerial, 5+i)
					sent = append(sent, append([]byte(nil), batch...))
					if r := tcpProduce(t, cl, 11, topic, batch); r.ErrorCode != 0 {
						t.Fatalf("%s: %v: %s", tc.name, kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
					}
				}
				stored, hw := tcpFetchAll(t, cl, topic)
				if len(stored) != len(sent) || hw != 5+6+7 {
					t.Fatalf("%s: %d batches, hw %d", tc.name, len(stored), hw)
				}
				for i := range sent {
					if !bytes.Equal(stored[i][8:], sent[i][8:]) {
						t.Fatalf("%s: batch %d stored differently from how it was sent", tc.name, i)
					}
				}
			}
		})
	}

	// Real producers: kgo with each codec, consumed back by kgo.
	b := newTestBroker(t)
	addr := listen(t, b)
	for _, c := range []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}, {"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()}} {
		topic := "kgo-" + c.name
		createTopic(t, b, topic, 1)
		p := newClient(t, addr, kgo.ProducerBatchCompression(c.codec), kgo.DefaultProduceTopic(topic))
		var rs []*kgo.Record
		for i := 0; i < 50; i++ {
			rs = append(rs, &kgo.Record{Value: bytes.Repeat([]byte{byte('a' + i%26)}, 300)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			cancel()
			t.Fatalf("%s: %v", c.name, err)
		}
		cons := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		got := 0
		for got < 50 {
			fs := cons.PollFetches(ctx)
			if err := fs.Err(); err != nil {
				cancel()
				t.Fatalf("%s: consume: %v", c.name, err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				if !bytes.Equal(r.Value, rs[r.Offset].Value) {
					t.Errorf("%s: record %d differs", c.name, r.Offset)
				}
				got++
			})
		}
		cancel()
	}
}

// garbageBody returns a body whose stream header is valid for the codec
// but whose contents do not decompress.
func garbageBody(t *testing.T, codec records.Codec) []byte {
	t.Helper()
	switch codec {
	case records.CodecSnappy:
		// Claims 100 bytes, a 50-byte literal, then only 10 bytes.
		return append([]byte{100, 49 << 2}, bytes.Repeat([]byte{'x'}, 10)...)
	}
	real, err := records.Compress(codec, bytes.Repeat([]byte("some record bytes "), 200))
	if err != nil {
		t.Fatal(err)
	}
	// Keep the stream header (and trailer); scramble the middle. gzip,
	// lz4 and zstd streams carry checksums, so this cannot decompress.
	for i := 16; i < len(real)-8; i++ {
		real[i] ^= 0x5a
	}
	if _, err := records.Decompress(codec, real, 1<<20); err == nil {
		t.Fatalf("%s: scrambled body still decompresses", codec)
	}
	return real
}

// TestCompressedCorruption: a bad CRC is CORRUPT_MESSAGE in every mode; a
// garbage compressed body with a valid CRC is stored under the passthrough
// opt-out (which does not decompress), and rejected with CORRUPT_MESSAGE
// by default (full validation) and on compacted topics; a body that is not even
// the codec's stream format is rejected in every mode.
func TestCompressedCorruption(t *testing.T) {
	passthrough := newTestBroker(t, func(c *Config) { c.PassCompressedRecords = true }) // the opt-out
	full := newTestBroker(t)
	clPass := dialRaw(t, listen(t, passthrough))
	clFull := dialRaw(t, listen(t, full))
	for _, b := range []*Broker{passthrough, full} {
		createTopic(t, b, "plain", 1)
		createTopic(t, b, "compacted", 1, "cleanup.policy", "compact,delete")
	}
	type want struct {
		cl    *rawConn
		topic string
		code  *kerr.Error // nil: accepted
	}
	for _, codec := range []records.Codec{records.CodecGzip, records.CodecSnappy, records.CodecLZ4, records.CodecZstd} {
		good := codecBatch(t, codec, false, 4)
		badCRC := append([]byte(nil), good...)
		badCRC[len(badCRC)-2] ^= 0x01
		garbage := withBody(good, garbageBody(t, codec))
		notCodec := withBody(good, bytes.Repeat([]byte{0xee, 0x01}, 40))

		for _, w := range []want{{clPass, "plain", kerr.CorruptMessage}, {clFull, "plain", kerr.CorruptMessage}, {clPass, "compacted", kerr.CorruptMessage}} {
			if r := tcpProduce(t, w.cl, 11, w.topic, badCRC); r.ErrorCode != w.code.Code {
				t.Errorf("%s bad crc on %s: %v", codec, w.topic, kerr.ErrorForCode(r.ErrorCode))
			}
			if r := tcpProduce(t, w.cl, 11, w.topic, notCodec); r.ErrorCode != w.code.Code {
				t.Errorf("%s non-%s body on %s: %v", codec, codec, w.topic, kerr.ErrorForCode(r.ErrorCode))
			}
		}
		for _, w := range []want{{clPass, "plain", nil}, {clFull, "plain", kerr.CorruptMessage}, {clPass, "compacted", kerr.CorruptMessage}, {clFull, "compacted", kerr.CorruptMessage}} {
			r := tcpProduce(t, w.cl, 11, w.topic, append([]byte(nil), garbage...))
			switch {
			case w.code == nil && r.ErrorCode != 0:
				t.Errorf("%s garbage body, passthrough: %v, want accepted", codec, kerr.ErrorForCode(r.ErrorCode))
			case w.code != nil && r.ErrorCode != w.code.Code:
				t.Errorf("%s garbage body on %s (full=%v): %v, want %v", codec, w.topic, w.cl == clFull, kerr.ErrorForCode(r.ErrorCode), w.code)
			}
		}
	}
	// What passthrough accepted is exactly the four garbage batches, stored
	// as sent; the fully validating broker stored nothing.
	if stored, hw := tcpFetchAll(t, clPass, "plain"); len(stored) != 4 || hw != 16 {
		t.Fatalf("passthrough stored %d batches, hw %d; want 4, 16", len(stored), hw)
	}
	for _, b := range []struct {
		cl    *rawConn
		topic string
	}{{clFull, "plain"}, {clPass, "compacted"}, {clFull, "compacted"}} {
		if stored, hw := tcpFetchAll(t, b.cl, b.topic); len(stored) != 0 || hw != 0 {
			t.Fatalf("%s stored %d batches", b.topic, len(stored))
		}
	}
}

// TestCompactedTopicNeedsKeys: a batch with keyless records on a
// compacted topic is rejected whole with INVALID_RECORD, naming each
// keyless record in record_errors (v8+) with Kafka's messages; nothing is
// stored and the broker keeps serving. Uncompressed and compressed alike,
// in the default passthrough mode.
func TestCompactedTopicNeedsKeys(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	cl := dialRaw(t, addr)
	createTopic(t, b, "c", 1, "cleanup.policy", "compact")
	for _, codec := range []records.Codec{records.CodecNone, records.CodecZstd, records.CodecLZ4, records.CodecGzip, records.CodecSnappy} {
		batch := makeBatchCodec(t, codec, testRec{key: []byte("a"), value: []byte("1")}, testRec{value: []byte("no key")},
			testRec{key: []byte("b"), value: []byte("2")}, testRec{key: nil, value: []byte("none either")})
		r := tcpProduce(t, cl, 11, "c", append([]byte(nil), batch...))
		if r.ErrorCode != kerr.InvalidRecord.Code {
			t.Fatalf("%s: code %v, want INVALID_RECORD", codec, kerr.ErrorForCode(r.ErrorCode))
		}
		if r.BaseOffset != -1 || r.LogStartOffset != 0 {
			t.Errorf("%s: base offset %d, log start %d; want -1, 0", codec, r.BaseOffset, r.LogStartOffset)
		}
		if len(r.ErrorRecords) != 2 || r.ErrorRecords[0].RelativeOffset != 1 || r.ErrorRecords[1].RelativeOffset != 3 {
			t.Fatalf("%s: record errors %+v, want indexes 1 and 3", codec, r.ErrorRecords)
		}
		wantRec := "Compacted topic cannot accept message without key in topic partition c-0"
		for _, e := range r.ErrorRecords {
			if deref(e.ErrorMessage) != wantRec {
				t.Errorf("%s: record error %q", codec, deref(e.ErrorMessage))
			}
		}
		wantMsg := "One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='" + wantRec + "'), RecordError(batchIndex=3, message='" + wantRec + "')]"
		if deref(r.ErrorMessage) != wantMsg {
			t.Errorf("%s: error message\n%s\nwant\n%s", codec, deref(r.ErrorMessage), wantMsg)
		}
		// Before v8 there is no room for record errors.
		r = tcpProduce(t, cl, 7, "c", append([]byte(nil), batch...))
		if r.ErrorCode != kerr.InvalidRecord.Code || r.ErrorRecords != nil {
			t.Fatalf("%s v7: %v %+v", codec, kerr.ErrorForCode(r.ErrorCode), r.ErrorRecords)
		}
	}
	if stored, hw := tcpFetchAll(t, cl, "c"); len(stored) != 0 || hw != 0 {
		t.Fatalf("rejected batches were stored: %d, hw %d", len(stored), hw)
	}
	// The broker keeps serving: keyed records go in, on the same and on a
	// new connection, and a real producer sees INVALID_RECORD for a keyless one.
	if r := tcpProduce(t, cl, 11, "c", makeBatchCodec(t, records.CodecZstd, testRec{key: []byte("k"), value: []byte("v")})); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("keyed batch: %v base %d", kerr.ErrorForCode(r.ErrorCode), r.BaseOffset)
	}
	p := newClient(t, addr, kgo.DefaultProduceTopic("c"), kgo.RecordRetries(1))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte("x"), Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatalf("kgo keyed: %v", err)
	}
	err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("keyless")}).FirstErr()
	if err == nil || !strings.Contains(err.Error(), kerr.InvalidRecord.Message) && err != kerr.InvalidRecord {
		t.Fatalf("kgo keyless: %v, want INVALID_RECORD", err)
	}
	if _, hw := tcpFetchAll(t, cl, "c"); hw != 2 {
		t.Fatalf("hw %d, want 2", hw)
	}
}

func makeBatchCodec(t *testing.T, codec records.Codec, recs ...testRec) []byte {
	t.Helper()
	rs := make([]records.Record, len(recs))
	for i, r := range recs {
		rs[i] = records.Record{Key: r.key, Value: r.value, TimestampDelta: r.tsDelta}
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{Codec: codec, FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordTimestampErrors: a record beyond message.timestamp.after.max.ms
// fails the batch with INVALID_TIMESTAMP naming that record; compressed
// batches find it from the header's max timestamp without full
// validation, then decode to name the record.
func TestRecordTimestampErrors(t *testing.T) {
	b := newTestBroker(t)
	cl := dialRaw(t, listen(t, b))
	createTopic(t, b, "t", 1, "message.timestamp.after.max.ms", "60000")
	hour := int64(time.Hour / time.Millisecond)
	for _, codec := range []records.Codec{records.CodecNone, records.CodecGzip, records.CodecSnappy} {
		batch := makeBatchCodec(t, codec, testRec{value: []byte("now")}, testRec{value: []byte("late"), tsDelta: 2 * hour}, testRec{value: []byte("ok"), tsDelta: 1})
		r := tcpProduce(t, cl, 11, "t", batch)
		if r.ErrorCode != kerr.InvalidTimestamp.Code {
			t.Fatalf("%s: %v", codec, kerr.ErrorForCode(r.ErrorCode))
		}
		if deref(r.ErrorMessage) != "One or more records have been rejected due to invalid timestamp" {
			t.Errorf("%s: message %q", codec, deref(r.ErrorMessage))
		}
		if len(r.ErrorRecords) != 1 || r.ErrorRecords[0].RelativeOffset != 1 ||
			!strings.Contains(deref(r.ErrorRecords[0].ErrorMessage), "of message with offset 1 is out of range. The timestamp should be within [") {
			t.Fatalf("%s: record errors %+v (%s)", codec, r.ErrorRecords, deref(r.ErrorRecords[0].ErrorMessage))
		}
	}
	// A producer may not set LogAppendTime: every record is named.
	lat := makeBatchCodec(t, records.CodecLZ4, testRec{value: []byte("a")}, testRec{value: []byte("b")})
	lat[22] |= 0x08
	binary.BigEndian.PutUint32(lat[17:], records.Checksum(lat))
	createTopic(t, b, "lat", 1, "message.timestamp.type", "LogAppendTime")
	r := tcpProduce(t, cl, 11, "lat", lat)
	if r.ErrorCode != kerr.InvalidTimestamp.Code || len(r.ErrorRecords) != 2 || r.ErrorRecords[1].RelativeOffset != 1 {
		t.Fatalf("LogAppendTime batch: %v %+v", kerr.ErrorForCode(r.ErrorCode), r.ErrorRecords)
	}
	if _, hw := tcpFetchAll(t, cl, "t"); hw != 0 {
		t.Fatalf("hw %d", hw)
	}
}

// TestProduceHeaderRules: Kafka's batch-level rules that need no records.
func TestProduceHeaderRules(t *testing.T) {
	b := newTestBroker(t)
	cl := dialRaw(t, listen(t, b))
	createTopic(t, b, "t", 1)
	// zstd needs Produce v7+ (UNSUPPORTED_COMPRESSION_TYPE).
	z := makeBatchCodec(t, records.CodecZstd, testRec{value: []byte("v")})
	if r := tcpProduce(t, cl, 6, "t", append([]byte(nil), z...)); r.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("zstd at v6: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := tcpProduce(t, cl, 7, "t", z); r.ErrorCode != 0 {
		t.Fatalf("zstd at v7: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// A producer id without a sequence.
	noSeq := makeBatch(t, records.CodecLZ4, 5, 0, 0, testRec{value: []byte("v")})
	binary.BigEndian.PutUint32(noSeq[53:], 0xffffffff)
	binary.BigEndian.PutUint32(noSeq[17:], records.Checksum(noSeq))
	if r := tcpProduce(t, cl, 11, "t", noSeq); r.ErrorCode != kerr.InvalidRecord.Code || r.BaseOffset != -1 {
		t.Fatalf("producer id with sequence -1: %v base %d", kerr.ErrorForCode(r.ErrorCode), r.BaseOffset)
	}
	// An unknown codec (attributes 5) is CORRUPT_MESSAGE.
	bad := makeBatchCodec(t, records.CodecNone, testRec{value: []byte("v")})
	bad[22] |= 0x05
	binary.BigEndian.PutUint32(bad[17:], records.Checksum(bad))
	if r := tcpProduce(t, cl, 11, "t", bad); r.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("codec 5: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// rawRecords encodes records with the given offset deltas (no key, no
// headers), bypassing AppendBatch, which always writes deltas 0, 1, 2...
func rawRecords(deltas ...int64) []byte {
	var out []byte
	for _, d := range deltas {
		var r []byte
		r = append(r, 0)               // attributes
		r = binary.AppendVarint(r, 0)  // timestamp delta
		r = binary.AppendVarint(r, d)  // offset delta
		r = binary.AppendVarint(r, -1) // null key
		r = binary.AppendVarint(r, 1)  // value length
		r = append(r, 'v')             // value
		r = binary.AppendVarint(r, 0)  // no headers
		out = binary.AppendVarint(out, int64(len(r)))
		out = append(out, r...)
	}
	return out
}

// TestOffsetDeltaRecordErrors: records whose offset deltas do not count up
// from 0 are named in record_errors; a compressed batch is checked by
// default (the passthrough opt-out stores it, as documented).
func TestOffsetDeltaRecordErrors(t *testing.T) {
	pass := newTestBroker(t, func(c *Config) { c.PassCompressedRecords = true }) // the opt-out
	full := newTestBroker(t)
	clPass, clFull := dialRaw(t, listen(t, pass)), dialRaw(t, listen(t, full))
	createTopic(t, pass, "t", 1)
	createTopic(t, full, "t", 1)
	three := func(c records.Codec) []byte {
		return makeBatchCodec(t, c, testRec{value: []byte("a")}, testRec{value: []byte("b")}, testRec{value: []byte("c")})
	}
	plainBody := rawRecords(0, 1, 7)
	zstdBody, err := records.Compress(records.CodecZstd, plainBody)
	if err != nil {
		t.Fatal(err)
	}
	plain := withBody(three(records.CodecNone), plainBody)
	zstd := withBody(three(records.CodecZstd), zstdBody)
	for _, c := range []struct {
		name  string
		cl    *rawConn
		batch []byte
	}{{"uncompressed, passthrough", clPass, plain}, {"uncompressed, full", clFull, plain}, {"zstd, full", clFull, zstd}} {
		r := tcpProduce(t, c.cl, 11, "t", append([]byte(nil), c.batch...))
		if r.ErrorCode != kerr.InvalidRecord.Code || len(r.ErrorRecords) != 1 || r.ErrorRecords[0].RelativeOffset != 2 {
			t.Fatalf("%s: %v %+v", c.name, kerr.ErrorForCode(r.ErrorCode), r.ErrorRecords)
		}
		if !strings.Contains(deref(r.ErrorMessage), "1 record errors in total") {
			t.Errorf("%s: message %q", c.name, deref(r.ErrorMessage))
		}
	}
	if r := tcpProduce(t, clPass, 11, "t", zstd); r.ErrorCode != 0 {
		t.Fatalf("zstd, passthrough: %v, want stored unchecked", kerr.ErrorForCode(r.ErrorCode))
	}
	if _, hw := tcpFetchAll(t, clFull, "t"); hw != 0 {
		t.Fatalf("full validation stored a bad batch: hw %d", hw)
	}
}

// lz4BombBody is an lz4 frame (4 MiB blocks) holding one keyless record
// whose value is n zero bytes, built without holding n bytes.
func lz4BombBody(t *testing.T, n int64) []byte {
	t.Helper()
	head := []byte{0, 0, 0, 1} // attributes, ts delta 0, offset delta 0, key null (-1)
	head = binary.AppendVarint(head, n)
	rec := binary.AppendVarint(nil, int64(len(head))+n+1)
	rec = append(rec, head...)
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	w.Write(rec)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(zeros)) {
		w.Write(zeros[:min(left, int64(len(zeros)))])
	}
	w.Write([]byte{0}) // no headers
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompressedHostileBodiesBounded: on a validating topic and on one
// whose compression.type recompresses, an lz4 batch whose block claims
// 2 GiB (10 bytes behind it) is CORRUPT_MESSAGE and allocates next to
// nothing; a decompression bomb past the inflation limit (100 MiB of
// zeros in a 400 KiB batch) is MESSAGE_TOO_LARGE, having allocated at most
// the scan slot's 4 MiB block buffer when validating by streaming, and
// under twice the inflation limit (its buffer, grown by doubling) when the
// records must be held to recompress.
// Nothing is stored and the broker keeps serving.
func TestCompressedHostileBodiesBounded(t *testing.T) {
	b := newTestBroker(t)
	createTopic(t, b, "plain", 1)
	createTopic(t, b, "to-zstd", 1, "compression.type", "zstd")
	header := makeBatch(t, records.CodecNone, -1, 0, 0, testRec{value: []byte("v")})
	lie := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70} // magic, FLG, BD (4 MiB blocks)
	lie = append(lie, byte(headerChecksum(lie[4:6])>>8))
	lie = binary.LittleEndian.AppendUint32(lie, 0x7fffffff)
	lie = append(lie, make([]byte, 10)...)
	lying := withBody(header, lie)
	lying[22] |= byte(records.CodecLZ4)
	binary.BigEndian.PutUint32(lying[17:], records.Checksum(lying))
	bomb := withBody(header, lz4BombBody(t, 100<<20))
	bomb[22] |= byte(records.CodecLZ4)
	binary.BigEndian.PutUint32(bomb[17:], records.Checksum(bomb))
	if len(bomb) > 1<<20 {
		t.Fatalf("bomb batch is %d bytes", len(bomb))
	}
	allocs := func(f func()) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	for _, tc := range []struct {
		topic     string
		bombBound uint64
	}{{"plain", 6 << 20}, {"to-zstd", 2*maxDecompressedBatch + 8<<20}} {
		var r kmsg.ProduceResponseTopicPartition
		if d := allocs(func() { r = produce(t, b, tc.topic, 0, lying) }); d > 1<<20 {
			t.Errorf("%s: a lying lz4 block size allocated %d bytes", tc.topic, d)
		}
		if r.ErrorCode != kerr.CorruptMessage.Code {
			t.Errorf("%s: lying block size: %v, want CORRUPT_MESSAGE", tc.topic, kerr.ErrorForCode(r.ErrorCode))
		}
		if d := allocs(func() { r = produce(t, b, tc.topic, 0, bomb) }); d > tc.bombBound {
			t.Errorf("%s: a 100 MiB lz4 bomb allocated %d bytes, bound %d", tc.topic, d, tc.bombBound)
		}
		if r.ErrorCode != kerr.MessageTooLarge.Code {
			t.Errorf("%s: bomb: %v, want MESSAGE_TOO_LARGE", tc.topic, kerr.ErrorForCode(r.ErrorCode))
		}
		// Still serving; nothing of the above was stored.
		if r := produce(t, b, tc.topic, 0, makeBatch(t, records.CodecLZ4, -1, 0, 0, testRec{value: []byte("ok")})); r.ErrorCode != 0 || r.BaseOffset != 0 {
			t.Fatalf("%s: good batch after the hostile ones: %v at %d", tc.topic, kerr.ErrorForCode(r.ErrorCode), r.BaseOffset)
		}
	}
}

// headerChecksum is XXH32 (seed 0) of a short input (under 16 bytes): an
// lz4 frame descriptor, for building frames by hand.
func headerChecksum(b []byte) uint32 {
	const p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	h := uint32(p5) + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	return h ^ h>>16
}
