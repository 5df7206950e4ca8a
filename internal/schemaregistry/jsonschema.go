package schemaregistry

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchema is a JSON Schema that compiled.
type jsonSchema struct {
	text string
	doc  any // the decoded document, which the compatibility rules read
}

// noLoader refuses every URL that is not a reference: a schema must not
// make the registry read local files or the network.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s is not a registered reference (the registry loads nothing from files or the network)", u)
}

const jsonBase = "mem://registry/"

// parseJSONSchema compiles text as a JSON Schema (draft from its
// $schema, 2020-12 by default) with the references added under their
// names.
func parseJSONSchema(text string, refs []resolved) (parsedSchema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	for _, r := range refs {
		if r.typ != TypeJSON {
			return nil, fmt.Errorf("reference %q is a %s schema, not JSON", r.name, r.typ)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.text))
		if err != nil {
			return nil, fmt.Errorf("reference %q: %w", r.name, err)
		}
		if err := c.AddResource(jsonURL(r.name), doc); err != nil {
			return nil, fmt.Errorf("reference %q: %w", r.name, err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	main := jsonBase + "registered.json"
	if err := c.AddResource(main, doc); err != nil {
		return nil, err
	}
	if _, err := c.Compile(main); err != nil {
		var se *jsonschema.SchemaValidationError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("not a valid JSON Schema: %v", se.Err)
		}
		return nil, err
	}
	return &jsonSchema{text: text, doc: doc}, nil
}

// jsonURL places a reference name: an absolute URL as it is, a relative
// one beside the registered schema (where its $ref resolves).
func jsonURL(name string) string {
	if u, err := url.Parse(name); err == nil && u.IsAbs() {
		return name
	}
	return jsonBase + name
}

func (j *jsonSchema) canonical(normalize bool) string { return canonicalJSON(j.text, normalize) }

// readableFrom applies the main rules of Confluent's JSON Schema
// compatibility: every document the writer's schema accepts must be
// accepted by the reader's. Checked: types (narrowing), properties under
// open and closed content models, required properties, additional
// properties, enums, items, the numeric and length bounds, local $refs
// ($defs, definitions) followed, oneOf/anyOf as unions and allOf in the
// reader (in the writer, its branches' keywords merged). Not checked:
// the insides of references to other documents (the same $ref is the
// same schema), patterns, dependencies.
func (j *jsonSchema) readableFrom(writer parsedSchema) []string {
	w, ok := writer.(*jsonSchema)
	if !ok {
		return []string{"the schema types differ"}
	}
	c := &jsonCompat{rRoot: j.doc, wRoot: w.doc, seen: map[string]bool{}}
	c.check(j.doc, w.doc, "#")
	return c.msgs
}

// jsonCompat walks a reader's and a writer's schema side by side.
type jsonCompat struct {
	rRoot, wRoot any             // the documents, for local $refs
	seen         map[string]bool // $ref pairs checked or being checked: recursion
	msgs         []string
}

// probe is a checker for a trial (a union branch) whose messages are
// dropped unless it is the one that decides.
func (c *jsonCompat) probe() *jsonCompat {
	return &jsonCompat{rRoot: c.rRoot, wRoot: c.wRoot, seen: c.seen}
}

// jsonDeref follows a local $ref ("#", "#/$defs/x", "#/definitions/x") of m
// in root; other keywords beside a $ref are not merged in. A $ref that
// does not resolve locally (to a reference, or another document) is
// returned as it is, with its target.
func jsonDeref(root any, m map[string]any) (map[string]any, string) {
	ref, ok := m["$ref"].(string)
	if !ok {
		return m, ""
	}
	for range 16 { // a chain of $refs, bounded
		if !strings.HasPrefix(ref, "#") {
			return m, ref
		}
		cur := root
		ptr := strings.TrimPrefix(ref, "#")
		if ptr != "" {
			for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
				if t, err := url.PathUnescape(tok); err == nil {
					tok = t
				}
				tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
				obj, ok := cur.(map[string]any)
				if !ok {
					return m, ref
				}
				cur = obj[tok]
			}
		}
		target, ok := cur.(map[string]any)
		if !ok {
			return m, ref
		}
		next, chained := target["$ref"].(string)
		if !chained {
			return target, ref
		}
		m, ref = target, next
	}
	return m, ref
}

func (c *jsonCompat) fail(path, kind, format string, args ...any) {
	c.msgs = append(c.msgs, fmt.Sprintf("%s at %s: %s", kind, path, fmt.Sprintf(format, args...)))
}

// isOpen reports whether a schema accepts anything (true, {}).
func isOpen(s any) bool {
	switch v := s.(type) {
	case bool:
		return v
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func typeSet(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil // any type
}

func (c *jsonCompat) check(r, w any, path string) {
	if isOpen(r) || w == false {
		return
	}
	if r == false {
		c.fail(path, "SCHEMA_CLOSED", "the reader accepts nothing here")
		return
	}
	rm, _ := r.(map[string]any)
	wm, _ := w.(map[string]any)
	if w == true {
		wm = map[string]any{}
	}
	if rm == nil || wm == nil {
		return
	}
	var rref, wref string
	rm, rref = jsonDeref(c.rRoot, rm)
	wm, wref = jsonDeref(c.wRoot, wm)
	if rref != "" || wref != "" {
		key := rref + "\x00" + wref
		if c.seen[key] {
			return
		}
		c.seen[key] = true
		_, rOpaque := rm["$ref"]
		_, wOpaque := wm["$ref"]
		if rOpaque || wOpaque {
			// A reference to another document: the same target is the
			// same schema; different ones are not compared.
			return
		}
	}
	// A writer's allOf: what all its branches allow, their keywords
	// merged (a keyword in two branches keeps the first).
	if branches, ok := wm["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, v := range wm {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				bm, _ = jsonDeref(c.wRoot, bm)
				for k, v := range bm {
					if _, has := merged[k]; !has {
						merged[k] = v
					}
				}
			}
		}
		wm = merged
	}
	// Unions: every branch the writer may have used must be readable;
	// a reader's union needs one branch that reads the writer's schema.
	for _, k := range []string{"oneOf", "anyOf"} {
		if branches, ok := wm[k].([]any); ok {
			for i, b := range branches {
				c.check(rm, b, fmt.Sprintf("%s/%s/%d", path, k, i))
			}
			return
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if branches, ok := rm[k].([]any); ok {
			for _, b := range branches {
				p := c.probe()
				if p.check(b, wm, path); len(p.msgs) == 0 {
					return
				}
			}
			c.fail(path+"/"+k, "COMBINED_TYPE_SUBSCHEMAS_CHANGED", "no branch of the reader's %s reads the writer's schema", k)
			return
		}
	}
	if branches, ok := rm["allOf"].([]any); ok {
		for i, b := range branches {
			c.check(b, wm, fmt.Sprintf("%s/allOf/%d", path, i))
		}
	}
	if rt := typeSet(rm); rt != nil {
		wt := typeSet(wm)
		if wt == nil {
			c.fail(path, "TYPE_NARROWED", "the reader allows only %v, the writer any type", rt)
		}
		for _, t := range wt {
			if !slices.Contains(rt, t) && (t != "integer" || !slices.Contains(rt, "number")) {
				c.fail(path, "TYPE_NARROWED", "the writer allows %s, the reader only %v", t, rt)
			}
		}
	}
	if re, ok := rm["enum"].([]any); ok {
		we, wok := wm["enum"].([]any)
		if !wok {
			c.fail(path, "ENUM_ARRAY_NARROWED", "the reader restricts values to an enum, the writer did not")
		}
		for _, v := range we {
			if !slices.ContainsFunc(re, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) }) {
				c.fail(path, "ENUM_ARRAY_NARROWED", "the writer allows %v, the reader's enum does not", v)
			}
		}
	}
	c.bounds(rm, wm, path)
	c.object(rm, wm, path)
	if ri, ok := rm["items"]; ok {
		wi, wok := wm["items"]
		if !wok {
			wi = true
		}
		c.check(ri, wi, path+"/items")
	}
}

// bounds checks the keywords that narrow values: a reader's upper bound
// may not fall below the writer's, nor its lower bound rise above it.
func (c *jsonCompat) bounds(rm, wm map[string]any, path string) {
	num := func(m map[string]any, k string) (float64, bool) {
		f, ok := m[k].(float64)
		if !ok {
			if n, ok2 := m[k].(interface{ Float64() (float64, error) }); ok2 {
				v, err := n.Float64()
				return v, err == nil
			}
		}
		return f, ok
	}
	for _, k := range []string{"maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"} {
		rv, rok := num(rm, k)
		wv, wok := num(wm, k)
		if !wok {
			wv = math.Inf(1)
		}
		if rok && rv < wv {
			c.fail(path+"/"+k, strings.ToUpper(k)+"_DECREASED", "the reader's %s is %v, the writer's %v", k, rv, wv)
		}
	}
	for _, k := range []string{"minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"} {
		rv, rok := num(rm, k)
		wv, wok := num(wm, k)
		if !wok {
			wv = math.Inf(-1)
		}
		if rok && rv > wv {
			c.fail(path+"/"+k, strings.ToUpper(k)+"_INCREASED", "the reader's %s is %v, the writer's %v", k, rv, wv)
		}
	}
}

// object checks properties under Confluent's content models: a schema is
// closed when additionalProperties is false (no other properties may
// appear), open otherwise.
func (c *jsonCompat) object(rm, wm map[string]any, path string) {
	rp, _ := rm["properties"].(map[string]any)
	wp, _ := wm["properties"].(map[string]any)
	rAdd, rHas := rm["additionalProperties"]
	wAdd, wHas := wm["additionalProperties"]
	if !rHas {
		rAdd = true
	}
	if !wHas {
		wAdd = true
	}
	rClosed, wClosed := rAdd == false, wAdd == false
	required := func(m map[string]any) []string {
		var out []string
		if l, ok := m["required"].([]any); ok {
			for _, e := range l {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
	rReq, wReq := required(rm), required(wm)
	for name, ws := range wp {
		p := path + "/properties/" + name
		if rs, ok := rp[name]; ok {
			c.check(rs, ws, p)
			continue
		}
		if rClosed {
			c.fail(p, "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "the writer has property %s, the reader's closed model does not", name)
		} else {
			c.check(rAdd, ws, p)
		}
	}
	for name, rs := range rp {
		p := path + "/properties/" + name
		if _, ok := wp[name]; ok {
			if slices.Contains(rReq, name) && !slices.Contains(wReq, name) {
				c.fail(p, "REQUIRED_ATTRIBUTE_ADDED", "property %s is required by the reader, optional for the writer", name)
			}
			continue
		}
		switch {
		case slices.Contains(rReq, name):
			c.fail(p, "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", "the reader requires property %s, which the writer never wrote", name)
		case !wClosed:
			// The writer's open model may have written anything there.
			probe := c.probe()
			if probe.check(rs, wAdd, p); len(probe.msgs) > 0 {
				c.fail(p, "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "property %s is new, and the writer's open model may have written anything under that name", name)
			}
		}
	}
	if !rClosed || wClosed {
		if rHas && wHas && !wClosed {
			c.check(rAdd, wAdd, path+"/additionalProperties")
		}
		return
	}
	c.fail(path+"/additionalProperties", "ADDITIONAL_PROPERTIES_REMOVED", "the reader's content model is closed, the writer's open")
}
