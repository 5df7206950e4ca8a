package quota

import (
	"encoding/json"
	"fmt"

	"github.com/minikafka/minikafka/internal/sealed"
)

const (
	fileMagic   = "MKQUOTA\n"
	fileVersion = 1
	// maxPayload bounds what Decode accepts before looking at the bytes.
	maxPayload = 64 << 20
)

type filePart struct {
	Type string  `json:"type"`
	Name *string `json:"name"`
}

type fileEntry struct {
	Entity []filePart         `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// Encode returns s in the file format (package doc).
func Encode(s *Set) []byte {
	entries := s.Entries()
	fe := make([]fileEntry, 0, len(entries))
	for _, e := range entries {
		f := fileEntry{Values: e.Values}
		for _, p := range e.Entity {
			f.Entity = append(f.Entity, filePart(p)) // the same fields, with the file's JSON names
		}
		fe = append(fe, f)
	}
	payload, _ := json.Marshal(fe) // strings and finite floats always encode
	return sealed.Seal(fileMagic, fileVersion, payload)
}

// Errors of Decode (the frame's, from internal/sealed); each is wrapped
// with detail.
var (
	ErrBadMagic   = sealed.ErrBadMagic
	ErrBadVersion = sealed.ErrBadVersion
	ErrTruncated  = sealed.ErrTruncated
	ErrChecksum   = sealed.ErrChecksum
	ErrContent    = sealed.ErrContent
)

// Decode parses a file written by Encode.
func Decode(data []byte) (*Set, error) {
	payload, err := sealed.Open(fileMagic, fileVersion, maxPayload, data)
	if err != nil {
		return nil, fmt.Errorf("client quota file: %w", err)
	}
	var fe []fileEntry
	if err := json.Unmarshal(payload, &fe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrContent, err)
	}
	entries := make([]Entry, 0, len(fe))
	seen := map[string]bool{}
	for i, f := range fe {
		parts := make([]Part, len(f.Entity))
		for j, p := range f.Entity {
			parts[j] = Part(p)
		}
		e, err := NewEntity(parts)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrContent, i, err)
		}
		if seen[e.Key()] {
			return nil, fmt.Errorf("%w: entry %d: entity %s given twice", ErrContent, i, e)
		}
		seen[e.Key()] = true
		if len(f.Values) == 0 {
			return nil, fmt.Errorf("%w: entry %d: entity %s without values", ErrContent, i, e)
		}
		for k, v := range f.Values {
			if err := ValidateValue(e, k, v); err != nil {
				return nil, fmt.Errorf("%w: entry %d: %v", ErrContent, i, err)
			}
		}
		entries = append(entries, Entry{Entity: e, Values: f.Values})
	}
	return NewSet(entries, 1), nil
}
