package broker

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

var b64u = base64.RawURLEncoding.EncodeToString

func unsecuredToken(claims map[string]any) string {
	c, _ := json.Marshal(claims)
	return b64u([]byte(`{"alg":"none"}`)) + "." + b64u(c) + "."
}

// oauthPing connects with token and pings; the error is the login's.
func oauthPing(t *testing.T, addr string, token func() string) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		return oauth.Auth{Token: token()}, nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

func wantRefused(t *testing.T, err error, status string) {
	t.Helper()
	if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), status) {
		t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED with %s", err, status)
	}
}

// Unsecured JWTs (KIP-255): a valid one logs in as its sub; an expired one,
// one without sub or with a signature, and one lacking a required scope
// are refused with Kafka's error JSON.
func TestOAuthUnsecured(t *testing.T) {
	_, addr, logs := secureBroker(t, &SASLConfig{Mechanisms: []string{SASLOAuthBearer},
		OAuth: &OAuthConfig{RequiredScopes: []string{"kafka"}}}, nil)
	exp := time.Now().Add(time.Hour).Unix()
	ok := func() string { return unsecuredToken(map[string]any{"sub": "svc", "exp": exp, "scope": "kafka other"}) }
	if err := oauthPing(t, addr, ok); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "user=svc") {
		t.Fatalf("login not logged as svc:\n%s", logs)
	}
	wantRefused(t, oauthPing(t, addr, func() string {
		return unsecuredToken(map[string]any{"sub": "svc", "exp": time.Now().Add(-time.Minute).Unix(), "scope": "kafka"})
	}), `{"status":"invalid_token"}`)
	wantRefused(t, oauthPing(t, addr, func() string { return unsecuredToken(map[string]any{"exp": exp, "scope": "kafka"}) }), "invalid_token")
	wantRefused(t, oauthPing(t, addr, func() string { return ok() + "c2ln" }), "invalid_token")
	wantRefused(t, oauthPing(t, addr, func() string { return unsecuredToken(map[string]any{"sub": "svc", "exp": exp, "scope": "other"}) }),
		`{"status":"insufficient_scope", "scope":"kafka"}`)
}

type jwksSigner struct {
	rsaKey *rsa.PrivateKey
	ecKey  *ecdsa.PrivateKey
}

func (s *jwksSigner) jwks(t *testing.T) string {
	pad := func(b *big.Int, n int) []byte { return b.FillBytes(make([]byte, n)) }
	set := map[string]any{"keys": []map[string]any{
		{"kty": "RSA", "kid": "r1", "alg": "RS256", "n": b64u(s.rsaKey.N.Bytes()), "e": b64u(big.NewInt(int64(s.rsaKey.E)).Bytes())},
		{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64u(pad(s.ecKey.X, 32)), "y": b64u(pad(s.ecKey.Y, 32))},
	}}
	data, _ := json.Marshal(set)
	f := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (s *jwksSigner) sign(t *testing.T, alg, kid string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	in := b64u(h) + "." + b64u(c)
	sum := sha256.Sum256([]byte(in))
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.rsaKey, crypto.SHA256, sum[:])
	case "ES256":
		var r, ss *big.Int
		r, ss, err = ecdsa.Sign(rand.Reader, s.ecKey, sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), ss.FillBytes(make([]byte, 32))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + b64u(sig)
}

// Signed JWTs against a JWKS file (KIP-768): RS256 and ES256 tokens with
// the right issuer and audience log in; a wrong audience, a wrong issuer,
// an expired token, an unsecured one, an unknown kid and a bad signature
// are refused.
func TestOAuthJWKS(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s := &jwksSigner{rsaKey: rk, ecKey: ek}
	_, addr, _ := secureBroker(t, &SASLConfig{Mechanisms: []string{SASLOAuthBearer}, OAuth: &OAuthConfig{
		JWKSFile: s.jwks(t), Issuer: "https://issuer.example", Audiences: []string{"kafka"}}}, nil)
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"sub": "svc", "iss": "https://issuer.example", "aud": []string{"kafka"},
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
		if mod != nil {
			mod(c)
		}
		return c
	}
	for _, alg := range []string{"RS256", "ES256"} {
		kid := map[string]string{"RS256": "r1", "ES256": "e1"}[alg]
		if err := oauthPing(t, addr, func() string { return s.sign(t, alg, kid, claims(nil)) }); err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		for name, mod := range map[string]func(map[string]any){
			"wrong audience": func(c map[string]any) { c["aud"] = "other" },
			"wrong issuer":   func(c map[string]any) { c["iss"] = "https://evil.example" },
			"expired":        func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() },
			"future iat":     func(c map[string]any) { c["iat"] = time.Now().Add(time.Hour).Unix() },
		} {
			t.Run(alg+" "+name, func(t *testing.T) {
				wantRefused(t, oauthPing(t, addr, func() string { return s.sign(t, alg, kid, claims(mod)) }), "invalid_token")
			})
		}
	}
	wantRefused(t, oauthPing(t, addr, func() string { return unsecuredToken(claims(nil)) }), "invalid_token")
	wantRefused(t, oauthPing(t, addr, func() string { return s.sign(t, "RS256", "nope", claims(nil)) }), "invalid_token")
	wantRefused(t, oauthPing(t, addr, func() string {
		tok := s.sign(t, "ES256", "e1", claims(nil))
		return tok[:len(tok)-4] + "AAAA"
	}), "invalid_token")
}

// The JWKS can come from a URL (sasl.oauthbearer.jwks.endpoint.url).
func TestOAuthJWKSURL(t *testing.T) {
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &jwksSigner{rsaKey: rk, ecKey: ek}
	data, err := os.ReadFile(s.jwks(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(data) }))
	defer srv.Close()
	_, addr, _ := secureBroker(t, &SASLConfig{Mechanisms: []string{SASLOAuthBearer}, OAuth: &OAuthConfig{JWKSURL: srv.URL, Audiences: []string{"kafka"}}}, nil)
	claims := map[string]any{"sub": "svc", "aud": "kafka", "exp": time.Now().Add(time.Hour).Unix()}
	if err := oauthPing(t, addr, func() string { return s.sign(t, "ES256", "e1", claims) }); err != nil {
		t.Fatal(err)
	}
	claims["aud"] = "nope"
	wantRefused(t, oauthPing(t, addr, func() string { return s.sign(t, "RS256", "r1", claims) }), "invalid_token")
}

// The session ends at the token's expiry: kgo re-authenticates with a
// fresh token on the same connection and keeps working.
func TestOAuthReauth(t *testing.T) {
	b, addr, logs := secureBroker(t, &SASLConfig{Mechanisms: []string{SASLOAuthBearer}, OAuth: &OAuthConfig{}}, nil)
	createTopic(t, b, "oauth-reauth", 1)
	var tokens atomic.Int32
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		tokens.Add(1)
		return oauth.Auth{Token: unsecuredToken(map[string]any{"sub": "svc", "exp": float64(time.Now().Add(1500*time.Millisecond).UnixMilli()) / 1000})}, nil
	})), kgo.DefaultProduceTopic("oauth-reauth"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	for i := 0; i < 8; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if n := strings.Count(logs.String(), `msg="SASL re-authenticated"`); n < 2 {
		t.Fatalf("%d re-authentications in 4 s of 1.5 s tokens (%d tokens)", n, tokens.Load())
	}
	if strings.Contains(logs.String(), "expired without re-authentication") {
		t.Fatalf("a session expired:\n%s", logs)
	}
}
