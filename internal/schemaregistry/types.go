package schemaregistry

import (
	"fmt"
	"strings"
)

// The schema types, as Confluent names them in "schemaType"; Avro is the
// default and is left out of stored records and answers, as Confluent does.
const (
	TypeAvro     = "AVRO"
	TypeProtobuf = "PROTOBUF"
	TypeJSON     = "JSON"
)

// Reference is one schema's use of another: under Name (an Avro full
// name, a .proto import path, a JSON Schema $ref URL) it finds the schema
// registered as Subject's Version.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// resolved is a referenced schema with its own references resolved, in
// dependency order (a schema's references come before it).
type resolved struct {
	name string
	typ  string
	text string
}

// parsedSchema is a schema that parsed, with what the registry asks of
// it whatever its type.
type parsedSchema interface {
	// canonical is the text stored and compared to find the same schema
	// registered again. With normalize, differences that do not change
	// the schema's meaning (key order, whitespace) are ironed out too.
	canonical(normalize bool) string
	// readableFrom lists why data written with writer cannot be read
	// with this schema, empty when it can. writer has the same type.
	readableFrom(writer parsedSchema) []string
}

// parseSchema parses text of type typ, whose references are refs.
func parseSchema(typ, text string, refs []resolved) (parsedSchema, error) {
	if typ == TypeAvro || typ == TypeJSON {
		// The parsers' cost grows much faster than the depth (the JSON
		// Schema compiler's, with its metaschema check, about as the cube:
		// 2,000 levels of "items" take seconds, 20,000 hours), so the
		// size bound alone does not bound the work.
		if d := jsonDepth(text); d > MaxSchemaDepth {
			return nil, fmt.Errorf("the schema nests %d levels deep, more than this registry's limit of %d", d, MaxSchemaDepth)
		}
	}
	switch typ {
	case TypeAvro:
		return parseAvro(text, refs)
	case TypeProtobuf:
		return parseProtobuf(text, refs)
	case TypeJSON:
		return parseJSONSchema(text, refs)
	}
	return nil, fmt.Errorf("unknown schema type %q: this registry knows %s", typ, strings.Join(supportedTypes, ", "))
}

// MaxSchemaDepth bounds the nesting of an Avro or JSON Schema schema's
// JSON (objects and arrays); real schemas stay far below it. Protobuf's
// compiler has a bound of its own (32 nested messages).
const MaxSchemaDepth = 256

// jsonDepth is the deepest nesting of objects and arrays in text (which
// need not be valid JSON: the parser says what is wrong with it).
func jsonDepth(text string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// supportedTypes is GET /schemas/types, in Confluent's order.
var supportedTypes = []string{TypeJSON, TypeProtobuf, TypeAvro}

// normalizeType maps the request's schemaType to ours ("" is Avro).
func normalizeType(t string) string {
	if t == "" {
		return TypeAvro
	}
	return strings.ToUpper(t)
}

// Compatibility levels (Confluent's names).
const (
	CompatNone               = "NONE"
	CompatBackward           = "BACKWARD"
	CompatBackwardTransitive = "BACKWARD_TRANSITIVE"
	CompatForward            = "FORWARD"
	CompatForwardTransitive  = "FORWARD_TRANSITIVE"
	CompatFull               = "FULL"
	CompatFullTransitive     = "FULL_TRANSITIVE"
)

func validCompat(level string) bool {
	switch level {
	case CompatNone, CompatBackward, CompatBackwardTransitive, CompatForward,
		CompatForwardTransitive, CompatFull, CompatFullTransitive:
		return true
	}
	return false
}

// Modes (Confluent's names).
const (
	ModeReadWrite = "READWRITE"
	ModeReadOnly  = "READONLY"
	ModeImport    = "IMPORT"
)

func validMode(m string) bool { return m == ModeReadWrite || m == ModeReadOnly || m == ModeImport }

// checkCompat lists why candidate may not follow existing (newest first)
// under level: BACKWARD means the candidate reads data written with the
// existing schemas, FORWARD that they read the candidate's, FULL both;
// the transitive levels check every existing version, the others the
// newest only.
func checkCompat(level string, candidate parsedSchema, existing []parsedSchema) []string {
	if level == CompatNone || len(existing) == 0 {
		return nil
	}
	transitive := strings.HasSuffix(level, "_TRANSITIVE")
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	if !transitive {
		existing = existing[:1]
	}
	var msgs []string
	for _, old := range existing {
		if base == CompatBackward || base == CompatFull {
			for _, m := range candidate.readableFrom(old) {
				msgs = append(msgs, "BACKWARD: the new schema cannot read data written with an existing one: "+m)
			}
		}
		if base == CompatForward || base == CompatFull {
			for _, m := range old.readableFrom(candidate) {
				msgs = append(msgs, "FORWARD: an existing schema cannot read data written with the new one: "+m)
			}
		}
		if len(msgs) > 0 {
			break // one failing version is enough, as Confluent stops there
		}
	}
	return msgs
}
