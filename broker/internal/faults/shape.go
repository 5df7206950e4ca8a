package faults

// Shaping an injected error as Kafka shapes it: responses with topics and
// partitions carry the code in every partition the request named (the
// top-level code, where the response has one, stays 0, as a real broker
// answers NOT_LEADER_OR_FOLLOWER); group and coordinator lists carry it
// per entry; everything else at the top level. Reflection keeps one rule
// for every kmsg response; it runs only when a fault fires.

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorName is the Kafka name of an error code, "" when unknown.
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if n, ok := renamed[code]; ok {
		return n
	}
	err := kerr.ErrorForCode(code)
	if ke, ok := err.(*kerr.Error); ok && ke.Code == code {
		return ke.Message
	}
	return ""
}

// ErrorCode parses a Kafka error name (NOT_LEADER_OR_FOLLOWER) into its
// code.
func ErrorCode(name string) (int16, bool) {
	for code := int16(-1); code < 200; code++ {
		if code != 0 && ErrorName(code) == name {
			return code, true
		}
	}
	if name == "NOT_LEADER_FOR_PARTITION" { // the name before Kafka 2.6
		return 6, true
	}
	return 0, false
}

// renamed holds Kafka's current names where kerr keeps an older one.
var renamed = map[int16]string{6: "NOT_LEADER_OR_FOLLOWER"}

var (
	fetchSessionErrs = map[int16]bool{70: true, 71: true} // FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH
)

// Response is req's response with code where Kafka puts it for a fault
// (errresp.For, for SASL, sets every code, top level
// included).
func Response(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		if fetchSessionErrs[code] {
			setTop(resp, code)
			return resp
		}
		mirrorTopics(reflect.ValueOf(req).Elem(), reflect.ValueOf(resp).Elem(), code)
		out := resp.(*kmsg.FetchResponse)
		for i := range out.Topics {
			for j := range out.Topics[i].Partitions {
				out.Topics[i].Partitions[j].HighWatermark = -1 // Kafka's INVALID_HIGH_WATERMARK on an error
			}
		}
		return resp
	case *kmsg.MetadataRequest:
		// Metadata has no top-level code: every named topic carries it.
		out := resp.(*kmsg.MetadataResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, code
			out.Topics = append(out.Topics, rt)
		}
		return resp
	case *kmsg.FindCoordinatorRequest:
		out := resp.(*kmsg.FindCoordinatorResponse)
		out.ErrorCode, out.NodeID = code, -1
		for _, k := range r.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID = k, code, -1
			out.Coordinators = append(out.Coordinators, c)
		}
		return resp
	case *kmsg.DescribeGroupsRequest:
		out := resp.(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			out.Groups = append(out.Groups, rg)
		}
		return resp
	case *kmsg.DeleteGroupsRequest:
		out := resp.(*kmsg.DeleteGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			out.Groups = append(out.Groups, rg)
		}
		return resp
	case *kmsg.OffsetFetchRequest:
		out := resp.(*kmsg.OffsetFetchResponse)
		if r.Version >= 8 {
			for _, g := range r.Groups {
				rg := kmsg.NewOffsetFetchResponseGroup()
				rg.Group, rg.ErrorCode = g.Group, code
				out.Groups = append(out.Groups, rg)
			}
			return resp
		}
		out.ErrorCode = code
		return resp
	case *kmsg.DeleteTopicsRequest:
		out := resp.(*kmsg.DeleteTopicsResponse)
		for _, n := range r.TopicNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(n), code
			out.Topics = append(out.Topics, rt)
		}
		for _, t := range r.Topics {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, code
			out.Topics = append(out.Topics, rt)
		}
		return resp
	}
	if mirrorTopics(reflect.ValueOf(req).Elem(), reflect.ValueOf(resp).Elem(), code) {
		return resp
	}
	setTop(resp, code)
	return resp
}

// setTop sets the response's top-level ErrorCode, if it has one.
func setTop(resp kmsg.Response, code int16) {
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(code))
	}
}

// mirrorTopics copies the request's Topics (by Topic / TopicID) and their
// Partitions (by Partition) into the response's, each partition (or each
// topic, when topics have no partitions) carrying code. It reports
// whether both sides have such a list.
func mirrorTopics(req, resp reflect.Value, code int16) bool {
	rqT, rsT := req.FieldByName("Topics"), resp.FieldByName("Topics")
	if !rqT.IsValid() || !rsT.IsValid() || rqT.Kind() != reflect.Slice || rsT.Kind() != reflect.Slice ||
		rsT.Type().Elem().Kind() != reflect.Struct || rqT.Type().Elem().Kind() != reflect.Struct {
		return false
	}
	out := reflect.MakeSlice(rsT.Type(), 0, rqT.Len())
	for i := 0; i < rqT.Len(); i++ {
		qt := rqT.Index(i)
		st := newElem(rsT.Type().Elem())
		copyField(qt, st, "Topic")
		copyField(qt, st, "TopicID")
		qp, sp := qt.FieldByName("Partitions"), st.FieldByName("Partitions")
		if qp.IsValid() && sp.IsValid() && qp.Kind() == reflect.Slice && sp.Kind() == reflect.Slice &&
			sp.Type().Elem().Kind() == reflect.Struct {
			parts := reflect.MakeSlice(sp.Type(), 0, qp.Len())
			for j := 0; j < qp.Len(); j++ {
				p := newElem(sp.Type().Elem())
				switch q := qp.Index(j); q.Kind() {
				case reflect.Struct:
					copyField(q, p, "Partition")
				case reflect.Int32: // AddPartitionsToTxn lists bare partition numbers
					if f := p.FieldByName("Partition"); f.IsValid() {
						f.SetInt(q.Int())
					}
				}
				setCode(p, code)
				parts = reflect.Append(parts, p)
			}
			sp.Set(parts)
		} else {
			setCode(st, code)
		}
		out = reflect.Append(out, st)
	}
	rsT.Set(out)
	return true
}

// newElem is a zero element with kmsg's defaults (-1 offsets and the like).
func newElem(t reflect.Type) reflect.Value {
	p := reflect.New(t)
	if d, ok := p.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return p.Elem()
}

func copyField(from, to reflect.Value, name string) {
	f, t := from.FieldByName(name), to.FieldByName(name)
	if !f.IsValid() || !t.IsValid() {
		return
	}
	switch {
	case f.Type() == t.Type():
		t.Set(f)
	case f.Kind() == reflect.String && t.Kind() == reflect.Pointer && t.Type().Elem().Kind() == reflect.String:
		s := f.String()
		t.Set(reflect.ValueOf(&s))
	case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String && t.Kind() == reflect.String && !f.IsNil():
		t.SetString(f.Elem().String())
	}
}

func setCode(v reflect.Value, code int16) {
	if f := v.FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		f.SetInt(int64(code))
	}
}

// requestTouches reports whether req names topic (and partition).
func requestTouches(rq *Request, topic string, partition int32, byPartition bool) bool {
	req := rq.Body
	switch r := req.(type) {
	case *kmsg.MetadataRequest:
		if r.Topics == nil {
			return true // all topics
		}
		for _, t := range r.Topics {
			if t.Topic != nil && *t.Topic == topic {
				return true
			}
		}
		return false
	case *kmsg.DeleteTopicsRequest:
		for _, n := range r.TopicNames {
			if n == topic {
				return true
			}
		}
	}
	var id [16]byte
	if rq.TopicID != nil {
		id = rq.TopicID(topic)
	}
	v := reflect.ValueOf(req).Elem().FieldByName("Topics")
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < v.Len(); i++ {
		t := v.Index(i)
		match := false
		if f := t.FieldByName("Topic"); f.IsValid() {
			switch f.Kind() {
			case reflect.String:
				match = f.String() == topic
			case reflect.Pointer:
				match = !f.IsNil() && f.Elem().String() == topic
			}
		}
		if f := t.FieldByName("TopicID"); !match && f.IsValid() && id != ([16]byte{}) {
			match = f.Interface() == any(id)
		}
		if !match {
			continue
		}
		if !byPartition {
			return true
		}
		ps := t.FieldByName("Partitions")
		if !ps.IsValid() || ps.Kind() != reflect.Slice {
			return true
		}
		for j := 0; j < ps.Len(); j++ {
			p := ps.Index(j)
			if p.Kind() == reflect.Int32 && int32(p.Int()) == partition {
				return true
			}
			if p.Kind() == reflect.Struct {
				if f := p.FieldByName("Partition"); f.IsValid() && int32(f.Int()) == partition {
					return true
				}
			}
		}
	}
	return false
}

// requestGroups lists the groups req is for.
func requestGroups(req kmsg.Request) []string {
	switch r := req.(type) {
	case *kmsg.FindCoordinatorRequest:
		if r.CoordinatorType != 0 {
			return nil
		}
		if r.Version >= 4 {
			return r.CoordinatorKeys
		}
		return []string{r.CoordinatorKey}
	case *kmsg.JoinGroupRequest:
		return []string{r.Group}
	case *kmsg.SyncGroupRequest:
		return []string{r.Group}
	case *kmsg.HeartbeatRequest:
		return []string{r.Group}
	case *kmsg.LeaveGroupRequest:
		return []string{r.Group}
	case *kmsg.OffsetCommitRequest:
		return []string{r.Group}
	case *kmsg.OffsetFetchRequest:
		if r.Version >= 8 {
			gs := make([]string, len(r.Groups))
			for i, g := range r.Groups {
				gs[i] = g.Group
			}
			return gs
		}
		return []string{r.Group}
	case *kmsg.DescribeGroupsRequest:
		return r.Groups
	case *kmsg.DeleteGroupsRequest:
		return r.Groups
	case *kmsg.OffsetDeleteRequest:
		return []string{r.Group}
	case *kmsg.TxnOffsetCommitRequest:
		return []string{r.Group}
	case *kmsg.AddOffsetsToTxnRequest:
		return []string{r.Group}
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return []string{r.Group}
	case *kmsg.ConsumerGroupDescribeRequest:
		return r.Groups
	}
	return nil
}

// requestTxnIDs lists the transactional IDs req is for.
func requestTxnIDs(req kmsg.Request) []string {
	switch r := req.(type) {
	case *kmsg.FindCoordinatorRequest:
		if r.CoordinatorType != 1 {
			return nil
		}
		if r.Version >= 4 {
			return r.CoordinatorKeys
		}
		return []string{r.CoordinatorKey}
	case *kmsg.ProduceRequest:
		if r.TransactionID != nil {
			return []string{*r.TransactionID}
		}
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID != nil {
			return []string{*r.TransactionalID}
		}
	case *kmsg.AddPartitionsToTxnRequest:
		return []string{r.TransactionalID}
	case *kmsg.AddOffsetsToTxnRequest:
		return []string{r.TransactionalID}
	case *kmsg.EndTxnRequest:
		return []string{r.TransactionalID}
	case *kmsg.TxnOffsetCommitRequest:
		return []string{r.TransactionalID}
	case *kmsg.DescribeTransactionsRequest:
		return r.TransactionalIDs
	}
	return nil
}
