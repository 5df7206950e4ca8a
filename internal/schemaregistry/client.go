package schemaregistry

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Decoder decodes keys and values in Confluent's wire format with the
// schemas of a registry it reaches over HTTP (this one or any
// Confluent-compatible one), each schema fetched once: what a consumer's
// deserializer does, for tools (minikafka consume -registry).
type Decoder struct {
	base string
	hc   *http.Client

	mu     sync.Mutex
	parsed map[int]parsedSchema
}

// NewDecoder makes a decoder for the registry at base (http://host:port).
func NewDecoder(base string, hc *http.Client) *Decoder {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Decoder{base: strings.TrimRight(base, "/"), hc: hc, parsed: map[int]parsedSchema{}}
}

// ErrNotFramed is returned for a payload not in Confluent's wire format.
var ErrNotFramed = errors.New("not in Confluent's wire format")

// Decode returns the payload's schema ID and its data as JSON.
func (d *Decoder) Decode(ctx context.Context, payload []byte) (int, []byte, error) {
	if len(payload) < 5 || payload[0] != 0 {
		return 0, nil, ErrNotFramed
	}
	id := int(binary.BigEndian.Uint32(payload[1:5]))
	d.mu.Lock()
	p := d.parsed[id]
	d.mu.Unlock()
	if p == nil {
		var err error
		if p, err = d.fetch(ctx, id); err != nil {
			return id, nil, err
		}
		d.mu.Lock()
		d.parsed[id] = p
		d.mu.Unlock()
	}
	js, err := decodeData(p, payload[5:])
	return id, js, err
}

// remoteSchema is the part of the registry's answers the decoder reads.
type remoteSchema struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []Reference `json:"references"`
}

func (d *Decoder) get(ctx context.Context, path string) (remoteSchema, error) {
	var out remoteSchema
	req, err := http.NewRequestWithContext(ctx, "GET", d.base+path, nil)
	if err != nil {
		return out, err
	}
	req.Header.Set("Accept", mediaV1)
	resp, err := d.hc.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxRequestBytes*4))
	if err != nil {
		return out, err
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(body, &e) == nil && e.Code == codeSchemaNotFound {
			return out, fmt.Errorf("%w: GET %s: %s", ErrUnknownSchema, path, e.Message)
		}
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return out, fmt.Errorf("schema registry: GET %s: %s (error %d)", path, e.Message, e.Code)
		}
		return out, fmt.Errorf("schema registry: GET %s: %s", path, resp.Status)
	}
	return out, json.Unmarshal(body, &out)
}

// fetch gets schema id and what it references, and parses it.
func (d *Decoder) fetch(ctx context.Context, id int) (parsedSchema, error) {
	top, err := d.get(ctx, "/schemas/ids/"+strconv.Itoa(id))
	if err != nil {
		return nil, err
	}
	var refs []resolved
	seen := map[string]bool{}
	var walk func(rs []Reference, depth int) error
	walk = func(rs []Reference, depth int) error {
		if depth > maxReferenceDepth {
			return fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
		}
		for _, r := range rs {
			key := r.Subject + "\x00" + strconv.Itoa(r.Version)
			if seen[key] {
				continue
			}
			seen[key] = true
			s, err := d.get(ctx, "/subjects/"+url.PathEscape(r.Subject)+"/versions/"+strconv.Itoa(r.Version))
			if err != nil {
				return err
			}
			if err := walk(s.References, depth+1); err != nil {
				return err
			}
			refs = append(refs, resolved{name: r.Name, typ: normalizeType(s.SchemaType), text: s.Schema})
		}
		return nil
	}
	if err := walk(top.References, 0); err != nil {
		return nil, err
	}
	p, err := parseSchema(normalizeType(top.SchemaType), top.Schema, refs)
	if err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	return p, nil
}
