package broker

// Per-topic authorization for requests a coordinator answers whole
// (OffsetCommit, TxnOffsetCommit, OffsetDelete, the share-group offset
// admin, AddPartitionsToTxn, DescribeProducers): the request is split into
// the topics the principal may act on, which the handler serves, and the
// others, answered TOPIC_AUTHORIZATION_FAILED in every partition and
// appended to the handler's response, as Kafka's KafkaApis merges its
// unauthorized topics back in. Reflection keeps one rule for every such
// request: each has a Topics list whose elements name their topic in a
// Topic string or a TopicID.

import (
	"context"
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/protocol"
)

// splitMode says what happens to the authorized topics when some are not.
type splitMode int8

const (
	// serveAllowed serves the authorized topics.
	serveAllowed splitMode = iota
	// allOrNothing answers the authorized topics OPERATION_NOT_ATTEMPTED
	// without serving them (AddPartitionsToTxn, as Kafka).
	allOrNothing
)

// topicsAuthorized wraps an API table handler with the per-topic check
// for op (see the file doc); a long-polling answer (Reply.Wait) gets the
// refused topics when it completes.
func topicsAuthorized(op acl.Operation, mode splitMode, fn handler) handler {
	return func(b *Broker, ctx context.Context, req *protocol.Request) protocol.Reply {
		if b.acls == nil {
			return fn(b, ctx, req)
		}
		served, finish := b.splitTopics(req, op, mode)
		if finish == nil {
			return fn(b, ctx, req)
		}
		if served == nil {
			return protocol.Reply{Response: finish(nil)}
		}
		sub := *req
		sub.Body = served
		reply := fn(b, ctx, &sub)
		switch {
		case reply.Response != nil:
			reply.Response = finish(reply.Response)
		case reply.Wait != nil:
			wait := reply.Wait
			reply.Wait = func() (kmsg.Response, error) {
				resp, err := wait()
				if resp != nil {
					resp = finish(resp)
				}
				return resp, err
			}
		}
		return reply
	}
}

// splitTopics splits req by what the principal may do on each topic. With
// every topic allowed finish is nil and req is served as it is; otherwise
// served is the request to serve (nil: serve nothing) and finish turns its
// response (nil when nothing was served) into the whole answer.
func (b *Broker) splitTopics(req *protocol.Request, op acl.Operation, mode splitMode) (served kmsg.Request, finish func(kmsg.Response) kmsg.Response) {
	az := b.authorizer(req)
	if az == nil {
		return req.Body, nil
	}
	rv := reflect.ValueOf(req.Body).Elem()
	topics := rv.FieldByName("Topics")
	var allowed, denied []int
	for i := range topics.Len() {
		if name, ok := b.requestTopicName(topics.Index(i)); !ok || az.topic(op, name) {
			allowed = append(allowed, i) // an unknown ID is the handler's to answer
		} else {
			denied = append(denied, i)
		}
	}
	if len(denied) == 0 {
		return req.Body, nil
	}
	deniedResp := errorResponse(withTopics(rv, topics, denied), errTopicAuth)
	finish = func(resp kmsg.Response) kmsg.Response {
		if resp == nil {
			if mode == allOrNothing {
				resp = errorResponse(withTopics(rv, topics, allowed), kerr.OperationNotAttempted.Code)
				setTopCode(resp, 0)
			} else {
				resp = req.Body.ResponseKind()
				resp.SetVersion(req.Version)
			}
		}
		out := reflect.ValueOf(resp).Elem().FieldByName("Topics")
		out.Set(reflect.AppendSlice(out, reflect.ValueOf(deniedResp).Elem().FieldByName("Topics")))
		return resp
	}
	if mode == allOrNothing || len(allowed) == 0 {
		return nil, finish
	}
	return withTopics(rv, topics, allowed), finish
}

// requestTopicName is the topic a request's topic element names; ok is
// false for an ID no topic has.
func (b *Broker) requestTopicName(t reflect.Value) (string, bool) {
	if f := t.FieldByName("Topic"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		return f.String(), true
	}
	if f := t.FieldByName("TopicID"); f.IsValid() {
		id := f.Interface().([16]byte)
		if tp := b.lookupTopic("", id); tp != nil {
			return tp.name, true
		}
	}
	return "", false
}

// withTopics is a shallow copy of the request rv with only the topics at
// idx.
func withTopics(rv, topics reflect.Value, idx []int) kmsg.Request {
	cp := reflect.New(rv.Type())
	cp.Elem().Set(rv)
	sub := reflect.MakeSlice(topics.Type(), 0, len(idx))
	for _, i := range idx {
		sub = reflect.Append(sub, topics.Index(i))
	}
	cp.Elem().FieldByName("Topics").Set(sub)
	return cp.Interface().(kmsg.Request)
}

// setTopCode sets the response's top-level ErrorCode, if it has one.
func setTopCode(resp kmsg.Response, code int16) {
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(code))
	}
}
