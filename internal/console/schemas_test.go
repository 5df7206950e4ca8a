package console_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
)

const userSchema = `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`

// seedSchemas registers an Avro schema and a JSON Schema in the
// broker's registry and produces registry-framed records to events.
func seedSchemas(t *testing.T, s *seeded) (avroID int) {
	t.Helper()
	u := s.b.SchemaRegistryURL()
	register := func(subject, body string) int {
		resp, err := http.Post(u+"/subjects/"+subject+"/versions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ ID int }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("register %s: %d %v", subject, resp.StatusCode, err)
		}
		return out.ID
	}
	raw, _ := json.Marshal(map[string]string{"schema": userSchema})
	avroID = register("users-value", string(raw))
	jsonID := register("clicks-value", `{"schemaType":"JSON","schema":"{\"type\":\"object\"}"}`)
	frame := func(id int, data []byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), data...)
	}
	av, err := avro.Marshal(avro.MustParse(userSchema), map[string]any{"name": "ada", "age": 36})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs := []*kgo.Record{
		{Topic: "empty", Value: frame(avroID, av)},
		{Topic: "empty", Value: frame(jsonID, []byte(`{"x":1}`)), Key: []byte("plain key")},
		{Topic: "empty", Value: frame(avroID, []byte{0xff})}, // framed, but not the schema's data
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return avroID
}

// TestSchemasAPI: the registry's subjects and schemas through the
// console's API, and registry-framed records decoded in the browser's
// pages.
func TestSchemasAPI(t *testing.T) {
	s := seed(t)
	avroID := seedSchemas(t, s)
	var page struct {
		Enabled  bool
		Subjects []struct {
			Subject       string
			Compatibility string
			Versions      []struct {
				Version, ID int
				Type        string
			}
		}
	}
	if st := s.call(t, "GET", "/api/schemas", nil, &page); st != 200 || !page.Enabled || len(page.Subjects) != 2 {
		t.Fatalf("schemas: %d %+v", st, page)
	}
	if got := fmt.Sprintf("%s %s %+v", page.Subjects[1].Subject, page.Subjects[1].Compatibility, page.Subjects[1].Versions); got != fmt.Sprintf("users-value BACKWARD [{Version:1 ID:%d Type:AVRO}]", avroID) {
		t.Errorf("users-value: %s", got)
	}
	var sc struct{ Schema, Type string }
	if st := s.call(t, "GET", fmt.Sprintf("/api/schemas/ids/%d", avroID), nil, &sc); st != 200 || sc.Schema != userSchema || sc.Type != "AVRO" {
		t.Errorf("schema by id: %d %+v", st, sc)
	}
	if st := s.call(t, "GET", "/api/schemas/ids/99", nil, nil); st != 404 {
		t.Errorf("unknown schema: %d", st)
	}
	var recs struct {
		Records []struct {
			KeyDecoded   *json.RawMessage `json:"key_decoded"`
			ValueDecoded struct {
				SchemaID int             `json:"schema_id"`
				JSON     json.RawMessage `json:"json"`
				Error    string          `json:"error"`
			} `json:"value_decoded"`
		}
	}
	if st := s.call(t, "GET", "/api/topics/empty/records?partition=0&from=start", nil, &recs); st != 200 || len(recs.Records) != 3 {
		t.Fatalf("records: %d %+v", st, recs)
	}
	r := recs.Records
	if r[0].ValueDecoded.SchemaID != avroID || string(r[0].ValueDecoded.JSON) != `{"age":36,"name":"ada"}` {
		t.Errorf("avro record: %+v %s", r[0].ValueDecoded, r[0].ValueDecoded.JSON)
	}
	if string(r[1].ValueDecoded.JSON) != `{"x":1}` || r[1].KeyDecoded != nil {
		t.Errorf("json record: %s, key %v", r[1].ValueDecoded.JSON, r[1].KeyDecoded)
	}
	if r[2].ValueDecoded.Error == "" {
		t.Errorf("undecodable record: %+v", r[2].ValueDecoded)
	}
}

// TestSchemasAPIOff: without the registry the page says so.
func TestSchemasAPIOff(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithHTTPAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := &seeded{b: b, base: "http://" + b.HTTPAddr().String()}
	var page struct{ Enabled bool }
	if st := s.call(t, "GET", "/api/schemas", nil, &page); st != 200 || page.Enabled {
		t.Errorf("schemas with the registry off: %d %+v", st, page)
	}
}

func TestBrowserSchemas(t *testing.T) {
	chromium(t)
	s := seed(t)
	avroID := seedSchemas(t, s)
	br := newBrowser(t, s.base)
	br.start(t, "/schemas")
	if n := br.count("#subjects tbody tr"); n != 2 {
		t.Errorf("%d subject rows, want 2", n)
	}
	br.click(`#subjects tr[data-subject="users-value"] a`)
	br.waitText("#schema-text", `"name": "User"`)
	br.start(t, "/browse/empty?partition=0")
	br.set("#format", "schema")
	br.waitText(`#record-table tbody tr:first-child td.value`, `"name": "ada"`)
	if got := br.text(`#record-table tbody tr:first-child td.value .schema-id`); got != fmt.Sprintf("schema %d", avroID) {
		t.Errorf("schema link %q", got)
	}
	if got := br.text(`#record-table tbody tr:nth-child(3) td.value`); !strings.Contains(got, "avro") {
		t.Errorf("undecodable record shows %q", got)
	}
}
