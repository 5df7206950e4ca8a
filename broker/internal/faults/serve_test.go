package faults

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fire adds f to a fresh Set and picks it for rq.
func fire(t *testing.T, f Fault, rq *Request) *Armed {
	t.Helper()
	var s Set
	if _, err := s.Add(f); err != nil {
		t.Fatal(err)
	}
	ft := s.Active().Pick(rq)
	if ft == nil {
		t.Fatalf("fault %v did not fire", f)
	}
	return ft
}

// A fault naming one partition of a produce answers that partition with
// its code and hands the handler the rest; an error fault answers
// without the handler, acks=0 with nothing; a fault that neither answers
// nor shapes leaves the handler's reply standing (nil); DropBefore closes
// the connection without a handler.
func TestServe(t *testing.T) {
	noID := func(string) [16]byte { return [16]byte{} }
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = -1
	for _, topic := range []string{"a", "b"} {
		pt := kmsg.NewProduceRequestTopic()
		pt.Topic = topic
		for p := range int32(2) {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition = p
			pt.Partitions = append(pt.Partitions, pp)
		}
		produce.Topics = append(produce.Topics, pt)
	}
	rq := &Request{Key: 0, Version: 9, Body: produce, TopicID: noID}
	var got []kmsg.Request
	h := func(_ context.Context, body kmsg.Request) Answer {
		got = append(got, body)
		resp := body.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range body.(*kmsg.ProduceRequest).Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return Answer{Response: resp}
	}
	closed := 0
	closeConn := func() { closed++ }

	ft := fire(t, Fault{Keys: []int16{0}, Topic: "a", HasPartition: true, Partition: 1, ErrorCode: 6}, rq)
	ans := ft.Serve(context.Background(), rq, h, closeConn)
	if ans == nil || len(got) != 1 || got[0] == kmsg.Request(produce) {
		t.Fatalf("split produce: answer %v, handler got %d requests", ans, len(got))
	}
	codes := map[string]int16{}
	for _, rt := range ans.Response.(*kmsg.ProduceResponse).Topics {
		for _, rp := range rt.Partitions {
			codes[fmt.Sprintf("%s-%d", rt.Topic, rp.Partition)] = rp.ErrorCode
		}
	}
	if len(codes) != 4 || codes["a-1"] != 6 || codes["a-0"] != 0 || codes["b-1"] != 0 {
		t.Fatalf("split produce answered %v", codes)
	}
	if kept := got[0].(*kmsg.ProduceRequest); len(kept.Topics) != 2 || len(kept.Topics[0].Partitions) != 1 {
		t.Fatalf("handler got %+v", kept.Topics)
	}

	got = nil
	ft = fire(t, Fault{Keys: []int16{0}, ErrorCode: 6}, rq)
	if ans := ft.Serve(context.Background(), rq, h, closeConn); ans == nil || ans.Response == nil || len(got) != 0 {
		t.Fatalf("error fault: answer %v, handler called %d times", ans, len(got))
	}
	acks0 := *produce
	acks0.Acks = 0
	rq0 := &Request{Key: 0, Version: 9, Body: &acks0, TopicID: noID}
	ft = fire(t, Fault{Keys: []int16{0}, ErrorCode: 6}, rq0)
	if ans := ft.Serve(context.Background(), rq0, h, closeConn); ans == nil || ans.Response != nil || ans.Wait != nil || ans.Err != nil {
		t.Fatalf("acks=0 error fault answered %+v", ans)
	}

	fr := kmsg.NewPtrFetchRequest()
	frt := kmsg.NewFetchRequestTopic()
	frt.Topic = "a"
	fr.Topics = append(fr.Topics, frt)
	fetch := &Request{Key: 1, Version: 12, Body: fr, TopicID: noID}
	ft = fire(t, Fault{Keys: []int16{1}, Topic: "a", ErrorCode: 6}, fetch)
	var ctxCode int16
	hf := func(ctx context.Context, body kmsg.Request) Answer {
		ctxCode = PartitionCode(ctx, "a", 0)
		return Answer{Response: body.ResponseKind()}
	}
	if ans := ft.Serve(context.Background(), fetch, hf, closeConn); ans != nil || ctxCode != 6 {
		t.Fatalf("partition-scoped fault: answer %v (want the handler's own), code in ctx %d", ans, ctxCode)
	}

	ft = fire(t, Fault{Keys: []int16{1}, DropBefore: true}, fetch)
	if ans := ft.Serve(context.Background(), fetch, hf, closeConn); ans == nil || ans.Err != ErrDrop || closed != 1 {
		t.Fatalf("DropBefore: answer %v, closed %d", ans, closed)
	}
}
