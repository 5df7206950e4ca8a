package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults and bounds.
const (
	DefaultTopic = "_schemas"
	// DefaultMaxSchemaBytes bounds one schema's text: it is stored as one
	// Kafka record, which must stay under the broker's message size
	// limit once escaped into the record's JSON.
	DefaultMaxSchemaBytes = 256 << 10
	maxReferenceDepth     = 32 // nesting of references
	opTimeout             = 15 * time.Second
)

// Config is what New needs.
type Config struct {
	// Kafka is how to reach the broker (seed brokers, a dialer, TLS or
	// SASL when needed). Required.
	Kafka []kgo.Opt
	// Topic holds the registry's records; DefaultTopic when empty.
	Topic string
	// MaxSchemaBytes bounds a schema's text; DefaultMaxSchemaBytes when 0.
	MaxSchemaBytes int
	// Authenticate, when set, makes every request authenticate with HTTP
	// basic credentials that it accepts (minikafka checks them against
	// the broker's SCRAM users).
	Authenticate func(user, pass string) bool
	// ACLs, when set, turns authorization on: each request reads the
	// broker's ACLs with it and is decided by them (the package doc's
	// "Authorization"). The principal is User:<the basic auth user> with
	// Authenticate, User:ANONYMOUS without.
	ACLs   func(ctx context.Context) (*ACLSet, error)
	Logger *slog.Logger
}

// store is the log the state is kept in: kafkaStore, or a test's.
type store interface {
	load(ctx context.Context, fn func(key, value []byte)) error
	append(ctx context.Context, recs []record) error
	close()
}

// Registry is the schema registry: its state, the topic it is kept in,
// and the HTTP API (ServeHTTP).
type Registry struct {
	cfg Config
	log *slog.Logger
	st  store

	// loadMu serializes loads: the topic is read once, on the first request
	// (a broker that never serves the registry never reads or creates
	// the topic).
	loadMu sync.Mutex
	loaded atomic.Bool
	// stale is set when a write failed: the record may be in the topic
	// all the same (a timeout after the broker took it), so the next
	// request reads the topic again rather than trust the state.
	stale atomic.Bool

	// wmu serializes writers: a writer reads the state, decides, writes
	// to the topic and applies what it wrote, so two registrations of the
	// same schema cannot both find it new. Only writers (holding wmu)
	// change the state, under mu; readers hold mu's read lock.
	wmu sync.Mutex
	mu  sync.RWMutex
	s   *state

	muxOnce sync.Once
	httpMux *http.ServeMux
	auth    *authCache
	denials denialLog

	damagedMu sync.Mutex
	damaged   []string // records of the topic that did not decode
}

// New makes a registry; it reads its topic on the first request (or Load).
func New(cfg Config) (*Registry, error) {
	if len(cfg.Kafka) == 0 {
		return nil, errors.New("schema registry: Config.Kafka is required")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.MaxSchemaBytes <= 0 {
		cfg.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := newKafkaStore(cfg.Topic, cfg.Kafka)
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	return &Registry{cfg: cfg, log: log, st: st, s: newState(), auth: newAuthCache()}, nil
}

// Close releases the registry's Kafka clients.
func (r *Registry) Close() { r.st.close() }

// Load reads the topic and rebuilds the state from it, unless done
// already. Requests call it first; a failed load is tried again by the
// next request.
func (r *Registry) Load(ctx context.Context) error {
	if r.loaded.Load() && !r.stale.Load() {
		return nil // the common case, without the locks
	}
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	if r.loaded.Load() && !r.stale.Load() {
		return nil
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.stale.Store(false)
	s := newState()
	n := 0
	err := r.st.load(ctx, func(key, value []byte) {
		n++
		if err := s.apply(key, value); err != nil {
			r.report(err)
		}
	})
	if err != nil {
		return fmt.Errorf("schema registry: reading %s: %w", r.cfg.Topic, err)
	}
	r.mu.Lock()
	r.s = s
	r.mu.Unlock()
	r.loaded.Store(true)
	r.log.Info("schema registry loaded", "topic", r.cfg.Topic, "records", n, "subjects", len(s.subjects), "schemas", len(s.ids))
	return nil
}

// report records a record of the topic that was skipped.
func (r *Registry) report(err error) {
	if errors.Is(err, errSkip) {
		r.log.Debug("schema registry: skipping a record", "err", err)
		return
	}
	r.log.Warn("schema registry: a record of the topic does not decode; skipped", "topic", r.cfg.Topic, "err", err)
	r.damagedMu.Lock()
	if len(r.damaged) < 100 {
		r.damaged = append(r.damaged, err.Error())
	}
	r.damagedMu.Unlock()
}

// Damaged lists the records of the topic that did not decode when it was
// read (at most 100), for tests and diagnostics.
func (r *Registry) Damaged() []string {
	r.damagedMu.Lock()
	defer r.damagedMu.Unlock()
	return slices.Clone(r.damaged)
}

// write appends recs to the topic and applies them. Hold wmu.
func (r *Registry) write(ctx context.Context, recs ...record) *Error {
	if err := r.st.append(ctx, recs); err != nil {
		r.stale.Store(true)
		return errorf(codeStoreError, "Error while storing in %s: %v", r.cfg.Topic, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		if err := r.s.apply(rec.key, rec.value); err != nil {
			// Our own records always decode; if not, say so loudly.
			r.log.Error("schema registry: applying its own record", "err", err)
		}
	}
	return nil
}

// subjectVersion is a version with its schema, as the API shows it.
type subjectVersion struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"-"`
}

func (st *state) view(subject string, v *version) subjectVersion {
	s := st.ids[v.id]
	out := subjectVersion{Subject: subject, Version: v.n, ID: v.id, Deleted: v.deleted}
	if s != nil {
		out.Schema, out.References = s.text, s.refs
		if s.typ != TypeAvro {
			out.SchemaType = s.typ
		}
	}
	return out
}

// parseVersion reads a version in a path: a positive number, "latest" or
// -1 (latest). latest is returned as -1.
func parseVersion(v string) (int, *Error) {
	if v == "latest" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n == 0 || n < -1 {
		return 0, errInvalidVersion(v)
	}
	return int(n), nil
}

// findVersion is subject's version n (-1: the latest), counting the
// soft-deleted ones only if deleted.
func (st *state) findVersion(subject string, n int, deleted bool) (*version, *Error) {
	if len(st.subjects[subject]) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	vers := st.live(subject, deleted)
	if n == -1 {
		if len(vers) == 0 {
			return nil, errSubjectNotFound(subject)
		}
		return vers[len(vers)-1], nil
	}
	for _, v := range vers {
		if v.n == n {
			return v, nil
		}
	}
	return nil, errVersionNotFound(n)
}

// resolve returns the schemas refs lead to, each after the ones it
// references, without repeats; a cycle or too deep a nesting is an error.
func (st *state) resolve(refs []Reference) ([]resolved, *Error) {
	var out []resolved
	done := map[string]bool{}
	onPath := map[string]bool{}
	var walk func(refs []Reference, depth int) *Error
	walk = func(refs []Reference, depth int) *Error {
		if depth > maxReferenceDepth {
			return errInvalidSchema("references nest deeper than %d", maxReferenceDepth)
		}
		for _, ref := range refs {
			if ref.Name == "" || ref.Subject == "" {
				return errInvalidSchema("a reference needs a name and a subject")
			}
			v, err := st.findVersion(ref.Subject, ref.Version, true)
			if err != nil || ref.Version == 0 {
				return errInvalidSchema("reference %q: subject %q version %d not found", ref.Name, ref.Subject, ref.Version)
			}
			key := ref.Subject + "\x00" + strconv.Itoa(v.n)
			if onPath[key] {
				return errInvalidSchema("reference %q: a cycle through subject %q version %d", ref.Name, ref.Subject, v.n)
			}
			if done[key] {
				continue
			}
			s := st.ids[v.id]
			if s == nil {
				return errInvalidSchema("reference %q: schema %d not found", ref.Name, v.id)
			}
			onPath[key] = true
			if err := walk(s.refs, depth+1); err != nil {
				return err
			}
			delete(onPath, key)
			done[key] = true
			out = append(out, resolved{name: ref.Name, typ: s.typ, text: s.text})
		}
		return nil
	}
	if err := walk(refs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// parsedOf parses a stored schema once.
func (st *state) parsedOf(s *stored) (parsedSchema, error) {
	s.parseOnce.Do(func() {
		refs, rerr := st.resolve(s.refs)
		if rerr != nil {
			s.parseErr = rerr
			return
		}
		s.parsed, s.parseErr = parseSchema(s.typ, s.text, refs)
	})
	return s.parsed, s.parseErr
}

// schemaRequest is the body of register, lookup and compatibility calls.
type schemaRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []Reference `json:"references"`
	ID         int         `json:"id"`
	Version    int         `json:"version"`
}

// candidate is a request's schema, parsed.
type candidate struct {
	typ    string
	text   string // canonical
	refs   []Reference
	ident  string // identity(typ, text, refs)
	parsed parsedSchema
}

// prepare checks and parses a request's schema.
func (r *Registry) prepare(st *state, req *schemaRequest, normalize bool) (*candidate, *Error) {
	if req.Schema == "" {
		return nil, errorf(codeInvalidSchema, "Empty schema")
	}
	if len(req.Schema) > r.cfg.MaxSchemaBytes {
		return nil, errorf(codeSchemaTooLarge, "Schema is too large: %d bytes, more than this registry's limit of %d", len(req.Schema), r.cfg.MaxSchemaBytes)
	}
	typ := normalizeType(req.SchemaType)
	if !slices.Contains(supportedTypes, typ) {
		return nil, errorf(codeInvalidSchema, "Invalid schema type %s: supported types are AVRO, PROTOBUF and JSON", req.SchemaType)
	}
	refs, rerr := st.resolve(req.References)
	if rerr != nil {
		return nil, rerr
	}
	p, err := parseSchema(typ, req.Schema, refs)
	if err != nil {
		return nil, errorf(codeInvalidSchema, "Invalid schema of type %s: %v", typ, err)
	}
	refsOut := req.References
	if len(refsOut) == 0 {
		refsOut = nil
	}
	text := p.canonical(normalize)
	return &candidate{typ: typ, text: text, refs: refsOut, ident: identity(typ, text, refsOut), parsed: p}, nil
}

// existing is subject's live schemas, newest first, parsed, for
// compatibility checks.
func (st *state) existing(subject string, only *version) ([]parsedSchema, *Error) {
	vers := st.live(subject, false)
	if only != nil {
		vers = []*version{only}
	}
	var out []parsedSchema
	for i := len(vers) - 1; i >= 0; i-- {
		s := st.ids[vers[i].id]
		if s == nil {
			continue
		}
		p, err := st.parsedOf(s)
		if err != nil {
			return nil, errorf(codeInvalidSchema, "Invalid schema: the registered version %d of %s does not parse: %v", vers[i].n, subject, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// register registers req under subject and returns its ID.
func (r *Registry) register(ctx context.Context, subject string, req *schemaRequest, normalize bool) (int, *Error) {
	if !validSubject(subject) {
		return 0, errorf(codeInvalidSubject, "Subject name is invalid: %q", subject)
	}
	// Parse before taking the write lock, so that concurrent writers
	// parse in parallel; the references are checked again under it.
	r.mu.RLock()
	c, err := r.prepare(r.s, req, normalize)
	r.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	st := r.s // only writers change it, and we are the writer
	mode := st.effectiveMode(subject)
	if mode == ModeReadOnly {
		return 0, errorf(codeOperationNotPermitted, "Subject %s is in read-only mode", subject)
	}
	if len(c.refs) > 0 {
		if _, err := st.resolve(c.refs); err != nil {
			return 0, err
		}
	}
	// Registered already (and not deleted): the same ID, nothing written.
	vers := st.live(subject, false)
	for _, v := range vers {
		if s := st.ids[v.id]; s != nil && s.ident == c.ident {
			if req.ID > 0 && req.ID != v.id {
				return 0, errorf(codeOperationNotPermitted, "Overwrite new schema with id %d is not permitted.", req.ID)
			}
			return v.id, nil
		}
	}
	next := 1
	if all := st.subjects[subject]; len(all) > 0 {
		next = all[len(all)-1].n + 1
	}
	n, id := next, 0
	if known, ok := st.byIdent[c.ident]; ok {
		id = known
	}
	if mode == ModeImport {
		// Caller-chosen IDs and versions, no compatibility check: a copy
		// of another registry's contents.
		if req.ID > 0 {
			if s := st.ids[req.ID]; s != nil && s.ident != c.ident {
				return 0, errorf(codeOperationNotPermitted, "Overwrite new schema with id %d is not permitted.", req.ID)
			}
			id = req.ID
		}
		if req.Version > 0 {
			if v, _ := st.findVersion(subject, req.Version, true); v != nil {
				return 0, errorf(codeOperationNotPermitted, "Version %d of subject %s exists already", req.Version, subject)
			}
			n = req.Version
		}
	} else {
		if req.ID > 0 && req.ID != id {
			return 0, errorf(codeOperationNotPermitted, "Overwrite new schema with id %d is not permitted.", req.ID)
		}
		if req.Version > 0 && req.Version != next {
			return 0, errorf(codeOperationNotPermitted, "Version %d is not the next version (%d) of subject %s", req.Version, next, subject)
		}
		old, err := st.existing(subject, nil)
		if err != nil {
			return 0, err
		}
		if msgs := checkCompat(st.effectiveCompat(subject), c.parsed, old); len(msgs) > 0 {
			return 0, incompatible(msgs)
		}
	}
	if id == 0 {
		id = st.maxID + 1
	}
	v := schemaValue{Subject: subject, Version: n, ID: id, References: c.refs, Schema: c.text}
	if c.typ != TypeAvro {
		v.SchemaType = c.typ
	}
	if err := r.write(ctx, record{schemaKey(subject, n), mustJSON(v)}); err != nil {
		return 0, err
	}
	return id, nil
}

// validSubject refuses empty names, control characters and names too long
// to be a Kafka record key worth keeping.
func validSubject(s string) bool {
	if s == "" || len(s) > 4096 || !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func incompatible(msgs []string) *Error {
	return errorf(codeIncompatible, "Schema being registered is incompatible with an earlier schema for subject: %s", msgs)
}

// lookup finds req's schema among subject's versions.
func (r *Registry) lookup(subject string, req *schemaRequest, normalize, deleted bool) (subjectVersion, *Error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := r.s
	if len(st.subjects[subject]) == 0 {
		return subjectVersion{}, errSubjectNotFound(subject)
	}
	c, err := r.prepare(st, req, normalize)
	if err != nil {
		return subjectVersion{}, err
	}
	vers := st.live(subject, deleted)
	for i := len(vers) - 1; i >= 0; i-- {
		if s := st.ids[vers[i].id]; s != nil && s.ident == c.ident {
			return st.view(subject, vers[i]), nil
		}
	}
	return subjectVersion{}, errSchemaNotFound()
}

// compatibility checks req against subject's version v ("" for what the
// subject's level asks).
func (r *Registry) compatibility(subject, vs string, req *schemaRequest, normalize bool) ([]string, *Error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := r.s
	c, err := r.prepare(st, req, normalize)
	if err != nil {
		return nil, err
	}
	level := st.effectiveCompat(subject)
	var only *version
	if vs != "" {
		n, err := parseVersion(vs)
		if err != nil {
			return nil, err
		}
		if n == -1 && len(st.live(subject, false)) == 0 {
			return nil, nil // nothing to be incompatible with
		}
		if only, err = st.findVersion(subject, n, false); err != nil {
			return nil, err
		}
		level = trimTransitive(level) // against one version
	}
	old, err := st.existing(subject, only)
	if err != nil {
		return nil, err
	}
	return checkCompat(level, c.parsed, old), nil
}

func trimTransitive(level string) string {
	if n := len(level) - len("_TRANSITIVE"); n > 0 && level[n:] == "_TRANSITIVE" {
		return level[:n]
	}
	return level
}

// deleteSubject soft-deletes subject's versions, or with permanent
// removes the soft-deleted ones, and returns the versions deleted.
func (r *Registry) deleteSubject(ctx context.Context, subject string, permanent bool) ([]int, *Error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	st := r.s
	all := st.subjects[subject]
	if len(all) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	if st.effectiveMode(subject) == ModeReadOnly {
		return nil, errorf(codeOperationNotPermitted, "Subject %s is in read-only mode", subject)
	}
	live := st.live(subject, false)
	if !permanent && len(live) == 0 {
		return nil, errorf(codeSubjectSoftDeleted, "Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
	}
	if permanent && len(live) > 0 {
		return nil, errorf(codeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
	}
	var recs []record
	var out []int
	for _, v := range all {
		if refs := st.referencedBy(subject, v.n); len(refs) > 0 {
			return nil, errorf(codeReferenceExists, "One or more references exist to the schema {subject=%s,version=%d}: %v", subject, v.n, refs)
		}
		out = append(out, v.n)
		if permanent {
			recs = append(recs, record{key: schemaKey(subject, v.n)})
		} else {
			recs = append(recs, record{schemaKey(subject, v.n), mustJSON(r.softDeleted(st, subject, v))})
		}
	}
	if permanent {
		recs = append(recs, record{noopKey(), mustJSON(noopValue{MaxID: st.maxID})})
		if _, ok := st.subjectCompat[subject]; ok {
			recs = append(recs, record{key: subjectKey(keyConfig, subject)})
		}
		if _, ok := st.subjectMode[subject]; ok {
			recs = append(recs, record{key: subjectKey(keyMode, subject)})
		}
	}
	if err := r.write(ctx, recs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Registry) softDeleted(st *state, subject string, v *version) schemaValue {
	view := st.view(subject, v)
	return schemaValue{Subject: subject, Version: v.n, ID: v.id, SchemaType: view.SchemaType,
		References: view.References, Schema: view.Schema, Deleted: true}
}

// deleteVersion soft-deletes one version, or removes a soft-deleted one.
func (r *Registry) deleteVersion(ctx context.Context, subject, vs string, permanent bool) (int, *Error) {
	n, perr := parseVersion(vs)
	if perr != nil {
		return 0, perr
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	st := r.s
	if st.effectiveMode(subject) == ModeReadOnly {
		return 0, errorf(codeOperationNotPermitted, "Subject %s is in read-only mode", subject)
	}
	// A version by number is found soft-deleted or not (to say which);
	// "latest" is the latest live one, or for permanent, the latest.
	v, err := st.findVersion(subject, n, n != -1 || permanent)
	if err != nil {
		return 0, err
	}
	if !permanent && v.deleted {
		return 0, errorf(codeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, v.n)
	}
	if permanent && !v.deleted {
		return 0, errorf(codeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, v.n)
	}
	if refs := st.referencedBy(subject, v.n); len(refs) > 0 {
		return 0, errorf(codeReferenceExists, "One or more references exist to the schema {subject=%s,version=%d}: %v", subject, v.n, refs)
	}
	rec := record{schemaKey(subject, v.n), mustJSON(r.softDeleted(st, subject, v))}
	recs := []record{rec}
	if permanent {
		recs = []record{{key: rec.key}, {noopKey(), mustJSON(noopValue{MaxID: st.maxID})}}
	}
	if err := r.write(ctx, recs...); err != nil {
		return 0, err
	}
	return v.n, nil
}

// referencedBy is the IDs of the live schemas that reference subject's
// version n.
func (st *state) referencedBy(subject string, n int) []int {
	var out []int
	for _, vers := range st.subjects {
		for _, v := range vers {
			if v.deleted {
				continue
			}
			sc := st.ids[v.id]
			if sc == nil {
				continue
			}
			for _, ref := range sc.refs {
				if ref.Subject == subject && (ref.Version == n) && !slices.Contains(out, v.id) {
					out = append(out, v.id)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// setConfig sets subject's compatibility level ("" subject: the global
// one); level "" deletes it.
func (r *Registry) setConfig(ctx context.Context, subject, level string) *Error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	rec := record{key: subjectKey(keyConfig, subject)}
	if level != "" {
		rec.value = mustJSON(configValue{CompatibilityLevel: level})
	}
	if err := r.write(ctx, rec); err != nil {
		return err
	}
	return nil
}

// setMode sets subject's mode ("" subject: the global one); mode ""
// deletes it. IMPORT needs no schemas registered (in the subject, or at
// all for the global mode) unless force.
func (r *Registry) setMode(ctx context.Context, subject, mode string, force bool) *Error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	st := r.s
	if mode == ModeImport && !force {
		busy := len(st.subjects) > 0
		if subject != "" {
			busy = len(st.subjects[subject]) > 0
		}
		if busy {
			return errorf(codeOperationNotPermitted, "Cannot import since found existing subjects")
		}
	}
	rec := record{key: subjectKey(keyMode, subject)}
	if mode != "" {
		rec.value = mustJSON(modeValue{Mode: mode})
	}
	if err := r.write(ctx, rec); err != nil {
		return err
	}
	return nil
}
