package schemaregistry

import "testing"

func protoText(body string) string {
	return "syntax = \"proto3\";\npackage demo;\n" + body
}

func TestProtobufCompatibility(t *testing.T) {
	m := "message M { int32 a = 1; string s = 2; }\n"
	runCompat(t, []compatCase{
		{name: "same schema", typ: TypeProtobuf, old: []string{protoText(m)}, next: protoText(m), want: levelsAll},
		{name: "field added", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { int32 a = 1; string s = 2; bool b = 3; }\n"), want: levelsAll},
		{name: "field removed", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { int32 a = 1; }\n"), want: levelsAll},
		{name: "field renamed (same number)", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { int32 x = 1; string s = 2; }\n"), want: levelsAll},
		{name: "int32 to int64 (same wire group)", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { int64 a = 1; string s = 2; }\n"), want: levelsAll},
		{name: "string to bytes", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { int32 a = 1; bytes s = 2; }\n"), want: levelsAll},
		{name: "int32 to string", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { string a = 1; string s = 2; }\n"), want: levelsNone},
		{name: "int32 to sint32", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message M { sint32 a = 1; string s = 2; }\n"), want: levelsNone},
		{name: "scalar to message", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText("message N {}\nmessage M { N a = 1; string s = 2; }\n"), want: levelsNone},
		{name: "message type changed", typ: TypeProtobuf,
			old:  []string{protoText("message N {}\nmessage O {}\nmessage M { N n = 1; }\n")},
			next: protoText("message N {}\nmessage O {}\nmessage M { O n = 1; }\n"), want: levelsNone},
		{name: "message removed", typ: TypeProtobuf, old: []string{protoText(m + "message Other { int32 x = 1; }\n")},
			next: protoText(m), want: levelsForward},
		{name: "message added", typ: TypeProtobuf, old: []string{protoText(m)},
			next: protoText(m + "message Other { int32 x = 1; }\n"), want: levelsBackward},
		{name: "package changed", typ: TypeProtobuf, old: []string{protoText(m)},
			next: "syntax = \"proto3\";\npackage other;\n" + m, want: levelsNone},
		{name: "field moved into an existing oneof", typ: TypeProtobuf,
			old:  []string{protoText("message M { int32 a = 1; oneof o { string s = 2; } }\n")},
			next: protoText("message M { oneof o { int32 a = 1; string s = 2; } }\n"), want: levelsNone},
		{name: "proto2 required field added", typ: TypeProtobuf,
			old:  []string{"syntax = \"proto2\";\nmessage M { optional int32 a = 1; }\n"},
			next: "syntax = \"proto2\";\nmessage M { optional int32 a = 1; required int32 b = 2; }\n", want: levelsNone},
	})
}

func TestJSONSchemaCompatibility(t *testing.T) {
	open := `{"type":"object","properties":{"a":{"type":"integer"}}}`
	closed := `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}`
	runCompat(t, []compatCase{
		{name: "same schema", typ: TypeJSON, old: []string{open}, next: open, want: levelsAll},
		{name: "property added to a closed model", typ: TypeJSON, old: []string{closed},
			next: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"additionalProperties":false}`,
			want: levelsBackward},
		{name: "property added to an open model", typ: TypeJSON, old: []string{open},
			next: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}}`,
			want: levelsForward},
		{name: "property removed from a closed model", typ: TypeJSON,
			old:  []string{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"additionalProperties":false}`},
			next: closed, want: levelsForward},
		{name: "required property added to a closed model", typ: TypeJSON, old: []string{closed},
			next: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"additionalProperties":false}`,
			want: levelsNone},
		{name: "integer widened to number", typ: TypeJSON, old: []string{`{"type":"integer"}`},
			next: `{"type":"number"}`, want: levelsBackward},
		{name: "type changed", typ: TypeJSON, old: []string{`{"type":"integer"}`},
			next: `{"type":"string"}`, want: levelsNone},
		{name: "type extended to a list", typ: TypeJSON, old: []string{`{"type":"string"}`},
			next: `{"type":["string","null"]}`, want: levelsBackward},
		{name: "enum extended", typ: TypeJSON, old: []string{`{"enum":["a","b"]}`},
			next: `{"enum":["a","b","c"]}`, want: levelsBackward},
		{name: "maxLength decreased", typ: TypeJSON, old: []string{`{"type":"string","maxLength":10}`},
			next: `{"type":"string","maxLength":5}`, want: levelsForward},
		{name: "content model closed", typ: TypeJSON, old: []string{open}, next: closed, want: levelsForward},
		{name: "nested property type changed", typ: TypeJSON,
			old:  []string{`{"type":"object","properties":{"in":{"type":"object","properties":{"x":{"type":"integer"}}}}}`},
			next: `{"type":"object","properties":{"in":{"type":"object","properties":{"x":{"type":"string"}}}}}`,
			want: levelsNone},
		{name: "array items widened", typ: TypeJSON, old: []string{`{"type":"array","items":{"type":"integer"}}`},
			next: `{"type":"array","items":{"type":"number"}}`, want: levelsBackward},
	})
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ typ, text string }{
		{TypeAvro, `{"type":"record","name":"R"}`},
		{TypeAvro, `{"type":"nope"}`},
		{TypeAvro, `not json`},
		{TypeProtobuf, `syntax = "proto3"; message M { int32 a = 1`},
		{TypeProtobuf, `syntax = "proto3"; import "missing.proto"; message M {}`},
		{TypeJSON, `{"type":12}`},
		{TypeJSON, `{"$ref":"file:///etc/passwd"}`},
		{TypeJSON, `{"$ref":"http://example.com/s.json"}`},
		{"XML", `<a/>`},
	} {
		if _, err := parseSchema(tc.typ, tc.text, nil); err == nil {
			t.Errorf("%s %q parsed", tc.typ, tc.text)
		} else {
			t.Logf("%s: %v", tc.typ, err)
		}
	}
}

func TestJSONSchemaCompatibilityRefsAndUnions(t *testing.T) {
	// As generators write them (invopop/jsonschema, used by
	// confluent-kafka-go's JSON serde): the type under $defs, a $ref at
	// the top.
	defs := func(props string) string {
		return `{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/Order","$defs":{"Order":{"type":"object","properties":{` + props + `},"additionalProperties":false}}}`
	}
	runCompat(t, []compatCase{
		{name: "$defs: same", typ: TypeJSON, old: []string{defs(`"id":{"type":"string"}`)}, next: defs(`"id":{"type":"string"}`), want: levelsAll},
		{name: "$defs: property type changed", typ: TypeJSON, old: []string{defs(`"id":{"type":"string"}`)},
			next: defs(`"id":{"type":"integer"}`), want: levelsNone},
		{name: "$defs: property added to the closed model", typ: TypeJSON, old: []string{defs(`"id":{"type":"string"}`)},
			next: defs(`"id":{"type":"string"},"note":{"type":"string"}`), want: levelsBackward},
		{name: "recursive $ref", typ: TypeJSON,
			old:  []string{`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/N"}}}}}`},
			next: `{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"v":{"type":"number"},"next":{"$ref":"#/$defs/N"}}}}}`,
			want: levelsBackward},
		{name: "oneOf widened", typ: TypeJSON, old: []string{`{"oneOf":[{"type":"string"},{"type":"integer"}]}`},
			next: `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`, want: levelsBackward},
		{name: "oneOf narrowed", typ: TypeJSON, old: []string{`{"oneOf":[{"type":"string"},{"type":"integer"}]}`},
			next: `{"oneOf":[{"type":"string"}]}`, want: levelsForward},
		{name: "type widened into anyOf", typ: TypeJSON, old: []string{`{"type":"string"}`},
			next: `{"anyOf":[{"type":"string"},{"type":"null"}]}`, want: levelsBackward},
		{name: "allOf in the reader narrows", typ: TypeJSON, old: []string{`{"type":"string"}`},
			next: `{"allOf":[{"type":"string"},{"maxLength":3}]}`, want: levelsForward},
	})
}
