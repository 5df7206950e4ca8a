package schemaregistry_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

const recA = `{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}`

// TestErrors checks Confluent's status and error codes for bad input and
// for what is not there.
func TestErrors(t *testing.T) {
	_, u := start(t)
	if a := call(t, "POST", u+"/subjects/s/versions", schema(recA)); a.status != 200 {
		t.Fatalf("register: %d %s", a.status, a.body)
	}
	for _, tc := range []struct {
		name, method, path string
		body               any
		status, code       int
	}{
		{"unknown subject", "GET", "/subjects/nope/versions", nil, 404, 40401},
		{"unknown subject, latest", "GET", "/subjects/nope/versions/latest", nil, 404, 40401},
		{"unknown version", "GET", "/subjects/s/versions/7", nil, 404, 40402},
		{"invalid version", "GET", "/subjects/s/versions/abc", nil, 422, 42202},
		{"version zero", "GET", "/subjects/s/versions/0", nil, 422, 42202},
		{"unknown schema id", "GET", "/schemas/ids/99", nil, 404, 40403},
		{"lookup in an unknown subject", "POST", "/subjects/nope", schema(recA), 404, 40401},
		{"lookup of an unregistered schema", "POST", "/subjects/s", schema(`"string"`), 404, 40403},
		{"invalid JSON", "POST", "/subjects/s/versions", `{"schema":`, 400, 400},
		{"empty body", "POST", "/subjects/s/versions", ``, 400, 400},
		{"wrong JSON type", "POST", "/subjects/s/versions", `{"schema":12}`, 422, 422},
		{"empty schema", "POST", "/subjects/s/versions", `{}`, 422, 42201},
		{"schema that does not parse", "POST", "/subjects/s/versions", schema(`{"type":"record"}`), 422, 42201},
		{"unknown schema type", "POST", "/subjects/s/versions", schema(`x`, "XML"), 422, 42201},
		{"protobuf that does not parse", "POST", "/subjects/p/versions", schema(`message {`, "PROTOBUF"), 422, 42201},
		{"huge schema", "POST", "/subjects/s/versions", schema(`"` + strings.Repeat("x", 300<<10) + `"`), 422, 42209},
		{"huge body", "POST", "/subjects/s/versions", `{"schema":"` + strings.Repeat("x", 1<<20) + `"}`, 422, 42209},
		{"reference to nothing", "POST", "/subjects/r/versions", map[string]any{"schema": recA,
			"references": []map[string]any{{"name": "B", "subject": "nope", "version": 1}}}, 422, 42201},
		{"invalid compatibility level", "PUT", "/config", map[string]any{"compatibility": "SIDEWAYS"}, 422, 42203},
		{"invalid mode", "PUT", "/mode", map[string]any{"mode": "WRITEONLY"}, 422, 42204},
		{"no subject-level config", "GET", "/config/s", nil, 404, 40408},
		{"no subject-level mode", "GET", "/mode/s", nil, 404, 40409},
		{"unknown path", "GET", "/nothing/here", nil, 404, 404},
		{"wrong method", "PATCH", "/subjects", nil, 405, 405},
		{"hard delete before soft", "DELETE", "/subjects/s?permanent=true", nil, 404, 40405},
		{"delete an unknown subject", "DELETE", "/subjects/nope", nil, 404, 40401},
	} {
		a := call(t, tc.method, u+tc.path, tc.body)
		if a.status != tc.status || a.code() != tc.code {
			t.Errorf("%s: %d %s, want status %d code %d", tc.name, a.status, a.body, tc.status, tc.code)
		}
		if !strings.HasPrefix(a.ctype, "application/vnd.schemaregistry.v1+json") {
			t.Errorf("%s: content type %q", tc.name, a.ctype)
		}
	}

	// Plain JSON is accepted, and asked for, answered.
	req, _ := http.NewRequest("POST", u+"/subjects/j/versions", strings.NewReader(`{"schema":"\"string\""}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("plain JSON: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	req, _ = http.NewRequest("POST", u+"/subjects/j/versions", strings.NewReader(`<schema/>`))
	req.Header.Set("Content-Type", "text/xml")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Errorf("text/xml body: %d, want 415", resp.StatusCode)
	}
}

// TestEndpoints walks the read endpoints, versions by number, latest and
// -1, references, soft and hard deletes with ?deleted=true, and the
// config and mode endpoints.
func TestEndpoints(t *testing.T) {
	_, u := start(t)
	must := func(a answer) answer {
		t.Helper()
		if a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
		return a
	}
	body := func(a answer) string { return strings.TrimSpace(string(a.body)) }

	must(call(t, "POST", u+"/subjects/a/versions", schema(recA)))
	// B references A by name.
	refB := map[string]any{
		"schema":     `{"type":"record","name":"B","fields":[{"name":"a","type":"A"}]}`,
		"references": []map[string]any{{"name": "A", "subject": "a", "version": 1}},
	}
	if got := body(must(call(t, "POST", u+"/subjects/b/versions", refB))); got != `{"id":2}` {
		t.Fatalf("register with a reference: %s", got)
	}
	if got := body(must(call(t, "GET", u+"/subjects/a/versions/1/referencedby", nil))); got != `[2]` {
		t.Errorf("referencedby = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/schemas/ids/2", nil))); !strings.Contains(got, `"references":[{"name":"A","subject":"a","version":1}]`) {
		t.Errorf("schema 2 = %s", got)
	}
	if a := call(t, "DELETE", u+"/subjects/a/versions/1", nil); a.code() != 42206 {
		t.Errorf("deleting a referenced version: %d %s, want 42206", a.status, a.body)
	}
	// Protobuf and JSON Schema, with their type in answers.
	proto := "syntax = \"proto3\";\npackage p;\nmessage M { int32 a = 1; }\n"
	must(call(t, "POST", u+"/subjects/p/versions", schema(proto, "PROTOBUF")))
	must(call(t, "POST", u+"/subjects/j/versions", schema(`{"type":"object","properties":{"a":{"type":"integer"}}}`, "JSON")))
	if got := body(must(call(t, "GET", u+"/subjects/p/versions/-1", nil))); !strings.Contains(got, `"schemaType":"PROTOBUF"`) {
		t.Errorf("protobuf latest = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/subjects/j/versions/latest/schema", nil))); got != `{"type":"object","properties":{"a":{"type":"integer"}}}` {
		t.Errorf("raw JSON schema = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/schemas/ids/3/schema", nil))); got != strings.TrimSpace(proto) {
		t.Errorf("raw protobuf = %q", got)
	}
	if got := body(must(call(t, "GET", u+"/schemas/ids/1/versions", nil))); got != `[{"subject":"a","version":1}]` {
		t.Errorf("versions of id 1 = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/contexts", nil))); got != `["."]` {
		t.Errorf("contexts = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/schemas/types", nil))); got != `["JSON","PROTOBUF","AVRO"]` {
		t.Errorf("types = %s", got)
	}

	// Compatibility against one version, verbose.
	v2 := `{"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"y","type":"int"}]}`
	if got := body(must(call(t, "POST", u+"/compatibility/subjects/a/versions/latest?verbose=true", schema(v2)))); !strings.Contains(got, `"is_compatible":false`) || !strings.Contains(got, "READER_FIELD_MISSING_DEFAULT_VALUE") {
		t.Errorf("compatibility = %s", got)
	}
	if got := body(must(call(t, "POST", u+"/compatibility/subjects/a/versions/1", schema(recA)))); got != `{"is_compatible":true}` {
		t.Errorf("compatibility with itself = %s", got)
	}
	if a := call(t, "POST", u+"/compatibility/subjects/a/versions/9", schema(recA)); a.code() != 40402 {
		t.Errorf("compatibility with a missing version: %s", a.body)
	}

	// Config: global and per subject, FORWARD lets v2 in.
	if got := body(must(call(t, "GET", u+"/config", nil))); got != `{"compatibilityLevel":"BACKWARD"}` {
		t.Errorf("default config = %s", got)
	}
	if got := body(must(call(t, "PUT", u+"/config/a", map[string]any{"compatibility": "forward"}))); got != `{"compatibility":"FORWARD"}` {
		t.Errorf("put config = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/config/a", nil))); got != `{"compatibilityLevel":"FORWARD"}` {
		t.Errorf("subject config = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/config/b?defaultToGlobal=true", nil))); got != `{"compatibilityLevel":"BACKWARD"}` {
		t.Errorf("subject config defaulting to global = %s", got)
	}
	must(call(t, "POST", u+"/subjects/a/versions", schema(v2)))
	if got := body(must(call(t, "DELETE", u+"/config/a", nil))); got != `{"compatibilityLevel":"FORWARD"}` {
		t.Errorf("delete config = %s", got)
	}

	// Mode: READONLY refuses writes.
	must(call(t, "PUT", u+"/mode", map[string]any{"mode": "READONLY"}))
	if a := call(t, "POST", u+"/subjects/c/versions", schema(`"int"`)); a.code() != 42205 {
		t.Errorf("register in READONLY: %s", a.body)
	}
	must(call(t, "PUT", u+"/mode", map[string]any{"mode": "READWRITE"}))
	if a := call(t, "PUT", u+"/mode", map[string]any{"mode": "IMPORT"}); a.code() != 42205 {
		t.Errorf("IMPORT with subjects: %s", a.body)
	}

	// Soft delete hides a version unless ?deleted=true.
	if got := body(must(call(t, "DELETE", u+"/subjects/a/versions/2", nil))); got != `2` {
		t.Errorf("delete version = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/subjects/a/versions", nil))); got != `[1]` {
		t.Errorf("versions after delete = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/subjects/a/versions?deleted=true", nil))); got != `[1,2]` {
		t.Errorf("versions with deleted = %s", got)
	}
	if a := call(t, "GET", u+"/subjects/a/versions/2", nil); a.code() != 40402 {
		t.Errorf("a soft-deleted version: %s", a.body)
	}
	must(call(t, "GET", u+"/subjects/a/versions/2?deleted=true", nil))
	if a := call(t, "DELETE", u+"/subjects/a/versions/2", nil); a.code() != 40406 {
		t.Errorf("soft-deleting twice: %s", a.body)
	}
	must(call(t, "DELETE", u+"/subjects/b", nil))
	if got := body(must(call(t, "GET", u+"/subjects", nil))); got != `["a","j","p"]` {
		t.Errorf("subjects = %s", got)
	}
	if got := body(must(call(t, "GET", u+"/subjects?deleted=true", nil))); got != `["a","b","j","p"]` {
		t.Errorf("subjects with deleted = %s", got)
	}
}

// TestImportMode registers schemas with caller-chosen IDs and versions,
// as a copy from another registry does.
func TestImportMode(t *testing.T) {
	_, u := start(t)
	if a := call(t, "PUT", u+"/mode", map[string]any{"mode": "IMPORT"}); a.status != 200 {
		t.Fatalf("%s", a.body)
	}
	a := call(t, "POST", u+"/subjects/s/versions", map[string]any{"schema": recA, "id": 42, "version": 5})
	if a.status != 200 || strings.TrimSpace(string(a.body)) != `{"id":42}` {
		t.Fatalf("import: %d %s", a.status, a.body)
	}
	if a := call(t, "POST", u+"/subjects/t/versions", map[string]any{"schema": `"int"`, "id": 42}); a.code() != 42205 {
		t.Errorf("another schema under a used ID: %s", a.body)
	}
	call(t, "PUT", u+"/mode", map[string]any{"mode": "READWRITE"})
	if a := call(t, "GET", u+"/subjects/s/versions/5", nil); a.status != 200 || !strings.Contains(string(a.body), `"id":42`) {
		t.Errorf("imported version: %s", a.body)
	}
	// New IDs continue above the imported ones.
	if a := call(t, "POST", u+"/subjects/t/versions", schema(`"int"`)); strings.TrimSpace(string(a.body)) != `{"id":43}` {
		t.Errorf("next ID: %s", a.body)
	}
}

// TestConcurrentRegistration: many clients register the same schema at
// once and all get one ID and one version.
func TestConcurrentRegistration(t *testing.T) {
	_, u := start(t)
	const clients = 32
	ids := make([]string, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := call(t, "POST", u+"/subjects/same/versions", schema(recA))
			ids[i] = fmt.Sprintf("%d %s", a.status, strings.TrimSpace(string(a.body)))
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != `200 {"id":1}` {
			t.Fatalf("answers: %v", ids)
		}
	}
	if a := call(t, "GET", u+"/subjects/same/versions", nil); strings.TrimSpace(string(a.body)) != `[1]` {
		t.Errorf("versions: %s", a.body)
	}
}

// TestAvroKeyOrder: an Avro schema written with its keys in another order
// or other whitespace is the same schema, registered or looked up.
func TestAvroKeyOrder(t *testing.T) {
	_, u := start(t)
	a := call(t, "POST", u+"/subjects/s/versions", schema(`{"type":"record","name":"K","fields":[{"name":"a","type":"int"}]}`))
	b := call(t, "POST", u+"/subjects/s/versions", schema(`{ "fields": [ {"type": "int", "name": "a"} ], "name": "K", "type": "record" }`))
	if a.status != 200 || string(a.body) != string(b.body) {
		t.Errorf("the same schema reordered: %s then %s", a.body, b.body)
	}
	if l := call(t, "POST", u+"/subjects/s", schema(`{"name":"K","fields":[{"name":"a","type":"int"}],"type":"record"}`)); l.status != 200 || !strings.Contains(string(l.body), `"version":1`) {
		t.Errorf("lookup reordered: %d %s", l.status, l.body)
	}
	if v := call(t, "GET", u+"/subjects/s/versions", nil); strings.TrimSpace(string(v.body)) != `[1]` {
		t.Errorf("versions: %s", v.body)
	}
}

// TestDeepSchema: the size bound does not bound a parser's work (the JSON
// Schema compiler's grows about as the cube of the depth), so nesting is
// bounded too: a schema nested past MaxSchemaDepth is 42201 at once; one
// below it registers; braces inside strings do not count.
func TestDeepSchema(t *testing.T) {
	_, u := start(t)
	nest := func(open, leaf, closing string, depth int) string {
		return strings.Repeat(open, depth) + leaf + strings.Repeat(closing, depth)
	}
	for _, tc := range []struct {
		name, typ, text string
		status, code    int
	}{
		// 180 KB, under the size bound: hours of compiling without the depth bound.
		{"json, 20000 deep", "JSON", nest(`{"items":`, `{}`, `}`, 20000), 422, 42201},
		{"avro, 5000 deep", "AVRO", nest(`{"type":"array","items":`, `"int"`, `}`, 5000), 422, 42201},
		{"protobuf, 100 deep", "PROTOBUF", `syntax = "proto3"; ` + nest(`message M { `, ``, ` }`, 100), 422, 42201},
		{"json, 100 deep", "JSON", nest(`{"items":`, `{}`, `}`, 100), 200, 0},
		{"avro, 100 deep", "AVRO", nest(`{"type":"array","items":`, `"int"`, `}`, 100), 200, 0},
		{"avro, braces in a doc", "AVRO", `{"type":"record","name":"R","doc":"` + strings.Repeat("{[", 2000) + `","fields":[]}`, 200, 0},
	} {
		start := time.Now()
		a := call(t, "POST", u+"/subjects/deep-"+strings.ReplaceAll(tc.name, " ", "")+"/versions", schema(tc.text, tc.typ))
		took := time.Since(start)
		if a.status != tc.status || tc.code != 0 && a.code() != tc.code {
			t.Errorf("%s: %d %.200s, want %d (%d)", tc.name, a.status, a.body, tc.status, tc.code)
		}
		if took > 5*time.Second {
			t.Errorf("%s: took %v", tc.name, took)
		}
	}
}

// TestConcurrentClients: many franz-go sr clients, each with its own
// connections, register the same schema in two subjects at once, while
// others register distinct schemas: the same schema gets one ID in both
// subjects, each subject one version, and no ID is given twice.
func TestConcurrentClients(t *testing.T) {
	_, u := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const clients = 24
	var mu sync.Mutex
	ids := map[string][]int{}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := sr.NewClient(sr.URLs(u), sr.HTTPClient(&http.Client{Transport: &http.Transport{}}))
			if err != nil {
				t.Error(err)
				return
			}
			subject, text := []string{"shared-a", "shared-b"}[i%2], recA
			if i%3 == 0 {
				subject, text = fmt.Sprintf("own-%d", i), fmt.Sprintf(`{"type":"record","name":"Own%d","fields":[]}`, i)
			}
			s, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: text})
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			mu.Lock()
			ids[text] = append(ids[text], s.ID)
			mu.Unlock()
		}()
	}
	wg.Wait()
	seen := map[int]string{}
	for text, got := range ids {
		for _, id := range got {
			if id != got[0] {
				t.Errorf("one schema, several IDs: %v", got)
			}
			if other, ok := seen[id]; ok && other != text {
				t.Errorf("ID %d given to two schemas", id)
			}
			seen[id] = text
		}
	}
	for _, s := range []string{"shared-a", "shared-b"} {
		if a := call(t, "GET", u+"/subjects/"+s+"/versions", nil); strings.TrimSpace(string(a.body)) != `[1]` {
			t.Errorf("%s versions: %s", s, a.body)
		}
	}
}
