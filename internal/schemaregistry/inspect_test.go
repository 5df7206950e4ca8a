package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// memRegistry is a registry whose state is given, with no topic.
func memRegistry(t *testing.T, schemas ...schemaValue) *Registry {
	t.Helper()
	r := &Registry{s: newState()}
	r.loaded.Store(true)
	for _, v := range schemas {
		if err := r.s.apply(schemaKey(v.Subject, v.Version), mustJSON(v)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func framed(id int, data []byte, indexes ...byte) []byte {
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	return append(append(b, indexes...), data...)
}

func TestDecode(t *testing.T) {
	avroText := `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":["null","string"]},{"name":"c","type":"bytes"}]}`
	protoSrc := "syntax = \"proto3\";\nmessage First { int32 x = 1; }\nmessage Second { string s = 1; message Inner { bool ok = 1; } }\n"
	r := memRegistry(t,
		schemaValue{Subject: "a", Version: 1, ID: 1, Schema: avroText},
		schemaValue{Subject: "j", Version: 1, ID: 2, SchemaType: TypeJSON, Schema: `{"type":"object"}`},
		schemaValue{Subject: "p", Version: 1, ID: 3, SchemaType: TypeProtobuf, Schema: protoSrc},
	)
	ctx := context.Background()

	av, err := avro.Marshal(avro.MustParse(avroText), map[string]any{"a": 7, "b": "hi", "c": []byte("xy")})
	if err != nil {
		t.Fatal(err)
	}
	if id, js, err := r.Decode(ctx, framed(1, av)); err != nil || id != 1 || !jsonEqual(t, js, `{"a":7,"b":"hi","c":"xy"}`) {
		t.Errorf("avro: %d %s %v", id, js, err)
	}
	if _, js, err := r.Decode(ctx, framed(2, []byte(`{"k":1}`))); err != nil || string(js) != `{"k":1}` {
		t.Errorf("json: %s %v", js, err)
	}
	p, _ := r.s.parsedOf(r.s.ids[3])
	fd := p.(*protoSchema).fd
	inner := dynamicpb.NewMessage(fd.Messages().Get(1).Messages().Get(0))
	inner.Set(inner.Descriptor().Fields().ByName("ok"), protoValueBool(true))
	pb, _ := proto.Marshal(inner)
	// indexes [1, 0] (Second.Inner): count 2, then 1 and 0, zigzag.
	if _, js, err := r.Decode(ctx, framed(3, pb, 4, 2, 0)); err != nil || !jsonEqual(t, js, `{"ok":true}`) {
		t.Errorf("protobuf nested: %s %v", js, err)
	}
	first := dynamicpb.NewMessage(fd.Messages().Get(0))
	first.Set(first.Descriptor().Fields().ByName("x"), protoValueInt(5))
	pb, _ = proto.Marshal(first)
	if _, js, err := r.Decode(ctx, framed(3, pb, 0)); err != nil || !jsonEqual(t, js, `{"x":5}`) {
		t.Errorf("protobuf first message: %s %v", js, err)
	}
	for name, bad := range map[string][]byte{
		"short":            {0, 0, 0},
		"no magic byte":    framed(1, av)[1:],
		"unknown id":       framed(9, av),
		"not avro":         framed(1, []byte{0xff}),
		"not json":         framed(2, []byte("{")),
		"bad proto index":  framed(3, pb, 2, 40),
		"bad proto varint": framed(3, nil, 0x80),
	} {
		if _, js, err := r.Decode(ctx, bad); err == nil {
			t.Errorf("%s: decoded as %s", name, js)
		}
	}
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func protoValueBool(b bool) protoreflect.Value { return protoreflect.ValueOfBool(b) }
func protoValueInt(i int32) protoreflect.Value { return protoreflect.ValueOfInt32(i) }
