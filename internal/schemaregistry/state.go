package schemaregistry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// The records of the _schemas topic, in Confluent's JSON: a key names
// what a record is about (its keytype and subject, a version for a
// schema) and compaction keeps the newest value per key; a null value
// (tombstone) deletes. Keys are written with a fixed field order so that
// the same key is always the same bytes, which compaction relies on.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyNoop          = "NOOP"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
)

// recordKey is every key type's fields; Subject is nil for the global
// config and mode ("subject":null in Confluent's keys).
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject"`
	Version int     `json:"version"`
	Magic   int     `json:"magic"`
}

// schemaValue is a SCHEMA record's value.
type schemaValue struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"deleted"`
}

type configValue struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

type modeValue struct {
	Mode string `json:"mode"`
}

// deleteSubjectValue is a DELETE_SUBJECT (every version up to Version
// soft-deleted) or CLEAR_SUBJECT (the soft-deleted versions removed)
// value, which Confluent writes; this registry reads them.
type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// noopValue is our use of the NOOP key: the highest ID ever given, written
// with every permanent delete so that compaction removing the schema's
// last record cannot let a later start give its ID again.
type noopValue struct {
	MaxID int `json:"maxId"`
}

// record is one record to write; a nil value is a tombstone.
type record struct {
	key, value []byte
}

func schemaKey(subject string, version int) []byte {
	b, _ := json.Marshal(struct {
		KeyType string `json:"keytype"`
		Subject string `json:"subject"`
		Version int    `json:"version"`
		Magic   int    `json:"magic"`
	}{keySchema, subject, version, 1})
	return b
}

// subjectKey is a CONFIG or MODE key; "" is the global one.
func subjectKey(keyType, subject string) []byte {
	var s *string
	if subject != "" {
		s = &subject
	}
	b, _ := json.Marshal(struct {
		KeyType string  `json:"keytype"`
		Subject *string `json:"subject"`
		Magic   int     `json:"magic"`
	}{keyType, s, 0})
	return b
}

func noopKey() []byte { return []byte(`{"keytype":"NOOP","magic":0}`) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain structs are marshalled
	}
	return b
}

// stored is a schema under its ID, shared by every subject version that
// registered the same schema.
type stored struct {
	id    int
	typ   string
	text  string // canonical text
	refs  []Reference
	ident string // identity(typ, text, refs), computed once

	parseOnce sync.Once
	parsed    parsedSchema
	parseErr  error
}

// identity is what makes two registrations the same schema: the type,
// the references and the text, for Avro with its object keys sorted and
// whitespace dropped (key order means nothing in an Avro schema, and
// Confluent compares Avro schemas re-serialized from their parsed form).
func identity(typ, text string, refs []Reference) string {
	if typ == TypeAvro {
		text = canonicalJSON(text, true)
	}
	r := ""
	if len(refs) > 0 { // no references, null or [] alike
		r = string(mustJSON(refs))
	}
	return typ + "\x00" + r + "\x00" + text
}

// version is one version of a subject.
type version struct {
	n       int
	id      int
	deleted bool // soft-deleted
}

// state is what the topic's records add up to.
type state struct {
	subjects map[string][]*version // ascending by version
	ids      map[int]*stored
	byIdent  map[string]int // identity → the first ID registered for it
	users    map[int]int    // subject versions (soft-deleted too) per ID
	maxID    int

	compat        string // global; "" is the default, BACKWARD
	mode          string // global; "" is READWRITE
	subjectCompat map[string]string
	subjectMode   map[string]string
}

func newState() *state {
	return &state{
		subjects:      map[string][]*version{},
		ids:           map[int]*stored{},
		byIdent:       map[string]int{},
		users:         map[int]int{},
		subjectCompat: map[string]string{},
		subjectMode:   map[string]string{},
	}
}

var errSkip = errors.New("not a record this registry keeps")

// apply changes the state by one record of the topic. A record that does
// not decode is returned as an error for the caller to report; the state
// is then unchanged.
func (st *state) apply(key, value []byte) error {
	var k recordKey
	if err := json.Unmarshal(key, &k); err != nil {
		return fmt.Errorf("key %q: %w", truncate(key), err)
	}
	subject := ""
	if k.Subject != nil {
		subject = *k.Subject
	}
	switch k.KeyType {
	case keySchema:
		if k.Subject == nil || k.Version < 1 {
			return fmt.Errorf("key %q: a SCHEMA key needs a subject and a version", truncate(key))
		}
		if value == nil {
			st.removeVersion(subject, k.Version)
			return nil
		}
		var v schemaValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("value of %s: %w", key, err)
		}
		if v.ID < 1 || v.Schema == "" {
			return fmt.Errorf("value of %s: no id or no schema", key)
		}
		st.putVersion(subject, k.Version, v)
	case keyConfig:
		if value == nil {
			st.setCompat(subject, "")
			return nil
		}
		var v configValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("value of %s: %w", key, err)
		}
		if !validCompat(v.CompatibilityLevel) {
			return fmt.Errorf("value of %s: unknown compatibility level %q", key, v.CompatibilityLevel)
		}
		st.setCompat(subject, v.CompatibilityLevel)
	case keyMode:
		if value == nil {
			st.setMode(subject, "")
			return nil
		}
		var v modeValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("value of %s: %w", key, err)
		}
		if !validMode(v.Mode) {
			// READONLY_OVERRIDE and the like: not ours to enforce.
			return fmt.Errorf("value of %s: mode %q: %w", key, v.Mode, errSkip)
		}
		st.setMode(subject, v.Mode)
	case keyNoop:
		if value != nil {
			var v noopValue
			if json.Unmarshal(value, &v) == nil {
				st.maxID = max(st.maxID, v.MaxID)
			}
		}
	case keyDeleteSubject:
		if value == nil {
			return nil
		}
		var v deleteSubjectValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("value of %s: %w", key, err)
		}
		for _, ver := range st.subjects[subject] {
			if ver.n <= v.Version {
				ver.deleted = true
			}
		}
	case keyClearSubject:
		if value == nil {
			return nil
		}
		for _, ver := range slices.Clone(st.subjects[subject]) {
			if ver.deleted {
				st.removeVersion(subject, ver.n)
			}
		}
	default:
		return fmt.Errorf("key %q: keytype %q: %w", truncate(key), k.KeyType, errSkip)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func (st *state) putVersion(subject string, n int, v schemaValue) {
	typ := normalizeType(v.SchemaType)
	if _, ok := st.ids[v.ID]; !ok {
		ident := identity(typ, v.Schema, v.References)
		st.ids[v.ID] = &stored{id: v.ID, typ: typ, text: v.Schema, refs: v.References, ident: ident}
		if _, ok := st.byIdent[ident]; !ok {
			st.byIdent[ident] = v.ID
		}
	}
	st.maxID = max(st.maxID, v.ID)
	vers := st.subjects[subject]
	i := sort.Search(len(vers), func(i int) bool { return vers[i].n >= n })
	if i < len(vers) && vers[i].n == n {
		old := vers[i]
		if old.id != v.ID {
			st.release(old.id)
			st.users[v.ID]++
		}
		vers[i] = &version{n: n, id: v.ID, deleted: v.Deleted}
		return
	}
	st.users[v.ID]++
	st.subjects[subject] = slices.Insert(vers, i, &version{n: n, id: v.ID, deleted: v.Deleted})
}

func (st *state) removeVersion(subject string, n int) {
	vers := st.subjects[subject]
	i := slices.IndexFunc(vers, func(v *version) bool { return v.n == n })
	if i < 0 {
		return
	}
	st.release(vers[i].id)
	vers = slices.Delete(vers, i, i+1)
	if len(vers) == 0 {
		delete(st.subjects, subject)
		return
	}
	st.subjects[subject] = vers
}

// release drops one use of id; the schema goes when nothing uses it (its
// ID is not given again: maxID stays).
func (st *state) release(id int) {
	st.users[id]--
	if st.users[id] > 0 {
		return
	}
	delete(st.users, id)
	if s := st.ids[id]; s != nil {
		if st.byIdent[s.ident] == id {
			delete(st.byIdent, s.ident)
		}
		delete(st.ids, id)
	}
}

func (st *state) setCompat(subject, level string) {
	switch {
	case subject == "":
		st.compat = level
	case level == "":
		delete(st.subjectCompat, subject)
	default:
		st.subjectCompat[subject] = level
	}
}

func (st *state) setMode(subject, mode string) {
	switch {
	case subject == "":
		st.mode = mode
	case mode == "":
		delete(st.subjectMode, subject)
	default:
		st.subjectMode[subject] = mode
	}
}

// live is subject's versions, without the soft-deleted ones unless
// deleted.
func (st *state) live(subject string, deleted bool) []*version {
	var out []*version
	for _, v := range st.subjects[subject] {
		if deleted || !v.deleted {
			out = append(out, v)
		}
	}
	return out
}

func (st *state) effectiveCompat(subject string) string {
	if l := st.subjectCompat[subject]; l != "" {
		return l
	}
	if st.compat != "" {
		return st.compat
	}
	return CompatBackward
}

func (st *state) effectiveMode(subject string) string {
	if m := st.subjectMode[subject]; m != "" {
		return m
	}
	if st.mode != "" {
		return st.mode
	}
	return ModeReadWrite
}
