package oauth

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

func tok(claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"none"}`)) + "." + e([]byte(claims)) + "."
}

// The unsecured validator's rules (KIP-255), each failing on its own.
func TestValidateUnsecured(t *testing.T) {
	now := time.Unix(1000, 0)
	ok := &Config{}
	for _, c := range []struct {
		cfg    *Config
		tok    string
		status string
	}{
		{ok, tok(`{"sub":"a","exp":1001}`), ""},
		{ok, tok(`{"sub":"a","exp":1000}`), "invalid_token"},
		{&Config{ClockSkew: 2 * time.Second}, tok(`{"sub":"a","exp":999}`), ""},
		{ok, tok(`{"sub":"a"}`), "invalid_token"},
		{ok, tok(`{"sub":"","exp":1001}`), "invalid_token"},
		{ok, tok(`{"sub":"a","exp":"1001"}`), "invalid_token"},
		{ok, tok(`{"sub":"a","exp":1001,"iat":1002}`), "invalid_token"},
		{&Config{PrincipalClaim: "client_id"}, tok(`{"client_id":"a","exp":1001}`), ""},
		{&Config{RequiredScopes: []string{"k"}}, tok(`{"sub":"a","exp":1001,"scope":["k","j"]}`), ""},
		{&Config{RequiredScopes: []string{"k"}}, tok(`{"sub":"a","exp":1001,"scope":"j"}`), "insufficient_scope"},
		{ok, "x.y", "invalid_token"},
		{ok, tok(`{"sub":"a","exp":1001}`) + "c2ln", "invalid_token"},
		{ok, tok(`[1]`), "invalid_token"},
	} {
		_, err := Validate(c.cfg, c.tok, now)
		var oe *Error
		switch {
		case c.status == "" && err != nil:
			t.Errorf("%s: %v", c.tok, err)
		case c.status != "" && (!errors.As(err, &oe) || oe.Status != c.status):
			t.Errorf("%s: %v, want %s", c.tok, err, c.status)
		}
	}
}
