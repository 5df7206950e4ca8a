package recordcheck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/topicconfig"
	"github.com/minikafka/minikafka/internal/records"
)

func batchOf(t *testing.T, first int64, recs ...records.Record) (records.BatchHeader, []byte) {
	t.Helper()
	b, err := records.AppendBatch(nil, records.BatchSpec{FirstTimestamp: first, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := records.Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	return h, b
}

func config(t *testing.T, set map[string]string) *topicconfig.Config {
	t.Helper()
	c, err := topicconfig.Parse(set)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Check's answers as Kafka's LogValidator gives them: a good batch is kept
// as sent; every offending record is listed, with Kafka's messages, and
// the code is INVALID_TIMESTAMP when any timestamp is the problem.
func TestCheck(t *testing.T) {
	now := time.Now()
	keyed := records.Record{Key: []byte("k"), Value: []byte("v")}
	keyless := records.Record{Value: []byte("v")}

	h, b := batchOf(t, now.UnixMilli(), keyed, keyless)
	got, err := Check(&h, b, "t", 3, false, false, config(t, nil), now)
	if err != nil || &got[0] != &b[0] {
		t.Fatalf("a valid batch: %v (kept as sent: %v)", err, err == nil && &got[0] == &b[0])
	}

	_, err = Check(&h, b, "t", 3, false, false, config(t, map[string]string{"cleanup.policy": "compact"}), now)
	var e *Error
	if !errors.As(err, &e) || e.Code != kerr.InvalidRecord.Code || len(e.Records) != 1 || e.Records[0].Index != 1 ||
		e.Records[0].Msg != "Compacted topic cannot accept message without key in topic partition t-3" {
		t.Fatalf("keyless record on a compacted topic: %#v", err)
	}
	if want := "One or more records have been rejected due to 1 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='Compacted topic cannot accept message without key in topic partition t-3')]"; e.Error() != want {
		t.Fatalf("message:\n got %s\nwant %s", e.Error(), want)
	}
	var sp kmsg.ProduceResponseTopicPartition
	e.Fill(&sp)
	if len(sp.ErrorRecords) != 1 || sp.ErrorRecords[0].RelativeOffset != 1 || *sp.ErrorRecords[0].ErrorMessage != e.Records[0].Msg {
		t.Fatalf("record_errors: %+v", sp.ErrorRecords)
	}

	old := now.Add(-time.Hour).UnixMilli()
	h, b = batchOf(t, old, keyed, keyed)
	_, err = Check(&h, b, "t", 0, false, false, config(t, map[string]string{"message.timestamp.before.max.ms": "60000"}), now)
	if !errors.As(err, &e) || e.Code != kerr.InvalidTimestamp.Code || len(e.Records) != 2 ||
		!strings.HasPrefix(e.Records[0].Msg, "Timestamp ") || !strings.Contains(e.Records[0].Msg, "is out of range") ||
		e.Error() != "One or more records have been rejected due to invalid timestamp" {
		t.Fatalf("timestamps an hour old with a one-minute bound: %#v", err)
	}
}

func TestOutOfRangeSaturates(t *testing.T) {
	const max = 1<<63 - 1
	if !outOfRange(0, -max, 10, 10) || outOfRange(100, 95, 10, 10) || !outOfRange(100, 120, 10, 10) {
		t.Fatal("outOfRange")
	}
	if satAdd(max-1, 5) != max || satSub(-max, 5) != -max-1 || satAdd(1, 2) != 3 || satSub(5, 2) != 3 {
		t.Fatal("saturating arithmetic")
	}
}
