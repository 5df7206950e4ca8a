package oauth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxTokenBytes bounds a token; Kafka's SASL frame cap (512 KiB) bounds
// it too, this keeps JSON decoding small.
const MaxTokenBytes = 64 << 10

// Token is a parsed compact JWS.
type Token struct {
	Header    map[string]any
	Claims    map[string]any
	Signature []byte
	Alg, Kid  string

	compact string // the token without base64 padding, for go-jose
}

// Error is a validation failure with Kafka's error status.
type Error struct {
	Status string // invalid_token, insufficient_scope
	Scope  string // the required scope, for insufficient_scope
	Reason string // for the broker's log only
}

func (e *Error) Error() string { return e.Status + ": " + e.Reason }

func invalid(format string, args ...any) *Error {
	return &Error{Status: "invalid_token", Reason: fmt.Sprintf(format, args...)}
}

// Parse decodes a compact JWS (three base64url parts).
func Parse(tok string) (*Token, error) {
	if len(tok) > MaxTokenBytes {
		return nil, invalid("token of %d bytes is over %d", len(tok), MaxTokenBytes)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, invalid("JWS compact serializations must have 3 dot-separated Base64URL-encoded values, not %d", len(parts))
	}
	hdr, err := b64(parts[0])
	if err != nil {
		return nil, invalid("header: %v", err)
	}
	payload, err := b64(parts[1])
	if err != nil {
		return nil, invalid("payload: %v", err)
	}
	sig, err := b64(parts[2])
	if err != nil {
		return nil, invalid("signature: %v", err)
	}
	for i, p := range parts {
		parts[i] = strings.TrimRight(p, "=")
	}
	t := &Token{Signature: sig, compact: strings.Join(parts, ".")}
	if t.Header, err = object(hdr); err != nil {
		return nil, invalid("header: %v", err)
	}
	if t.Claims, err = object(payload); err != nil {
		return nil, invalid("claims: %v", err)
	}
	alg, ok := t.Header["alg"].(string)
	if !ok {
		return nil, invalid("header has no alg")
	}
	t.Alg = alg
	if kid, ok := t.Header["kid"]; ok {
		if t.Kid, ok = kid.(string); !ok {
			return nil, invalid("kid is not a string")
		}
	}
	return t, nil
}

func b64(s string) ([]byte, error) {
	// Base64URL without padding (RFC 7515); tolerate padding as Java's
	// decoder does.
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func object(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if d.More() {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return m, nil
}

// NumericDate reads a claim in seconds (JSON number); ok false when absent.
func (t *Token) NumericDate(name string) (time.Time, bool, *Error) {
	v, ok := t.Claims[name]
	if !ok {
		return time.Time{}, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, false, invalid("claim %s is not a number", name)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e13 {
		return time.Time{}, false, invalid("claim %s is not a valid time", name)
	}
	return time.UnixMilli(int64(f * 1000)), true, nil
}

// String reads a string claim.
func (t *Token) String(name string) (string, bool) {
	s, ok := t.Claims[name].(string)
	return s, ok
}

// Scopes reads the scope claim: a space-separated string or a list of
// strings.
func (t *Token) Scopes(name string) ([]string, *Error) {
	switch v := t.Claims[name].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(v), nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, invalid("scope claim %s holds a non-string", name)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, invalid("scope claim %s is neither a string nor a list", name)
}

// Audiences reads "aud": a string or a list of strings.
func (t *Token) Audiences() []string {
	switch v := t.Claims["aud"].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
