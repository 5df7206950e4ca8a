package schemaregistry

import (
	"strings"
	"testing"
)

// compatCase registers old (oldest first) then asks whether next may
// follow under each level; want lists the levels under which it may.
type compatCase struct {
	name string
	typ  string
	old  []string
	next string
	want []string // levels that accept next; the others must refuse it
}

var allLevels = []string{CompatNone, CompatBackward, CompatBackwardTransitive, CompatForward,
	CompatForwardTransitive, CompatFull, CompatFullTransitive}

// Shorthands for the usual outcomes.
var (
	levelsAll      = allLevels
	levelsBackward = []string{CompatNone, CompatBackward, CompatBackwardTransitive}
	levelsForward  = []string{CompatNone, CompatForward, CompatForwardTransitive}
	levelsNone     = []string{CompatNone}
)

func runCompat(t *testing.T, cases []compatCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old []parsedSchema
			for i, text := range tc.old {
				p, err := parseSchema(tc.typ, text, nil)
				if err != nil {
					t.Fatalf("old schema %d does not parse: %v", i, err)
				}
				old = append([]parsedSchema{p}, old...) // newest first
			}
			next, err := parseSchema(tc.typ, tc.next, nil)
			if err != nil {
				t.Fatalf("next schema does not parse: %v", err)
			}
			for _, level := range allLevels {
				msgs := checkCompat(level, next, old)
				want := false
				for _, l := range tc.want {
					want = want || l == level
				}
				if got := len(msgs) == 0; got != want {
					t.Errorf("%s: compatible=%v, want %v (messages: %s)", level, got, want, strings.Join(msgs, "; "))
				}
			}
		})
	}
}

func avroRecord(fields string) string {
	return `{"type":"record","name":"R","namespace":"ns","fields":[` + fields + `]}`
}

func TestAvroCompatibility(t *testing.T) {
	a := `{"name":"a","type":"int"}`
	runCompat(t, []compatCase{
		{name: "same schema", typ: TypeAvro, old: []string{avroRecord(a)}, next: avroRecord(a), want: levelsAll},
		{name: "field added with default", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(a + `,{"name":"b","type":"string","default":"x"}`), want: levelsAll},
		{name: "field added without default", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(a + `,{"name":"b","type":"string"}`), want: levelsForward},
		{name: "field with default removed", typ: TypeAvro, old: []string{avroRecord(a + `,{"name":"b","type":"string","default":"x"}`)},
			next: avroRecord(a), want: levelsAll},
		{name: "field without default removed", typ: TypeAvro, old: []string{avroRecord(a + `,{"name":"b","type":"string"}`)},
			next: avroRecord(a), want: levelsBackward},
		{name: "int promoted to long", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(`{"name":"a","type":"long"}`), want: levelsBackward},
		{name: "long promoted to float", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":"long"}`)},
			next: avroRecord(`{"name":"a","type":"float"}`), want: levelsBackward},
		{name: "float promoted to double", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":"float"}`)},
			next: avroRecord(`{"name":"a","type":"double"}`), want: levelsBackward},
		{name: "int promoted to double", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(`{"name":"a","type":"double"}`), want: levelsBackward},
		{name: "long narrowed to int", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":"long"}`)},
			next: avroRecord(a), want: levelsForward},
		{name: "string to bytes", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":"string"}`)},
			next: avroRecord(`{"name":"a","type":"bytes"}`), want: levelsAll},
		{name: "int to string", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(`{"name":"a","type":"string"}`), want: levelsNone},
		{name: "enum symbol added", typ: TypeAvro,
			old:  []string{`{"type":"enum","name":"E","symbols":["A","B"]}`},
			next: `{"type":"enum","name":"E","symbols":["A","B","C"]}`, want: levelsBackward},
		{name: "enum symbol removed", typ: TypeAvro,
			old:  []string{`{"type":"enum","name":"E","symbols":["A","B"]}`},
			next: `{"type":"enum","name":"E","symbols":["A"]}`, want: levelsForward},
		{name: "enum symbol removed, reader has a default", typ: TypeAvro,
			old:  []string{`{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}`},
			next: `{"type":"enum","name":"E","symbols":["A"],"default":"A"}`, want: levelsAll},
		{name: "record renamed", typ: TypeAvro, old: []string{avroRecord(a)},
			next: `{"type":"record","name":"S","namespace":"ns","fields":[` + a + `]}`, want: levelsNone},
		{name: "record renamed with an alias", typ: TypeAvro, old: []string{avroRecord(a)},
			next: `{"type":"record","name":"S","namespace":"ns","aliases":["ns.R"],"fields":[` + a + `]}`, want: levelsBackward},
		{name: "field renamed with an alias", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(`{"name":"z","aliases":["a"],"type":"int"}`), want: levelsBackward},
		{name: "type widened to a union", typ: TypeAvro, old: []string{avroRecord(a)},
			next: avroRecord(`{"name":"a","type":["null","int"]}`), want: levelsBackward},
		{name: "union branch added", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":["null","int"]}`)},
			next: avroRecord(`{"name":"a","type":["null","int","string"]}`), want: levelsBackward},
		{name: "union narrowed to one type", typ: TypeAvro, old: []string{avroRecord(`{"name":"a","type":["null","int"]}`)},
			next: avroRecord(a), want: levelsForward},
		{name: "fixed size changed", typ: TypeAvro, old: []string{`{"type":"fixed","name":"F","size":4}`},
			next: `{"type":"fixed","name":"F","size":8}`, want: levelsNone},
		{name: "array items promoted", typ: TypeAvro, old: []string{`{"type":"array","items":"int"}`},
			next: `{"type":"array","items":"long"}`, want: levelsBackward},
		{name: "map values changed", typ: TypeAvro, old: []string{`{"type":"map","values":"int"}`},
			next: `{"type":"map","values":"boolean"}`, want: levelsNone},
		{name: "nested record field added without default", typ: TypeAvro,
			old:  []string{avroRecord(`{"name":"in","type":{"type":"record","name":"In","fields":[` + a + `]}}`)},
			next: avroRecord(`{"name":"in","type":{"type":"record","name":"In","fields":[` + a + `,{"name":"b","type":"int"}]}}`),
			want: levelsForward},
		{name: "recursive record unchanged", typ: TypeAvro,
			old:  []string{`{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`},
			next: `{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`,
			want: levelsAll},
		// Transitive levels: v1 has b as an int, v2 dropped it, v3 adds b
		// back as a string: compatible with v2 only, both ways.
		{name: "transitive: incompatible with the first version only", typ: TypeAvro,
			old: []string{
				avroRecord(a + `,{"name":"b","type":"int"}`),
				avroRecord(a),
			},
			next: avroRecord(a + `,{"name":"b","type":"string","default":"x"}`),
			want: []string{CompatNone, CompatBackward, CompatForward, CompatFull}},
		{name: "transitive: a required field added across three versions", typ: TypeAvro,
			old: []string{
				avroRecord(a),
				avroRecord(a + `,{"name":"b","type":"int","default":0}`),
			},
			next: avroRecord(a + `,{"name":"b","type":"int"}`),
			want: []string{CompatNone, CompatBackward, CompatForward, CompatForwardTransitive, CompatFull}},
	})
}
