package faults

// How a fault that fired acts on its request: dropping the connection,
// answering with its error (whole, or for the partitions it names), or
// calling its callback, then shaping the answer (delay, hold, drop after).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Answer is a request's answer: now (Response), later (Wait) or an error
// that closes the connection; all zero for none (acks=0).
type Answer struct {
	Response kmsg.Response
	Wait     func() (kmsg.Response, error)
	Err      error
}

// Handler is the broker's dispatch of a request body: the request as it
// came, or the part of a produce a fault leaves.
type Handler func(ctx context.Context, body kmsg.Request) Answer

// Serve acts out the fault on rq (which Pick chose it for): h serves what
// the handler still answers, closeConn closes the connection. It returns
// nil when the answer is h's for rq's body, unchanged: the broker's
// reply then stands as dispatch gave it.
func (ft *Armed) Serve(ctx context.Context, rq *Request, h Handler, closeConn func()) *Answer {
	f := &ft.f
	if f.DropBefore {
		closeConn()
		return &Answer{Err: ErrDrop}
	}
	var ans Answer
	own := false
	switch key := rq.Key; {
	case f.ErrorCode != 0 && f.Topic != "" && key == 0:
		ans = splitProduce(ctx, rq, f, h)
	case f.ErrorCode != 0 && f.Topic != "" && (key == 1 || key == 2 || key == 23):
		// Fetch, ListOffsets, OffsetForLeaderEpoch: the handler answers
		// the fault's partitions with its code (PartitionCode) and
		// serves the others (a Fetch answer is written from file bytes,
		// so it cannot be split and merged afterwards as produce is).
		ans, own = h(WithPartition(ctx, f), rq.Body), true
	case f.ErrorCode != 0:
		if !IsAcks0(rq.Body) { // acks=0 gets no answer, error or not
			ans.Response = Response(rq.Body, f.ErrorCode)
		}
	case f.Callback != nil:
		next := func() (kmsg.Response, error) {
			a := h(ctx, rq.Body)
			if a.Wait != nil {
				return a.Wait()
			}
			return a.Response, a.Err
		}
		resp, err := f.Callback(rq.Body, next)
		if err != nil {
			closeConn()
			return &Answer{Err: err}
		}
		if resp != nil {
			resp.SetVersion(rq.Version)
		}
		ans.Response = resp
	default:
		ans, own = h(ctx, rq.Body), true
	}
	if ans.Err != nil || (ans.Response == nil && ans.Wait == nil) || !ft.ShapesAnswer() {
		if own {
			return nil
		}
		return &ans
	}
	answer := ans.Wait
	if answer == nil {
		resp := ans.Response
		answer = func() (kmsg.Response, error) { return resp, nil }
	}
	return &Answer{Wait: ft.Around(ctx, answer, closeConn)}
}

// splitProduce serves a produce request whose fault names one topic (and
// maybe a partition): the partitions it names get its code and are not
// written; h serves the others, so a paused partition does not stall its
// neighbours in the same request.
func splitProduce(ctx context.Context, rq *Request, f *Fault, h Handler) Answer {
	r := rq.Body.(*kmsg.ProduceRequest)
	keep, hit := splitTopics(r, f, rq.TopicID(f.Topic))
	if keep == nil {
		if r.Acks == 0 {
			return Answer{}
		}
		return Answer{Response: Response(r, f.ErrorCode)}
	}
	ans := h(ctx, keep)
	switch {
	case ans.Err != nil || r.Acks == 0:
	case ans.Response != nil:
		addTopics(ans.Response, hit)
	case ans.Wait != nil:
		wait := ans.Wait
		ans.Wait = func() (kmsg.Response, error) {
			resp, err := wait()
			if err == nil {
				addTopics(resp, hit)
			}
			return resp, err
		}
	}
	return ans
}

// splitTopics parts r for f, naming a topic of ID id (zero when unknown):
// keep is the request without the partitions f names, nil when none is
// left; hit is their answer, f's code.
func splitTopics(r *kmsg.ProduceRequest, f *Fault, id [16]byte) (keep *kmsg.ProduceRequest, hit []kmsg.ProduceResponseTopic) {
	k := *r
	k.Topics = nil
	for _, t := range r.Topics {
		if t.Topic != f.Topic && (id == [16]byte{} || t.TopicID != id) {
			k.Topics = append(k.Topics, t)
			continue
		}
		kt, ht := t, kmsg.NewProduceResponseTopic()
		kt.Partitions = nil
		ht.Topic, ht.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			if f.HasPartition && p.Partition != f.Partition {
				kt.Partitions = append(kt.Partitions, p)
				continue
			}
			hp := kmsg.NewProduceResponseTopicPartition()
			hp.Partition, hp.ErrorCode = p.Partition, f.ErrorCode
			ht.Partitions = append(ht.Partitions, hp)
		}
		if len(kt.Partitions) > 0 {
			k.Topics = append(k.Topics, kt)
		}
		hit = append(hit, ht)
	}
	if len(k.Topics) == 0 {
		return nil, hit
	}
	return &k, hit
}

// addTopics joins splitTopics' hit topics to a produce answer.
func addTopics(resp kmsg.Response, hit []kmsg.ProduceResponseTopic) {
	if pr, ok := resp.(*kmsg.ProduceResponse); ok {
		pr.Topics = append(pr.Topics, hit...)
	}
}
