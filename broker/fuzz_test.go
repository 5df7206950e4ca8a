package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/records"
)

// FuzzProduce throws arbitrary bytes at Produce as a partition's records.
// Invariants: no panic; an accepted batch is in the log and fetches back as
// a valid batch; a rejected one leaves the log as it was.
func FuzzProduce(f *testing.F) {
	for _, c := range []records.Codec{records.CodecNone, records.CodecGzip, records.CodecSnappy, records.CodecLZ4, records.CodecZstd} {
		f.Add(makeBatch(f, c, -1, 0, 0, testRec{key: []byte("k"), value: []byte("value"), headers: []records.Header{{Key: []byte("h"), Value: []byte("v")}}}))
		f.Add(makeBatch(f, c, 7, 0, 0, testRec{value: []byte("a")}, testRec{value: nil}))
	}
	f.Add([]byte{})
	f.Add(make([]byte, records.BatchHeaderLen))
	b := newTestBroker(f)
	createTopic(f, b, "t", 1)
	p := b.lookupTopic("t", [16]byte{}).partition(0)
	f.Fuzz(func(t *testing.T, batch []byte) {
		before := p.log.LogEndOffset()
		in := append([]byte(nil), batch...)
		resp := serve(t, b, produceReq(11, -1, "t", [16]byte{}, 0, in)).(*kmsg.ProduceResponse)
		r := resp.Topics[0].Partitions[0]
		after := p.log.LogEndOffset()
		if r.ErrorCode != 0 {
			if after != before {
				t.Fatalf("rejected batch (code %d) changed the log end %d -> %d", r.ErrorCode, before, after)
			}
			return
		}
		if r.BaseOffset >= before && after <= before {
			t.Fatalf("accepted batch at %d but log end stayed %d", r.BaseOffset, after)
		}
		if r.BaseOffset < before {
			return // an idempotent duplicate answered with its original offset
		}
		fr := serve(t, b, fetchReq(11, "t", [16]byte{}, 0, r.BaseOffset, 0, 1)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if fr.ErrorCode != 0 {
			t.Fatalf("fetch of accepted batch: code %d", fr.ErrorCode)
		}
		if _, err := records.Validate(fr.RecordBatches); err != nil {
			t.Fatalf("stored batch invalid: %v", err)
		}
	})
}
