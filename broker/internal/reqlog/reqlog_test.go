package reqlog

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ring keeps the last n entries, oldest first, and each entry carries
// the answer's first error code, or that it was closed or unanswered.
func TestRingKeepsLastEntries(t *testing.T) {
	var l Log
	if l.Ring() != nil || l.Entries() != nil {
		t.Fatal("log on before Enable")
	}
	l.Enable(2)
	r := l.Ring()
	pr := kmsg.NewPtrProduceResponse()
	pt := kmsg.NewProduceResponseTopic()
	pp := kmsg.NewProduceResponseTopicPartition()
	pp.ErrorCode = 6
	pt.Partitions = append(pt.Partitions, pp)
	pr.Topics = append(pr.Topics, pt)
	now := time.Now()
	r.Done(Entry{Time: now, Key: 18}, kmsg.NewPtrApiVersionsResponse(), nil)
	r.Done(Entry{Time: now, Key: 0}, pr, nil)
	r.Done(Entry{Time: now, Key: 1}, nil, errors.New("closed"))
	r.Done(Entry{Time: now, Key: 0}, nil, nil)
	got := l.Entries()
	if len(got) != 2 || got[0].Key != 1 || !got[0].Closed || got[1].Key != 0 || !got[1].NoAnswer {
		t.Fatalf("entries: %+v", got)
	}
	if c := FirstErrorCode(pr); c != 6 {
		t.Fatalf("first error code %d, want 6", c)
	}
	l.Enable(0)
	if l.Entries() != nil {
		t.Fatal("log still on")
	}
}
