package minikafka_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/internal/records"
)

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
