package broker

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/errresp"
)

// populate gives every array of a request struct one element (itself
// populated), so that the error response has items to echo.
func populate(v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || f.Kind() != reflect.Slice {
			continue
		}
		switch f.Type().Elem().Kind() {
		case reflect.Struct:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			if def, ok := s.Index(0).Addr().Interface().(interface{ Default() }); ok {
				def.Default()
			}
			populate(s.Index(0), depth+1)
			f.Set(s)
		case reflect.String, reflect.Int32:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
	}
}

// hasCode reports whether some ErrorCode field under v equals code.
func hasCode(v reflect.Value, code int16) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && hasCode(v.Elem(), code)
	case reflect.Slice:
		for i := range v.Len() {
			if hasCode(v.Index(i), code) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Name == "ErrorCode" && v.Field(i).Int() == int64(code) || hasCode(v.Field(i), code) {
				return true
			}
		}
	}
	return false
}

// For every API and version minikafka serves, the ILLEGAL_SASL_STATE answer
// encodes, decodes as that API's response and carries the code (at the top
// or in the echoed items).
func TestErrorResponseEveryAPI(t *testing.T) {
	code := kerr.IllegalSaslState.Code
	for _, a := range apis {
		for v := a.min; v <= a.max; v++ {
			req := kmsg.RequestForKey(a.key)
			req.SetVersion(v)
			populate(reflect.ValueOf(req).Elem(), 0)
			resp := errresp.For(req, code)
			if resp.Key() != a.key || resp.GetVersion() != v {
				t.Fatalf("%s v%d: response key %d v%d", kmsg.NameForKey(a.key), v, resp.Key(), resp.GetVersion())
			}
			back := req.ResponseKind()
			back.SetVersion(v)
			if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
				t.Fatalf("%s v%d: decoding the error response: %v", kmsg.NameForKey(a.key), v, err)
			}
			// DescribeLogDirs before v3 has no error code anywhere
			// (Kafka's answer is empty too).
			if !hasCode(reflect.ValueOf(back), code) && !(a.key == 35 && v < 3) {
				t.Errorf("%s v%d: no ILLEGAL_SASL_STATE in %+v", kmsg.NameForKey(a.key), v, back)
			}
		}
	}
	// Keys are echoed: a produce answer names the request's partitions.
	p := kmsg.NewPtrProduceRequest()
	p.Version = 9
	p.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 3, Records: []byte{1}}, {Partition: 5}}}}
	pr := errresp.For(p, code).(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || pr.Topics[0].Topic != "t" || len(pr.Topics[0].Partitions) != 2 ||
		pr.Topics[0].Partitions[1].Partition != 5 || pr.Topics[0].Partitions[1].ErrorCode != code || pr.Topics[0].Partitions[0].LogStartOffset != -1 {
		t.Fatalf("produce error response %+v", pr)
	}
	g := kmsg.NewPtrDescribeGroupsRequest()
	g.Groups = []string{"g1", "g2"}
	gr := errresp.For(g, code).(*kmsg.DescribeGroupsResponse)
	if len(gr.Groups) != 2 || gr.Groups[1].Group != "g2" || gr.Groups[1].ErrorCode != code {
		t.Fatalf("describe groups error response %+v", gr)
	}
}

// FuzzErrorResponse: whatever request a client sends mid-exchange (any API
// and version we serve, any body kmsg decodes), its ILLEGAL_SASL_STATE
// answer is built without panicking and decodes as that API's response.
func FuzzErrorResponse(f *testing.F) {
	for _, r := range []kmsg.Request{saslProduceReq(1), metadataFor("t"), &kmsg.DescribeGroupsRequest{Groups: []string{"g"}}} {
		for i, a := range apis {
			if a.key == r.Key() {
				f.Add(uint8(i), uint8(r.GetVersion()-a.min), r.AppendTo(nil))
			}
		}
	}
	f.Fuzz(func(t *testing.T, k, v uint8, body []byte) {
		a := apis[int(k)%len(apis)]
		version := a.min + int16(v)%(a.max-a.min+1)
		req := kmsg.RequestForKey(a.key)
		req.SetVersion(version)
		if req.ReadFrom(body) != nil {
			return
		}
		resp := errresp.For(req, kerr.IllegalSaslState.Code)
		back := req.ResponseKind()
		back.SetVersion(version)
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("%s v%d: %v", kmsg.NameForKey(a.key), version, err)
		}
	})
}
