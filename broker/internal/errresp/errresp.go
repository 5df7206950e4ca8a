// Package errresp builds an error answer for any request from kmsg's
// structs alone: the broker sends one when a request arrives where it may
// not be served (mid SASL exchange, a group refused whole, a node that is
// not the coordinator) and the request's own response type is the answer.
package errresp

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// For is req's own response type answering code, shaped like
// Kafka's AbstractRequest.getErrorResponse: a top-level error code where the
// response has one, and the items the request named (topics, partitions,
// groups, resources) echoed back with the code in each. Kafka sends this
// for a request that arrives in the middle of a SASL exchange
// (ILLEGAL_SASL_STATE) before closing the connection.
//
// It is built by reflection over kmsg's structs rather than by one
// function per API: a response array whose request twin has the same field
// name gets one element per request element, with the same-named key fields
// (names, ids, partition numbers) copied, recursively.
func For(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	fillError(reflect.ValueOf(resp).Elem(), reflect.ValueOf(req).Elem(), code)
	if r, ok := req.(*kmsg.AlterReplicaLogDirsRequest); ok {
		// The one response whose items are a level down in the request
		// (topics inside dirs).
		ar := resp.(*kmsg.AlterReplicaLogDirsResponse)
		for _, d := range r.Dirs {
			for _, dt := range d.Topics {
				st := kmsg.NewAlterReplicaLogDirsResponseTopic()
				st.Topic = dt.Topic
				for _, p := range dt.Partitions {
					sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
					sp.Partition, sp.ErrorCode = p, code
					st.Partitions = append(st.Partitions, sp)
				}
				ar.Topics = append(ar.Topics, st)
			}
		}
	}
	return resp
}

// fillError sets every ErrorCode of dst (a response struct) to code and
// mirrors src's (the request's) same-named arrays into dst's arrays.
func fillError(dst, src reflect.Value, code int16) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		d := dst.Field(i)
		switch {
		case f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16:
			d.SetInt(int64(code))
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			if !src.IsValid() {
				continue
			}
			s := src.FieldByName(f.Name)
			for _, alias := range requestArray[f.Name] {
				if s.IsValid() {
					break
				}
				s = src.FieldByName(alias)
			}
			if !s.IsValid() || s.Kind() != reflect.Slice {
				continue
			}
			out := reflect.MakeSlice(f.Type, s.Len(), s.Len())
			for j := range s.Len() {
				e := out.Index(j)
				if def, ok := e.Addr().Interface().(interface{ Default() }); ok {
					def.Default()
				}
				se := s.Index(j)
				if se.Kind() == reflect.Struct {
					copyKeys(e, se)
					fillError(e, se, code)
					continue
				}
				// A list of bare names or numbers (DescribeGroups'
				// groups, OffsetFetch's partitions): the value goes
				// to the element's first field of its type.
				setFirstOfType(e, se)
				fillError(e, reflect.Value{}, code)
			}
			d.Set(out)
		}
	}
}

// requestArray names the request array a response array answers where
// the names differ.
var requestArray = map[string][]string{
	"Coordinators":      {"CoordinatorKeys"},                            // FindCoordinator v4+
	"TransactionStates": {"TransactionalIDs"},                           // DescribeTransactions
	"Results":           {"Creations", "Filters", "Users", "Deletions"}, // CreateAcls, DeleteAcls, Describe/AlterUserScramCredentials
	"Groups":            {"GroupIDs"},                                   // ShareGroupDescribe
}

// copyKeys copies the identifying scalars of a request element into its
// response element: fields of the same name and type that are strings,
// small integers or UUIDs. Larger values (offsets, timestamps, bytes) are
// request data, not keys, and are left at their defaults.
func copyKeys(dst, src reflect.Value) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "ErrorCode" {
			continue
		}
		s := src.FieldByName(f.Name)
		if !s.IsValid() || s.Type() != f.Type || !isKeyType(f.Type) {
			continue
		}
		dst.Field(i).Set(s)
	}
}

func isKeyType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Int8, reflect.Int32:
		return true
	case reflect.Pointer:
		return t.Elem().Kind() == reflect.String
	case reflect.Array:
		return t.Elem().Kind() == reflect.Uint8
	}
	return false
}

func setFirstOfType(dst, v reflect.Value) {
	for i := range dst.NumField() {
		if f := dst.Field(i); dst.Type().Field(i).IsExported() && f.Type() == v.Type() {
			f.Set(v)
			return
		}
	}
}
