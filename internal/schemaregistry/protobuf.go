package schemaregistry

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// protoSchema is a parsed .proto file.
type protoSchema struct {
	text string
	fd   protoreflect.FileDescriptor
}

// parseProtobuf compiles text as a .proto file whose imports are the
// references (by their names) and protoc's standard imports; nothing is
// read from disk.
func parseProtobuf(text string, refs []resolved) (parsedSchema, error) {
	main := "registered.proto"
	files := map[string]string{}
	for _, r := range refs {
		if r.typ != TypeProtobuf {
			return nil, fmt.Errorf("reference %q is a %s schema, not PROTOBUF", r.name, r.typ)
		}
		files[r.name] = r.text
	}
	for files[main] != "" {
		main = "_" + main
	}
	files[main] = text
	sources := &protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(files)}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.ResolverFunc(func(name string) (protocompile.SearchResult, error) {
			// A file may be a serialized FileDescriptorProto in base64,
			// as Confluent's registry accepts and the JavaScript and
			// Python serializers send.
			if fdp := descriptorOf(files[name]); fdp != nil {
				fdp.Name = proto.String(name)
				return protocompile.SearchResult{Proto: fdp}, nil
			}
			return sources.FindFileByPath(name)
		})),
		MaxParallelism: 1,
	}
	out, err := c.Compile(context.Background(), main)
	if err != nil {
		return nil, err
	}
	return &protoSchema{text: text, fd: out[0]}, nil
}

// descriptorOf is text as a base64 serialized FileDescriptorProto; nil
// when it is not one (then it is .proto source).
func descriptorOf(text string) *descriptorpb.FileDescriptorProto {
	if text == "" || strings.ContainsAny(text, " \t\n;{") {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if proto.Unmarshal(raw, fdp) != nil {
		return nil
	}
	return fdp
}

// serialized is the schema as a base64 serialized FileDescriptorProto,
// Confluent's ?format=serialized.
func (p *protoSchema) serialized() string {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(p.fd))
	if err != nil {
		return p.text
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func (p *protoSchema) canonical(normalize bool) string {
	if normalize {
		return strings.TrimSpace(p.text)
	}
	return p.text
}

// readableFrom applies Confluent's Protobuf rules to the change from
// writer to p: removing a message, changing a field's kind, its scalar
// type outside a wire-compatible group or its message or enum type,
// adding or removing a required field, moving a field into an existing
// oneof or out of one, or changing the package break compatibility; adding or removing
// optional fields does not.
func (p *protoSchema) readableFrom(writer parsedSchema) []string {
	w, ok := writer.(*protoSchema)
	if !ok {
		return []string{"the schema types differ"}
	}
	var msgs []string
	fail := func(kind, format string, args ...any) {
		msgs = append(msgs, kind+": "+fmt.Sprintf(format, args...))
	}
	if w.fd.Package() != p.fd.Package() {
		fail("PACKAGE_CHANGED", "package %s became %s", w.fd.Package(), p.fd.Package())
	}
	readers := map[protoreflect.FullName]protoreflect.MessageDescriptor{}
	eachMessage(p.fd.Messages(), func(m protoreflect.MessageDescriptor) { readers[m.FullName()] = m })
	eachMessage(w.fd.Messages(), func(wm protoreflect.MessageDescriptor) {
		rm, ok := readers[wm.FullName()]
		if !ok {
			fail("MESSAGE_REMOVED", "message %s", wm.FullName())
			return
		}
		for i := range wm.Fields().Len() {
			wf := wm.Fields().Get(i)
			rf := rm.Fields().ByNumber(wf.Number())
			if wo := realOneof(wf); wo != nil && rm.Oneofs().ByName(wo.Name()) != nil {
				if rf == nil || realOneof(rf) == nil || realOneof(rf).Name() != wo.Name() {
					fail("ONEOF_FIELD_REMOVED", "%s field %d left oneof %s", wm.FullName(), wf.Number(), wo.Name())
				}
			}
			if rf == nil {
				if wf.Cardinality() == protoreflect.Required {
					fail("REQUIRED_FIELD_REMOVED", "%s field %d", wm.FullName(), wf.Number())
				}
				continue
			}
			where := fmt.Sprintf("%s field %d (%s)", wm.FullName(), wf.Number(), rf.Name())
			wk, rk := fieldKind(wf), fieldKind(rf)
			switch {
			case wk != rk:
				fail("FIELD_KIND_CHANGED", "%s: %s became %s", where, wk, rk)
			case wk == "scalar" && scalarGroup(wf.Kind()) != scalarGroup(rf.Kind()):
				fail("FIELD_SCALAR_KIND_CHANGED", "%s: %s became %s", where, wf.Kind(), rf.Kind())
			case wk == "message" && wf.Message().FullName() != rf.Message().FullName():
				fail("FIELD_NAMED_TYPE_CHANGED", "%s: %s became %s", where, wf.Message().FullName(), rf.Message().FullName())
			case wk == "enum" && wf.Enum().FullName() != rf.Enum().FullName():
				fail("FIELD_NAMED_TYPE_CHANGED", "%s: %s became %s", where, wf.Enum().FullName(), rf.Enum().FullName())
			}
			if ro := realOneof(rf); ro != nil && realOneof(wf) == nil && wm.Oneofs().ByName(ro.Name()) != nil {
				fail("FIELD_MOVED_TO_EXISTING_ONEOF", "%s moved into oneof %s", where, ro.Name())
			}
		}
		for i := range rm.Fields().Len() {
			rf := rm.Fields().Get(i)
			if wm.Fields().ByNumber(rf.Number()) == nil && rf.Cardinality() == protoreflect.Required {
				fail("REQUIRED_FIELD_ADDED", "%s field %d (%s)", wm.FullName(), rf.Number(), rf.Name())
			}
		}
	})
	return msgs
}

func eachMessage(ms protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := range ms.Len() {
		m := ms.Get(i)
		if m.IsMapEntry() {
			continue
		}
		fn(m)
		eachMessage(m.Messages(), fn)
	}
}

func realOneof(f protoreflect.FieldDescriptor) protoreflect.OneofDescriptor {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return o
	}
	return nil
}

func fieldKind(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return "map"
	case f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind:
		return "message"
	case f.Kind() == protoreflect.EnumKind:
		return "enum"
	}
	return "scalar"
}

// scalarGroup names the scalar types that read each other's encoding.
func scalarGroup(k protoreflect.Kind) string {
	groups := [][]protoreflect.Kind{
		{protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.BoolKind},
		{protoreflect.Sint32Kind, protoreflect.Sint64Kind},
		{protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind},
		{protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind},
		{protoreflect.StringKind, protoreflect.BytesKind},
	}
	for _, g := range groups {
		if slices.Contains(g, k) {
			return g[0].String()
		}
	}
	return k.String()
}
