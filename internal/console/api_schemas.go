package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/minikafka/minikafka/internal/schemaregistry"
)

// Schemas is what the console reads of the broker's schema registry: its
// subjects, schemas by ID, and records decoded through the schema their
// Confluent framing names (package schemaregistry's Registry).
type Schemas interface {
	Subjects(ctx context.Context) ([]schemaregistry.SubjectInfo, error)
	SchemaByID(ctx context.Context, id int) (schemaregistry.SchemaInfo, error)
	Decode(ctx context.Context, payload []byte) (id int, js []byte, err error)
}

type schemasPage struct {
	Enabled  bool                         `json:"enabled"`
	Subjects []schemaregistry.SubjectInfo `json:"subjects"`
}

func (c *Console) listSchemas(r *http.Request) (any, error) {
	out := schemasPage{Subjects: []schemaregistry.SubjectInfo{}}
	if c.cfg.Schemas == nil {
		return out, nil
	}
	subjects, err := c.cfg.Schemas.Subjects(r.Context())
	if err != nil {
		return nil, err
	}
	out.Enabled, out.Subjects = true, subjects
	return out, nil
}

func (c *Console) schemaByID(r *http.Request) (any, error) {
	if c.cfg.Schemas == nil {
		return nil, errorf(http.StatusNotFound, "the schema registry is off (start the broker with -schema-registry-addr)")
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 1 {
		return nil, errorf(http.StatusBadRequest, "schema ID %q: want a positive number", r.PathValue("id"))
	}
	s, err := c.cfg.Schemas.SchemaByID(r.Context(), id)
	if errors.Is(err, schemaregistry.ErrUnknownSchema) {
		return nil, errorf(http.StatusNotFound, "no schema with ID %d", id)
	}
	return s, err
}

// decoded is a key or value in Confluent's wire format, decoded.
type decoded struct {
	SchemaID int             `json:"schema_id"`
	JSON     json.RawMessage `json:"json,omitempty"`
	Error    string          `json:"error,omitempty"` // framed, but not decodable
}

// decode tries b as a registry-framed payload: nil when the registry is
// off or b is not framed (a zero byte then an ID).
func (c *Console) decode(ctx context.Context, b []byte) *decoded {
	if c.cfg.Schemas == nil || len(b) < 5 || b[0] != 0 {
		return nil
	}
	id, js, err := c.cfg.Schemas.Decode(ctx, b)
	if errors.Is(err, schemaregistry.ErrUnknownSchema) {
		return nil // a zero byte by chance, most likely
	}
	if err != nil {
		return &decoded{SchemaID: id, Error: err.Error()}
	}
	return &decoded{SchemaID: id, JSON: js}
}
