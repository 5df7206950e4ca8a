package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Media types: Confluent's own, and plain JSON (which it accepts too).
const (
	mediaV1      = "application/vnd.schemaregistry.v1+json"
	mediaGeneric = "application/vnd.schemaregistry+json"
	mediaJSON    = "application/json"
)

// MaxRequestBytes bounds a request body (the schema and its envelope).
const MaxRequestBytes = 2 * DefaultMaxSchemaBytes

// handler is an endpoint: it answers a value to encode as JSON, or an
// error (an *Error for Confluent's codes, anything else a 500).
type handler func(r *http.Request) (any, error)

// rawSchema is an answer sent as the schema's own text.
type rawSchema string

// ServeHTTP serves Confluent's REST API.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.cfg.Authenticate != nil && !r.auth.allowed(req, r.cfg.Authenticate) {
		w.Header().Set("WWW-Authenticate", `Basic realm="schema registry", charset="UTF-8"`)
		writeError(w, req, errorf(http.StatusUnauthorized, "Unauthorized"))
		return
	}
	r.mux().ServeHTTP(w, req)
}

func (r *Registry) mux() *http.ServeMux {
	r.muxOnce.Do(r.routes)
	return r.httpMux
}

func (r *Registry) routes() {
	m := http.NewServeMux()
	// h serves pattern with fn after checking op (with ACLs on) on the
	// path's subject, or on the cluster for a path without one (the
	// global /config and /mode). Where op is none (Unknown), there is
	// nothing to check or fn filters what it shows itself.
	const none = kmsg.ACLOperationUnknown
	h := func(pattern string, op kmsg.ACLOperation, fn handler) { m.Handle(pattern, r.serve(op, fn)) }
	h("GET /{$}", none, func(*http.Request) (any, error) { return struct{}{}, nil })
	h("GET /schemas/types", none, func(*http.Request) (any, error) { return supportedTypes, nil })
	// One context, the default one: schema contexts are not supported.
	h("GET /contexts", none, func(*http.Request) (any, error) { return []string{"."}, nil })
	h("GET /schemas", none, r.getSchemas)
	h("GET /schemas/ids/{id}", none, r.getSchemaByID)
	h("GET /schemas/ids/{id}/schema", none, r.getSchemaByID)
	h("GET /schemas/ids/{id}/subjects", none, r.getSubjectsByID)
	h("GET /schemas/ids/{id}/versions", none, r.getVersionsByID)
	h("GET /subjects", none, r.getSubjects)
	h("POST /subjects/{subject}", kmsg.ACLOperationRead, r.postLookup)
	h("DELETE /subjects/{subject}", kmsg.ACLOperationDelete, r.deleteSubjectHTTP)
	h("GET /subjects/{subject}/versions", kmsg.ACLOperationDescribe, r.getVersions)
	h("POST /subjects/{subject}/versions", kmsg.ACLOperationWrite, r.postRegister)
	h("GET /subjects/{subject}/versions/{version}", kmsg.ACLOperationRead, r.getVersion)
	h("GET /subjects/{subject}/versions/{version}/schema", kmsg.ACLOperationRead, r.getVersion)
	h("GET /subjects/{subject}/versions/{version}/referencedby", kmsg.ACLOperationRead, r.getReferencedBy)
	h("DELETE /subjects/{subject}/versions/{version}", kmsg.ACLOperationDelete, r.deleteVersionHTTP)
	h("POST /compatibility/subjects/{subject}/versions", kmsg.ACLOperationRead, r.postCompatibility)
	h("POST /compatibility/subjects/{subject}/versions/{version}", kmsg.ACLOperationRead, r.postCompatibility)
	for _, p := range []string{"/config", "/config/{subject}"} {
		h("GET "+p, kmsg.ACLOperationDescribeConfigs, r.getConfig)
		h("PUT "+p, kmsg.ACLOperationAlterConfigs, r.putConfig)
		h("DELETE "+p, kmsg.ACLOperationAlterConfigs, r.deleteConfig)
	}
	for _, p := range []string{"/mode", "/mode/{subject}"} {
		h("GET "+p, kmsg.ACLOperationDescribeConfigs, r.getMode)
		h("PUT "+p, kmsg.ACLOperationAlterConfigs, r.putMode)
		h("DELETE "+p, kmsg.ACLOperationAlterConfigs, r.deleteMode)
	}
	// Confluent's answers for paths and methods it does not serve.
	m.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			probe := req.Clone(req.Context())
			probe.Method = method
			if _, pattern := m.Handler(probe); pattern != "/" && pattern != "" {
				writeError(w, req, errorf(405, "HTTP 405 Method Not Allowed"))
				return
			}
		}
		writeError(w, req, errorf(codeNotFound, "HTTP 404 Not Found"))
	}))
	r.httpMux = m
}

// serve wraps an endpoint: checks the media type, bounds the body, loads
// the state if needed, checks op, and writes the answer or the error.
func (r *Registry) serve(op kmsg.ACLOperation, fn handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Body != nil && req.Method != http.MethodGet && req.Method != http.MethodDelete {
			if ct := req.Header.Get("Content-Type"); ct != "" {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || !slices.Contains([]string{mediaV1, mediaGeneric, mediaJSON, "application/octet-stream"}, mt) {
					writeError(w, req, errorf(codeUnsupportedMediaType, "HTTP 415 Unsupported Media Type: use %s or %s", mediaV1, mediaJSON))
					return
				}
			}
			req.Body = http.MaxBytesReader(w, req.Body, MaxRequestBytes)
		}
		ctx, cancel := context.WithTimeout(req.Context(), opTimeout)
		defer cancel()
		req = req.WithContext(ctx)
		if err := r.Load(ctx); err != nil {
			writeError(w, req, errorf(codeStoreError, "%v", err))
			return
		}
		areq, err := r.withRequester(req)
		if err != nil {
			r.log.Error("schema registry: reading the ACLs", "err", err)
			writeError(w, req, errorf(codeStoreError, "Error while reading the ACLs: %v", err))
			return
		}
		req = areq
		var out any
		if err = r.checkRoute(req, op); err == nil {
			out, err = fn(req)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				r.log.Error("schema registry: request failed", "method", req.Method, "path", req.URL.Path, "err", err)
				e = errorf(codeStoreError, "%v", err)
			}
			writeError(w, req, e)
			return
		}
		if raw, ok := out.(rawSchema); ok {
			w.Header().Set("Content-Type", responseType(req))
			io.WriteString(w, string(raw))
			return
		}
		writeJSON(w, req, http.StatusOK, out)
	})
}

// checkRoute checks op on the path's subject (the cluster without one).
func (r *Registry) checkRoute(req *http.Request, op kmsg.ACLOperation) error {
	if op == kmsg.ACLOperationUnknown {
		return nil
	}
	return r.check(req, op, req.PathValue("subject"))
}

// responseType is Confluent's media type, or plain JSON for a client
// that asks for only that.
func responseType(req *http.Request) string {
	accept := req.Header.Get("Accept")
	if strings.Contains(accept, mediaJSON) && !strings.Contains(accept, "schemaregistry") {
		return mediaJSON
	}
	return mediaV1
}

func writeJSON(w http.ResponseWriter, req *http.Request, status int, v any) {
	w.Header().Set("Content-Type", responseType(req))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, req *http.Request, e *Error) {
	writeJSON(w, req, e.Status, e)
}

// decode reads a JSON body into v.
func decode(req *http.Request, v any) error {
	if err := json.NewDecoder(req.Body).Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return errorf(codeSchemaTooLarge, "Schema is too large: the request body is larger than this registry's limit of %d bytes", tooBig.Limit)
		case errors.Is(err, io.EOF):
			return errorf(codeBadRequest, "The request body is empty: a JSON object is expected")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errorf(codeUnprocessableEntity, "Unrecognized value for field %s: %v", te.Field, err)
		}
		return errorf(codeBadRequest, "Invalid JSON in the request body: %v", err)
	}
	return nil
}

func flag(req *http.Request, name string) bool {
	v, _ := strconv.ParseBool(req.URL.Query().Get(name))
	return v
}

func pathID(req *http.Request) (int, error) {
	id, err := strconv.ParseInt(req.PathValue("id"), 10, 32)
	if err != nil || id < 1 {
		return 0, errorf(codeSchemaNotFound, "Schema %s not found", req.PathValue("id"))
	}
	return int(id), nil
}

type schemaByIDResponse struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
}

func (r *Registry) getSchemaByID(req *http.Request) (any, error) {
	id, err := pathID(req)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	s := r.s.ids[id]
	var uses []subjectVersionRef
	var text string
	if s != nil {
		text = r.formatted(req, s)
		if requesterOf(req) != nil {
			uses = r.s.usesOf(id, true)
		}
	}
	r.mu.RUnlock()
	if s == nil {
		return nil, errorf(codeSchemaNotFound, "Schema %d not found", id)
	}
	if err := r.checkSchemaRead(req, uses); err != nil {
		return nil, err
	}
	if strings.HasSuffix(req.URL.Path, "/schema") {
		return rawSchema(text), nil
	}
	out := schemaByIDResponse{Schema: text, References: s.refs}
	if s.typ != TypeAvro {
		out.SchemaType = s.typ
	}
	return out, nil
}

// formatted is s's text in the format req asks for: ?format=serialized
// is a Protobuf schema as a base64 FileDescriptorProto (what the
// JavaScript and Python deserializers ask for); anything else the text as
// registered. Hold mu's read lock.
func (r *Registry) formatted(req *http.Request, s *stored) string {
	if s.typ != TypeProtobuf || req.URL.Query().Get("format") != "serialized" {
		return s.text
	}
	p, err := r.s.parsedOf(s)
	if err != nil {
		return s.text
	}
	return p.(*protoSchema).serialized()
}

type subjectVersionRef struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// usesOf is every subject version that has id.
func (st *state) usesOf(id int, deleted bool) []subjectVersionRef {
	var out []subjectVersionRef
	for s := range st.subjects {
		for _, v := range st.live(s, deleted) {
			if v.id == id {
				out = append(out, subjectVersionRef{s, v.n})
			}
		}
	}
	slices.SortFunc(out, func(a, b subjectVersionRef) int {
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out
}

// checkSchemaRead checks that req may read a schema that the subject
// versions uses have: READ on one of the subjects (Confluent's rule for
// SCHEMA_READ), or DESCRIBE on the cluster for a schema no subject has
// any more.
func (r *Registry) checkSchemaRead(req *http.Request, uses []subjectVersionRef) error {
	if requesterOf(req) == nil {
		return nil
	}
	for _, u := range uses {
		if may(req, kmsg.ACLOperationRead, u.Subject) {
			return nil
		}
	}
	if len(uses) == 0 {
		return r.check(req, kmsg.ACLOperationDescribe, "")
	}
	return r.check(req, kmsg.ACLOperationRead, uses[0].Subject)
}

func (r *Registry) getSubjectsByID(req *http.Request) (any, error) {
	uses, err := r.uses(req)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, u := range uses {
		if !slices.Contains(out, u.Subject) {
			out = append(out, u.Subject)
		}
	}
	return out, nil
}

func (r *Registry) getVersionsByID(req *http.Request) (any, error) { return r.uses(req) }

func (r *Registry) uses(req *http.Request) ([]subjectVersionRef, error) {
	id, err := pathID(req)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.s.ids[id] == nil {
		return nil, errorf(codeSchemaNotFound, "Schema %d not found", id)
	}
	out := []subjectVersionRef{}
	for _, u := range r.s.usesOf(id, flag(req, "deleted")) {
		if may(req, kmsg.ACLOperationDescribe, u.Subject) {
			out = append(out, u)
		}
	}
	return out, nil
}

func (r *Registry) getSubjects(req *http.Request) (any, error) {
	deleted, prefix := flag(req, "deleted"), req.URL.Query().Get("subjectPrefix")
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []string{}
	for s := range r.s.subjects {
		if strings.HasPrefix(s, prefix) && len(r.s.live(s, deleted)) > 0 && may(req, kmsg.ACLOperationDescribe, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

// getSchemas is GET /schemas: every live version (the latest of each
// subject with latestOnly=true).
func (r *Registry) getSchemas(req *http.Request) (any, error) {
	deleted, latest, prefix := flag(req, "deleted"), flag(req, "latestOnly"), req.URL.Query().Get("subjectPrefix")
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []subjectVersion{}
	for s := range r.s.subjects {
		if !strings.HasPrefix(s, prefix) || !may(req, kmsg.ACLOperationRead, s) {
			continue
		}
		vers := r.s.live(s, deleted)
		if latest && len(vers) > 0 {
			vers = vers[len(vers)-1:]
		}
		for _, v := range vers {
			out = append(out, r.s.view(s, v))
		}
	}
	slices.SortFunc(out, func(a, b subjectVersion) int {
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out, nil
}

func (r *Registry) getVersions(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	r.mu.RLock()
	defer r.mu.RUnlock()
	vers := r.s.live(subject, flag(req, "deleted"))
	if len(vers) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	out := make([]int, len(vers))
	for i, v := range vers {
		out[i] = v.n
	}
	return out, nil
}

func (r *Registry) getVersion(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	n, perr := parseVersion(req.PathValue("version"))
	if perr != nil {
		return nil, perr
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, err := r.s.findVersion(subject, n, flag(req, "deleted"))
	if err != nil {
		return nil, err
	}
	view := r.s.view(subject, v)
	if s := r.s.ids[v.id]; s != nil {
		view.Schema = r.formatted(req, s)
	}
	if strings.HasSuffix(req.URL.Path, "/schema") {
		return rawSchema(view.Schema), nil
	}
	return view, nil
}

func (r *Registry) getReferencedBy(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	n, perr := parseVersion(req.PathValue("version"))
	if perr != nil {
		return nil, perr
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, err := r.s.findVersion(subject, n, true)
	if err != nil {
		return nil, err
	}
	out := r.s.referencedBy(subject, v.n)
	if out == nil {
		out = []int{}
	}
	return out, nil
}

func (r *Registry) postRegister(req *http.Request) (any, error) {
	var body schemaRequest
	if err := decode(req, &body); err != nil {
		return nil, err
	}
	id, err := r.register(req.Context(), req.PathValue("subject"), &body, flag(req, "normalize"))
	if err != nil {
		return nil, err
	}
	return struct {
		ID int `json:"id"`
	}{id}, nil
}

func (r *Registry) postLookup(req *http.Request) (any, error) {
	var body schemaRequest
	if err := decode(req, &body); err != nil {
		return nil, err
	}
	v, err := r.lookup(req.PathValue("subject"), &body, flag(req, "normalize"), flag(req, "deleted"))
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (r *Registry) deleteSubjectHTTP(req *http.Request) (any, error) {
	out, err := r.deleteSubject(req.Context(), req.PathValue("subject"), flag(req, "permanent"))
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Registry) deleteVersionHTTP(req *http.Request) (any, error) {
	n, err := r.deleteVersion(req.Context(), req.PathValue("subject"), req.PathValue("version"), flag(req, "permanent"))
	if err != nil {
		return nil, err
	}
	return n, nil
}

type compatibilityResponse struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

func (r *Registry) postCompatibility(req *http.Request) (any, error) {
	var body schemaRequest
	if err := decode(req, &body); err != nil {
		return nil, err
	}
	msgs, err := r.compatibility(req.PathValue("subject"), req.PathValue("version"), &body, flag(req, "normalize"))
	if err != nil {
		return nil, err
	}
	out := compatibilityResponse{IsCompatible: len(msgs) == 0}
	if flag(req, "verbose") {
		out.Messages = append([]string{}, msgs...)
		if out.Messages == nil {
			out.Messages = []string{}
		}
	}
	return out, nil
}

func (r *Registry) getConfig(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	r.mu.RLock()
	defer r.mu.RUnlock()
	level := r.s.effectiveCompat("")
	if subject != "" {
		l, ok := r.s.subjectCompat[subject]
		switch {
		case ok:
			level = l
		case !flag(req, "defaultToGlobal"):
			return nil, errorf(codeSubjectCompatNotSet, "Subject '%s' does not have subject-level compatibility configured", subject)
		}
	}
	return configValue{CompatibilityLevel: level}, nil
}

func (r *Registry) putConfig(req *http.Request) (any, error) {
	var body struct {
		Compatibility string `json:"compatibility"`
	}
	if err := decode(req, &body); err != nil {
		return nil, err
	}
	level := strings.ToUpper(body.Compatibility)
	if !validCompat(level) {
		return nil, errorf(codeInvalidCompatLevel, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
	}
	if err := r.setConfig(req.Context(), req.PathValue("subject"), level); err != nil {
		return nil, err
	}
	return struct {
		Compatibility string `json:"compatibility"`
	}{level}, nil
}

func (r *Registry) deleteConfig(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	r.mu.RLock()
	prev, ok := r.s.subjectCompat[subject]
	if subject == "" {
		prev, ok = r.s.effectiveCompat(""), true
	}
	known := len(r.s.subjects[subject]) > 0
	r.mu.RUnlock()
	if !ok {
		if !known {
			return nil, errSubjectNotFound(subject)
		}
		return nil, errorf(codeSubjectCompatNotSet, "Subject '%s' does not have subject-level compatibility configured", subject)
	}
	if err := r.setConfig(req.Context(), subject, ""); err != nil {
		return nil, err
	}
	return configValue{CompatibilityLevel: prev}, nil
}

func (r *Registry) getMode(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	r.mu.RLock()
	defer r.mu.RUnlock()
	mode := r.s.effectiveMode("")
	if subject != "" {
		m, ok := r.s.subjectMode[subject]
		switch {
		case ok:
			mode = m
		case !flag(req, "defaultToGlobal"):
			return nil, errorf(codeSubjectModeNotSet, "Subject '%s' does not have subject-level mode configured", subject)
		}
	}
	return modeValue{Mode: mode}, nil
}

func (r *Registry) putMode(req *http.Request) (any, error) {
	var body modeValue
	if err := decode(req, &body); err != nil {
		return nil, err
	}
	mode := strings.ToUpper(body.Mode)
	if !validMode(mode) {
		return nil, errorf(codeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY and IMPORT.")
	}
	if err := r.setMode(req.Context(), req.PathValue("subject"), mode, flag(req, "force")); err != nil {
		return nil, err
	}
	return modeValue{Mode: mode}, nil
}

func (r *Registry) deleteMode(req *http.Request) (any, error) {
	subject := req.PathValue("subject")
	r.mu.RLock()
	prev, ok := r.s.subjectMode[subject]
	if subject == "" {
		prev, ok = r.s.effectiveMode(""), true
	}
	r.mu.RUnlock()
	if !ok {
		return nil, errorf(codeSubjectModeNotSet, "Subject '%s' does not have subject-level mode configured", subject)
	}
	if err := r.setMode(req.Context(), subject, "", true); err != nil {
		return nil, err
	}
	return modeValue{Mode: prev}, nil
}
