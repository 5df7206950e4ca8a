package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/hamba/avro/v2"
)

// avroSchema is a parsed Avro schema.
type avroSchema struct {
	text string // as registered
	s    avro.Schema
}

// parseAvro parses text after the schemas it references, so that the
// named types they define can be used by name. Each parse has its own name
// cache: hamba's default cache is global, and two subjects may define the
// same name differently.
func parseAvro(text string, refs []resolved) (parsedSchema, error) {
	cache := &avro.SchemaCache{}
	for _, r := range refs {
		if r.typ != TypeAvro {
			return nil, fmt.Errorf("reference %q is a %s schema, not AVRO", r.name, r.typ)
		}
		if _, err := avro.ParseWithCache(r.text, "", cache); err != nil {
			return nil, fmt.Errorf("reference %q: %w", r.name, err)
		}
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, err
	}
	return &avroSchema{text: text, s: s}, nil
}

func (a *avroSchema) canonical(normalize bool) string { return canonicalJSON(a.text, normalize) }

// canonicalJSON compacts a JSON text; with normalize it also sorts object
// keys (by decoding and encoding again).
func canonicalJSON(text string, normalize bool) string {
	if normalize {
		var v any
		d := json.NewDecoder(bytes.NewReader([]byte(text)))
		d.UseNumber()
		if d.Decode(&v) == nil {
			if b, err := json.Marshal(v); err == nil {
				return string(b)
			}
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(text)) != nil {
		return text
	}
	return buf.String()
}

func (a *avroSchema) readableFrom(writer parsedSchema) []string {
	w, ok := writer.(*avroSchema)
	if !ok {
		return []string{"the schema types differ"}
	}
	c := avroCompat{seen: map[[2]string]bool{}}
	c.check(a.s, w.s, "")
	return c.msgs
}

// avroCompat applies Avro's schema resolution rules (the reader's schema
// against the writer's), which are what Confluent's compatibility levels
// are defined by.
type avroCompat struct {
	seen map[[2]string]bool // named pairs already checked or being checked: recursion
	msgs []string
}

func (c *avroCompat) fail(path, kind, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	c.msgs = append(c.msgs, fmt.Sprintf("%s at %s: %s", kind, path, fmt.Sprintf(format, args...)))
}

func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

// promotes reports whether a reader of type r reads a writer's w (Avro's
// promotions: int to long, float and double; long to float and double;
// float to double; string and bytes both ways).
func promotes(r, w avro.Type) bool {
	if r == w {
		return true
	}
	switch w {
	case avro.Int:
		return r == avro.Long || r == avro.Float || r == avro.Double
	case avro.Long:
		return r == avro.Float || r == avro.Double
	case avro.Float:
		return r == avro.Double
	case avro.String:
		return r == avro.Bytes
	case avro.Bytes:
		return r == avro.String
	}
	return false
}

func (c *avroCompat) check(r, w avro.Schema, path string) {
	r, w = deref(r), deref(w)
	if wu, ok := w.(*avro.UnionSchema); ok {
		// Every branch the writer may have written must be readable.
		for i, b := range wu.Types() {
			c.check(r, b, path+"/"+strconv.Itoa(i))
		}
		return
	}
	if ru, ok := r.(*avro.UnionSchema); ok {
		for _, b := range ru.Types() {
			probe := avroCompat{seen: c.seen}
			if probe.check(b, w, path); len(probe.msgs) == 0 {
				return
			}
		}
		c.fail(path, "MISSING_UNION_BRANCH", "the reader's union has no branch for the writer's %s", typeName(w))
		return
	}
	if rn, ok := r.(avro.NamedSchema); ok {
		if wn, ok := w.(avro.NamedSchema); ok && r.Type() == w.Type() {
			key := [2]string{rn.FullName(), wn.FullName()}
			if c.seen[key] {
				return
			}
			c.seen[key] = true
			if rn.Name() != wn.Name() && !slices.Contains(rn.Aliases(), wn.FullName()) {
				c.fail(path+"/name", "NAME_MISMATCH", "expected %s, found %s", rn.FullName(), wn.FullName())
				return
			}
		}
	}
	if !promotes(r.Type(), w.Type()) {
		c.fail(path, "TYPE_MISMATCH", "the reader expects %s, the writer wrote %s", typeName(r), typeName(w))
		return
	}
	switch rs := r.(type) {
	case *avro.RecordSchema:
		c.record(rs, w.(*avro.RecordSchema), path)
	case *avro.EnumSchema:
		ws := w.(*avro.EnumSchema)
		if rs.HasDefault() {
			return // unknown symbols read as the default
		}
		for _, sym := range ws.Symbols() {
			if !slices.Contains(rs.Symbols(), sym) {
				c.fail(path+"/symbols", "MISSING_ENUM_SYMBOLS", "the reader's enum %s has no symbol %s and no default", rs.FullName(), sym)
			}
		}
	case *avro.FixedSchema:
		if ws := w.(*avro.FixedSchema); ws.Size() != rs.Size() {
			c.fail(path+"/size", "FIXED_SIZE_MISMATCH", "the reader's fixed %s has size %d, the writer's %d", rs.FullName(), rs.Size(), ws.Size())
		}
	case *avro.ArraySchema:
		c.check(rs.Items(), w.(*avro.ArraySchema).Items(), path+"/items")
	case *avro.MapSchema:
		c.check(rs.Values(), w.(*avro.MapSchema).Values(), path+"/values")
	}
}

func (c *avroCompat) record(r, w *avro.RecordSchema, path string) {
	for i, rf := range r.Fields() {
		fpath := path + "/fields/" + strconv.Itoa(i)
		var wf *avro.Field
		for _, f := range w.Fields() {
			if f.Name() == rf.Name() || slices.Contains(rf.Aliases(), f.Name()) {
				wf = f
				break
			}
		}
		if wf == nil {
			if !rf.HasDefault() {
				c.fail(fpath, "READER_FIELD_MISSING_DEFAULT_VALUE", "field %s has no default value and is missing from the writer's %s", rf.Name(), w.FullName())
			}
			continue
		}
		c.check(rf.Type(), wf.Type(), fpath+"/type")
	}
}

// typeName names a schema in messages: its full name when it has one.
func typeName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return string(s.Type()) + " " + n.FullName()
	}
	return string(s.Type())
}
