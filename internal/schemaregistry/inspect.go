package schemaregistry

// What the web console reads of the registry in process: the subjects
// and their versions, schemas by ID, and records decoded through the
// schemas their Confluent framing names.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// SubjectInfo is a subject with its versions.
type SubjectInfo struct {
	Subject       string        `json:"subject"`
	Compatibility string        `json:"compatibility"` // the level that applies to it
	Versions      []VersionInfo `json:"versions"`
}

// VersionInfo is one version of a subject.
type VersionInfo struct {
	Version int    `json:"version"`
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Deleted bool   `json:"deleted"`
}

// Subjects lists every subject (soft-deleted ones and versions included),
// sorted.
func (r *Registry) Subjects(ctx context.Context) ([]SubjectInfo, error) {
	if err := r.Load(ctx); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []SubjectInfo{}
	for s, vers := range r.s.subjects {
		si := SubjectInfo{Subject: s, Compatibility: r.s.effectiveCompat(s), Versions: []VersionInfo{}}
		for _, v := range vers {
			typ := ""
			if sc := r.s.ids[v.id]; sc != nil {
				typ = sc.typ
			}
			si.Versions = append(si.Versions, VersionInfo{Version: v.n, ID: v.id, Type: typ, Deleted: v.deleted})
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b SubjectInfo) int {
		switch {
		case a.Subject < b.Subject:
			return -1
		case a.Subject > b.Subject:
			return 1
		}
		return 0
	})
	return out, nil
}

// SchemaInfo is a schema by ID.
type SchemaInfo struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
}

// ErrUnknownSchema is returned for an ID the registry does not have.
var ErrUnknownSchema = errors.New("schema registry: unknown schema ID")

// SchemaByID returns the schema registered under id.
func (r *Registry) SchemaByID(ctx context.Context, id int) (SchemaInfo, error) {
	if err := r.Load(ctx); err != nil {
		return SchemaInfo{}, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.s.ids[id]
	if s == nil {
		return SchemaInfo{}, fmt.Errorf("%w %d", ErrUnknownSchema, id)
	}
	return SchemaInfo{ID: id, Type: s.typ, Schema: s.text, References: s.refs}, nil
}

// Decode reads a record key or value in Confluent's wire format (a zero
// byte, the schema ID in 4 bytes big-endian, for Protobuf the message
// indexes, then the data) and returns the ID and the data as JSON. A
// payload not in that format, or naming an ID the registry does not have,
// is an error.
func (r *Registry) Decode(ctx context.Context, payload []byte) (int, []byte, error) {
	if len(payload) < 5 || payload[0] != 0 {
		return 0, nil, errors.New("not in Confluent's wire format")
	}
	id := int(binary.BigEndian.Uint32(payload[1:5]))
	data := payload[5:]
	if err := r.Load(ctx); err != nil {
		return id, nil, err
	}
	r.mu.RLock()
	s := r.s.ids[id]
	var p parsedSchema
	var err error
	if s != nil {
		p, err = r.s.parsedOf(s)
	}
	r.mu.RUnlock()
	switch {
	case s == nil:
		return id, nil, fmt.Errorf("%w %d", ErrUnknownSchema, id)
	case err != nil:
		return id, nil, fmt.Errorf("schema %d does not parse: %w", id, err)
	}
	js, err := decodeData(p, data)
	return id, js, err
}

// decodeData decodes data (the payload after the ID) with p, as JSON.
func decodeData(p parsedSchema, data []byte) ([]byte, error) {
	switch ps := p.(type) {
	case *avroSchema:
		// A Reader, not avro.Unmarshal, which takes running out of data
		// for the end of it.
		var v any
		rd := avro.NewReader(nil, 0).Reset(data)
		rd.ReadVal(ps.s, &v)
		if rd.Error != nil {
			return nil, fmt.Errorf("avro: %w", rd.Error)
		}
		return json.Marshal(jsonSafe(v))
	case *jsonSchema:
		if !json.Valid(data) {
			return nil, errors.New("the data is not JSON")
		}
		return data, nil
	case *protoSchema:
		md, rest, err := protoMessage(ps.fd, data)
		if err != nil {
			return nil, err
		}
		m := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(rest, m); err != nil {
			return nil, fmt.Errorf("protobuf: %w", err)
		}
		return protojson.Marshal(m)
	}
	return nil, errors.New("unknown schema type")
}

// protoMessage reads the message indexes after the ID (a zigzag varint
// count, then that many indexes: the path to the message through nested
// types; a count of 0 means the first message) and returns the message
// they name and the data after them.
func protoMessage(fd protoreflect.FileDescriptor, b []byte) (protoreflect.MessageDescriptor, []byte, error) {
	next := func() (int, error) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, errors.New("protobuf: bad message index")
		}
		b = b[n:]
		return int(v), nil
	}
	count, err := next()
	if err != nil {
		return nil, nil, err
	}
	if count == 0 {
		if fd.Messages().Len() == 0 {
			return nil, nil, errors.New("protobuf: the schema has no message")
		}
		return fd.Messages().Get(0), b, nil
	}
	if count < 0 || count > 32 {
		return nil, nil, errors.New("protobuf: bad message index count")
	}
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for range count {
		i, err := next()
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= msgs.Len() {
			return nil, nil, fmt.Errorf("protobuf: message index %d out of range", i)
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md, b, nil
}

// jsonSafe turns what hamba decodes generically into values encoding/json
// can write (maps with non-string keys do not occur in Avro; byte slices
// and fixed arrays become strings of their bytes, as Avro's JSON encoding
// does).
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonSafe(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonSafe(e)
		}
		return x
	case []byte:
		return string(x)
	}
	return v
}
