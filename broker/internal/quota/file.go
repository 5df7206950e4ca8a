package quota

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	fileMagic   = "MKQUOTA\n"
	fileVersion = 1
	headerLen   = len(fileMagic) + 1 + 4 + 4
	// maxPayload bounds what Decode accepts before looking at the bytes.
	maxPayload = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
			f.Entity = append(f.Entity, filePart{p.Type, p.Name})
		}
		fe = append(fe, f)
	}
	payload, _ := json.Marshal(fe) // strings and finite floats always encode
	out := make([]byte, headerLen, headerLen+len(payload))
	copy(out, fileMagic)
	out[len(fileMagic)] = fileVersion
	binary.BigEndian.PutUint32(out[len(fileMagic)+1:], uint32(len(payload)))
	binary.BigEndian.PutUint32(out[len(fileMagic)+5:], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// Errors of Decode; each is wrapped with detail.
var (
	ErrBadMagic   = errors.New("quota: not a client quota file (bad magic)")
	ErrBadVersion = errors.New("quota: unsupported client quota file version")
	ErrTruncated  = errors.New("quota: client quota file truncated")
	ErrChecksum   = errors.New("quota: client quota file checksum mismatch")
	ErrContent    = errors.New("quota: invalid client quota file content")
)

// Decode parses a file written by Encode.
func Decode(data []byte) (*Set, error) {
	if len(data) < len(fileMagic) || string(data[:len(fileMagic)]) != fileMagic {
		return nil, ErrBadMagic
	}
	if len(data) < headerLen {
		return nil, fmt.Errorf("%w: %d header bytes of %d", ErrTruncated, len(data), headerLen)
	}
	if v := data[len(fileMagic)]; v != fileVersion {
		return nil, fmt.Errorf("%w: %d", ErrBadVersion, v)
	}
	n := binary.BigEndian.Uint32(data[len(fileMagic)+1:])
	sum := binary.BigEndian.Uint32(data[len(fileMagic)+5:])
	if n > maxPayload {
		return nil, fmt.Errorf("%w: payload length %d over %d", ErrContent, n, maxPayload)
	}
	payload := data[headerLen:]
	if uint32(len(payload)) < n {
		return nil, fmt.Errorf("%w: %d payload bytes of %d", ErrTruncated, len(payload), n)
	}
	if uint32(len(payload)) > n {
		return nil, fmt.Errorf("%w: %d bytes after the payload", ErrContent, uint32(len(payload))-n)
	}
	if crc32.Checksum(payload, castagnoli) != sum {
		return nil, ErrChecksum
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
			parts[j] = Part{p.Type, p.Name}
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
