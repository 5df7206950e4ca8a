package acl

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
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SplitMode says what happens to the authorized topics when some are not.
type SplitMode int8

const (
	// ServeAllowed serves the authorized topics.
	ServeAllowed SplitMode = iota
	// AllOrNothing answers the authorized topics OPERATION_NOT_ATTEMPTED
	// without serving them (AddPartitionsToTxn, as Kafka).
	AllOrNothing
)

// Splitter is what SplitTopics needs of the broker.
type Splitter interface {
	// TopicName is the name of the topic with ID id, false if none.
	TopicName(id [16]byte) (string, bool)
	// ErrorResponse is req's answer with code in every item.
	ErrorResponse(req kmsg.Request, code int16) kmsg.Response
}

// SplitTopics splits req (of version) by whether r allows op on each
// topic (see the file doc). With every topic allowed finish is nil and
// req is served as it is; otherwise served is the request to serve (nil:
// serve nothing) and finish turns its response (nil when nothing was
// served) into the whole answer.
func (r *Request) SplitTopics(req kmsg.Request, op Operation, mode SplitMode, sp Splitter) (served kmsg.Request, finish func(kmsg.Response) kmsg.Response) {
	if r == nil {
		return req, nil
	}
	rv := reflect.ValueOf(req).Elem()
	topics := rv.FieldByName("Topics")
	var allowed, denied []int
	for i := range topics.Len() {
		if name, ok := requestTopicName(topics.Index(i), sp); !ok || r.Allowed(op, kmsg.ACLResourceTypeTopic, name) {
			allowed = append(allowed, i) // an unknown ID is the handler's to answer
		} else {
			denied = append(denied, i)
		}
	}
	if len(denied) == 0 {
		return req, nil
	}
	deniedResp := sp.ErrorResponse(withTopics(rv, topics, denied), errTopicAuth)
	finish = func(resp kmsg.Response) kmsg.Response {
		if resp == nil {
			if mode == AllOrNothing {
				resp = sp.ErrorResponse(withTopics(rv, topics, allowed), kerr.OperationNotAttempted.Code)
				setTopCode(resp, 0)
			} else {
				resp = req.ResponseKind()
				resp.SetVersion(req.GetVersion())
			}
		}
		out := reflect.ValueOf(resp).Elem().FieldByName("Topics")
		out.Set(reflect.AppendSlice(out, reflect.ValueOf(deniedResp).Elem().FieldByName("Topics")))
		return resp
	}
	if mode == AllOrNothing || len(allowed) == 0 {
		return nil, finish
	}
	return withTopics(rv, topics, allowed), finish
}

// requestTopicName is the topic a request's topic element names; ok is
// false for an ID no topic has.
func requestTopicName(t reflect.Value, sp Splitter) (string, bool) {
	if f := t.FieldByName("Topic"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		return f.String(), true
	}
	if f := t.FieldByName("TopicID"); f.IsValid() {
		return sp.TopicName(f.Interface().([16]byte))
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
