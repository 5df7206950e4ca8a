package oauth

import (
	"testing"
	"time"
)

// FuzzParse: no panic; a token that parses has its parts, and validating
// it (unsecured, and against a JWKS through go-jose) never panics. Against
// the JWKS only the seed signed with its key can validate, and then with
// the claims that were signed: a mutation that keeps the signature valid
// (base64 that decodes to the same bytes) must keep the claims too.
func FuzzParse(f *testing.F) {
	k := newTestKeys(f)
	ks := k.keySet(f)
	f.Add("")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIiwiZXhwIjoxfQ.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.e30.c2ln")
	f.Add("a.b.c.d")
	f.Add(sign(f, "RS256", "r1", k.rsa, `{"sub":"svc","exp":2000}`))
	f.Add(sign(f, "ES256", "e1", k.ec, `{"sub":"svc","exp":2000,"scope":"x"}`))
	f.Add(sign(f, "HS256", "r1", k.rsa.N.Bytes(), `{"sub":"svc","exp":2000}`))
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := Parse(tok)
		if err != nil {
			return
		}
		if p.Header == nil || p.Claims == nil || p.Alg == "" && p.Header["alg"] != "" {
			t.Fatalf("parsed without parts: %+v", p)
		}
		_, _ = Validate(&Config{RequiredScopes: []string{"x"}}, tok, time.Unix(0, 0))
		res, err := Validate(&Config{JWKS: ks}, tok, time.Unix(1000, 0))
		if err == nil && (res.Principal != "svc" || !res.Expires.Equal(time.Unix(2000, 0))) {
			t.Fatalf("%q validated with %+v", tok, res)
		}
	})
}
