package broker

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// truncatedGzipBatch is the poison batch: a valid CRC over a gzip
// body whose deflate stream stops half way.
func truncatedGzipBatch(t testing.TB) []byte {
	t.Helper()
	good := codecBatchTB(t, records.CodecGzip, 20)
	body := good[records.BatchHeaderLen:]
	return withBody(good, body[:len(body)/2])
}

func codecBatchTB(t testing.TB, codec records.Codec, n int) []byte {
	t.Helper()
	var raw []records.Record
	for i := range n {
		raw = append(raw, records.Record{TimestampDelta: int64(i), Key: fmt.Appendf(nil, "key-%d", i),
			Value: fmt.Appendf(nil, "value %d value %d value %d value %d", i, i, i, i)})
	}
	b, err := records.AppendBatch(nil, records.BatchSpec{Codec: codec, FirstTimestamp: time.Now().UnixMilli(),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTruncatedGzipRefused: by default the truncated gzip batch is refused
// with CORRUPT_MESSAGE over a real connection, kgo producers before and
// after it are acknowledged, and a kgo consumer reads every acknowledged
// record without a fetch error. Under the passthrough opt-out the same
// batch is acknowledged: the documented risk.
func TestTruncatedGzipRefused(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	createTopic(t, b, "t", 1)
	prod := newClient(t, addr, kgo.ProducerBatchCompression(kgo.GzipCompression()), kgo.DefaultProduceTopic("t"))
	ctx := testCtx(t)
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "before %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	raw := dialRaw(t, addr)
	if r := tcpProduce(t, raw, 9, "t", truncatedGzipBatch(t)); r.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("truncated gzip: %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(r.ErrorCode))
	}
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "after %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := consumeN(t, addr, "t", 20)
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d at offset %d", i, r.Offset)
		}
	}

	pass := newTestBroker(t, func(c *Config) { c.PassCompressedRecords = true })
	createTopic(t, pass, "t", 1)
	if r := tcpProduce(t, dialRaw(t, listen(t, pass)), 9, "t", truncatedGzipBatch(t)); r.ErrorCode != 0 {
		t.Fatalf("opt-out: %v, want the batch passed through", kerr.ErrorForCode(r.ErrorCode))
	}
}

// mutate flips, inserts or cuts bytes of a batch's body and fixes its
// length and CRC, so only record-level validation can refuse it.
func mutate(r *rand.Rand, batch []byte) []byte {
	body := append([]byte(nil), batch[records.BatchHeaderLen:]...)
	switch r.IntN(4) {
	case 0:
		for range 1 + r.IntN(3) {
			body[r.IntN(len(body))] ^= byte(1 + r.IntN(255))
		}
	case 1:
		body = body[:r.IntN(len(body))]
	case 2:
		i := r.IntN(len(body))
		body = append(body[:i:i], append([]byte{byte(r.Uint32())}, body[i:]...)...)
	case 3:
		i := r.IntN(len(body))
		body = append(body[:i:i], body[min(len(body), i+1+r.IntN(8)):]...)
	}
	return withBody(batch, body)
}

// TestMutatedBatchesConsumable: 600 mutated batches of every codec
// (recomputed CRCs) go over a real connection; whatever is acknowledged,
// a kgo consumer then reads the whole partition, every acknowledged record
// included, without a decoding error.
func TestMutatedBatchesConsumable(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	createTopic(t, b, "m", 1)
	raw := dialRaw(t, addr)
	r := rand.New(rand.NewPCG(14, 14))
	acked, refused := 0, 0
	for i := range 600 {
		codec := []records.Codec{records.CodecGzip, records.CodecSnappy, records.CodecLZ4, records.CodecZstd}[i%4]
		good := codecBatchTB(t, codec, 1+r.IntN(8))
		bad := mutate(r, good)
		res := tcpProduce(t, raw, 9, "m", bad)
		switch res.ErrorCode {
		case 0:
			acked += int(binary.BigEndian.Uint32(bad[57:]))
		case kerr.CorruptMessage.Code, kerr.InvalidRecord.Code, kerr.MessageTooLarge.Code:
			refused++
		default:
			t.Fatalf("batch %d (%s): %v", i, codec, kerr.ErrorForCode(res.ErrorCode))
		}
	}
	t.Logf("%d records acknowledged, %d batches refused", acked, refused)
	if refused == 0 {
		t.Fatal("no mutation was refused")
	}
	if acked > 0 {
		consumeN(t, addr, "m", acked)
	}
	// Every stored batch also decodes with the in-memory decoder.
	stored, _ := tcpFetchAll(t, raw, "m")
	for i, sb := range stored {
		it, err := records.BatchRecords(sb, 64<<20)
		if err != nil {
			t.Fatalf("stored batch %d: %v", i, err)
		}
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			t.Fatalf("stored batch %d: %v", i, err)
		}
	}
}

// FuzzProduceCompressed: a batch of any codec with any body (CRC fixed up)
// is either refused or decodes in full with the in-memory decoder (the
// same libraries kgo decompresses with) and kgo's own record parsing.
// Seeds: testdata/fuzz/FuzzProduceCompressed.
func FuzzProduceCompressed(f *testing.F) {
	for _, c := range []records.Codec{records.CodecGzip, records.CodecSnappy, records.CodecLZ4, records.CodecZstd} {
		good := codecBatchTB(f, c, 3)
		f.Add(byte(c), good[records.BatchHeaderLen:])
	}
	b := newTestBroker(f)
	createTopic(f, b, "f", 1)
	f.Fuzz(func(t *testing.T, codec byte, body []byte) {
		c := records.Codec(codec % 5)
		tmpl := codecBatchTB(t, c, 3)
		batch := withBody(tmpl, body)
		res := produce(t, b, "f", 0, batch)
		if res.ErrorCode != 0 {
			return
		}
		it, err := records.BatchRecords(batch, 64<<20)
		if err != nil {
			t.Fatalf("acknowledged batch does not decompress: %v", err)
		}
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); err != nil || n != 3 {
			t.Fatalf("acknowledged batch: %d records, %v", n, err)
		}
		// kgo parses what it decompressed with kmsg; check that it
		// would find the same records.
		plain := body
		if c != records.CodecNone {
			if plain, err = records.Decompress(c, body, 64<<20); err != nil {
				t.Fatal(err)
			}
		}
		if got := kmsgRecords(t, plain, 3); got != 3 {
			t.Fatalf("kmsg parsed %d records", got)
		}
	})
}

// kmsgRecords splits plain into records as kgo does (length varint, then
// kmsg.Record.ReadFrom on exactly those bytes) and returns how many of the
// first n parse.
func kmsgRecords(t *testing.T, plain []byte, n int) int {
	t.Helper()
	for i := range n {
		length, used := kbin.Varint(plain)
		total := used + int(length)
		if used == 0 || length < 0 || len(plain) < total {
			return i
		}
		var r kmsg.Record
		if err := r.ReadFrom(plain[:total]); err != nil {
			return i
		}
		plain = plain[total:]
	}
	return n
}
