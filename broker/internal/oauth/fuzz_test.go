package oauth

import (
	"testing"
	"time"
)

// FuzzParse: no panic; a token that parses has its parts, and validating
// it (unsecured) never panics.
func FuzzParse(f *testing.F) {
	f.Add("")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIiwiZXhwIjoxfQ.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.e30.c2ln")
	f.Add("a.b.c.d")
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := Parse(tok)
		if err != nil {
			return
		}
		if p.Header == nil || p.Claims == nil || p.Alg == "" && p.Header["alg"] != "" {
			t.Fatalf("parsed without parts: %+v", p)
		}
		_, _ = Validate(&Config{RequiredScopes: []string{"x"}}, tok, time.Unix(0, 0))
	})
}
