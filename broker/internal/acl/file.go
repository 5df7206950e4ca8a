package acl

import (
	"encoding/json"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/sealed"
)

const (
	fileMagic   = "MKACLS\n\x00"
	fileVersion = 1
	// maxPayload bounds what Decode accepts before looking at the bytes.
	maxPayload = 64 << 20
)

type fileBinding struct {
	ResourceType string `json:"resource_type"`
	Name         string `json:"name"`
	Pattern      string `json:"pattern"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// Encode returns s's bindings in the file format (package doc).
func Encode(s *Set) []byte {
	fb := make([]fileBinding, 0, s.Len())
	for _, b := range s.bindings {
		fb = append(fb, fileBinding{b.ResourceType.String(), b.Name, b.Pattern.String(), b.Principal, b.Host, b.Operation.String(), b.Permission.String()})
	}
	payload, _ := json.Marshal(fb) // strings always encode
	return sealed.Seal(fileMagic, fileVersion, payload)
}

// Decode parses a file written by Encode into its bindings.
func Decode(data []byte) ([]Binding, error) {
	payload, err := sealed.Open(fileMagic, fileVersion, maxPayload, data)
	if err != nil {
		return nil, fmt.Errorf("ACL file: %w", err)
	}
	var fb []fileBinding
	if err := json.Unmarshal(payload, &fb); err != nil {
		return nil, fmt.Errorf("ACL file: %w: %v", sealed.ErrContent, err)
	}
	out := make([]Binding, 0, len(fb))
	for i, f := range fb {
		b, err := f.binding()
		if err == nil {
			err = b.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("ACL file: %w: entry %d: %v", sealed.ErrContent, i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func (f fileBinding) binding() (Binding, error) {
	rt, err1 := kmsg.ParseACLResourceType(f.ResourceType)
	pt, err2 := kmsg.ParseACLResourcePatternType(f.Pattern)
	op, err3 := kmsg.ParseACLOperation(f.Operation)
	perm, err4 := kmsg.ParseACLPermissionType(f.Permission)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return Binding{}, err
		}
	}
	return Binding{rt, f.Name, pt, f.Principal, f.Host, op, perm}, nil
}
