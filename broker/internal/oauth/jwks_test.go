package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

var b64u = base64.RawURLEncoding.EncodeToString

// testKeys are one RSA and one P-256 key, their JWKS, and a signer.
type testKeys struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newTestKeys(t testing.TB) *testKeys {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testKeys{rsa: rk, ec: ek}
}

func (k *testKeys) rsaJWK() map[string]any {
	return map[string]any{"kty": "RSA", "kid": "r1", "n": b64u(k.rsa.N.Bytes()), "e": b64u(big.NewInt(int64(k.rsa.E)).Bytes())}
}

func (k *testKeys) ecJWK() map[string]any {
	return map[string]any{"kty": "EC", "kid": "e1", "crv": "P-256",
		"x": b64u(k.ec.X.FillBytes(make([]byte, 32))), "y": b64u(k.ec.Y.FillBytes(make([]byte, 32)))}
}

func jwks(keys ...map[string]any) []byte {
	data, _ := json.Marshal(map[string]any{"keys": keys})
	return data
}

func (k *testKeys) keySet(t testing.TB, extra ...map[string]any) *KeySet {
	data := jwks(append([]map[string]any{k.rsaJWK(), k.ecJWK()}, extra...)...)
	ks, err := NewKeySet(func() ([]byte, error) { return data, nil })
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// sign makes a compact JWS of claims; key is the signing key for alg
// (an *rsa.PrivateKey, *ecdsa.PrivateKey, or HMAC bytes).
func sign(t testing.TB, alg, kid string, key any, claims string) string {
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid})
	in := b64u(h) + "." + b64u([]byte(claims))
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		sum := sha256.Sum256([]byte(in))
		sig, err = rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	case "ES256", "ES384":
		var d []byte
		size := 32
		if alg == "ES384" {
			s := sha512.Sum384([]byte(in))
			d, size = s[:], 48
		} else {
			s := sha256.Sum256([]byte(in))
			d = s[:]
		}
		r, s, e := ecdsa.Sign(rand.Reader, key.(*ecdsa.PrivateKey), d)
		err = e
		if e == nil {
			sig = append(r.FillBytes(make([]byte, size)), s.FillBytes(make([]byte, size))...)
		}
	case "HS256":
		m := hmac.New(sha256.New, key.([]byte))
		m.Write([]byte(in))
		sig = m.Sum(nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + b64u(sig)
}

func wantStatus(t *testing.T, name string, err error, status string) {
	t.Helper()
	var oe *Error
	switch {
	case status == "" && err != nil:
		t.Errorf("%s: %v", name, err)
	case status != "" && (!errors.As(err, &oe) || oe.Status != status):
		t.Errorf("%s: %v, want %s", name, err, status)
	}
}

// Signed tokens: the allowed algorithms verify with their key; hostile
// ones are refused as invalid_token: alg none or HMAC keyed with the
// public key (algorithm confusion), a signature by another key, an ES384
// signature for a P-256 key, an unknown kid, a truncated signature, and a
// token over MaxTokenBytes.
func TestVerifySigned(t *testing.T) {
	k := newTestKeys(t)
	other := newTestKeys(t)
	cfg := &Config{JWKS: k.keySet(t)}
	now := time.Unix(1000, 0)
	const claims = `{"sub":"svc","exp":2000}`
	pubRSA, _ := json.Marshal(k.rsaJWK())
	unsecured := b64u([]byte(`{"alg":"none"}`)) + "." + b64u([]byte(claims)) + "."
	good := sign(t, "RS256", "r1", k.rsa, claims)
	for _, c := range []struct {
		name, tok, status string
	}{
		{"RS256", good, ""},
		{"RS256 padded", strings.Replace(good, ".", "=.", 1), ""},
		{"ES256", sign(t, "ES256", "e1", k.ec, claims), ""},
		{"ES256 without kid", sign(t, "ES256", "", k.ec, claims), ""},
		{"alg none", unsecured, "invalid_token"},
		{"HS256 keyed with the RSA modulus", sign(t, "HS256", "r1", k.rsa.N.Bytes(), claims), "invalid_token"},
		{"HS256 keyed with the JWK", sign(t, "HS256", "r1", pubRSA, claims), "invalid_token"},
		{"another RSA key", sign(t, "RS256", "r1", other.rsa, claims), "invalid_token"},
		{"another EC key", sign(t, "ES256", "e1", other.ec, claims), "invalid_token"},
		{"ES384 for a P-256 kid", sign(t, "ES384", "e1", mustP384(t), claims), "invalid_token"},
		{"unknown kid", sign(t, "RS256", "r9", k.rsa, claims), "invalid_token"},
		{"truncated signature", good[:len(good)-8], "invalid_token"},
		{"too big", sign(t, "RS256", "r1", k.rsa, `{"sub":"svc","exp":2000,"x":"`+strings.Repeat("a", MaxTokenBytes)+`"}`), "invalid_token"},
		{"crit header", b64u([]byte(`{"alg":"RS256","kid":"r1","crit":["x"],"x":1}`)) + good[strings.IndexByte(good, '.'):], "invalid_token"},
	} {
		_, err := Validate(cfg, c.tok, now)
		wantStatus(t, c.name, err, c.status)
	}
}

func mustP384(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// What a JWKS may hold: symmetric (oct) keys, other key types and curves
// are dropped, a set of only those is refused; a small RSA key or a point
// off its curve fails the whole set; an unknown kid reloads the set, at
// most once a RefreshMin.
func TestJWKS(t *testing.T) {
	k := newTestKeys(t)
	oct := map[string]any{"kty": "oct", "kid": "h1", "k": b64u([]byte("0123456789abcdef0123456789abcdef"))}
	okp := map[string]any{"kty": "OKP", "crv": "X25519", "x": b64u(make([]byte, 32))}
	p521 := map[string]any{"kty": "EC", "crv": "P-521", "x": b64u(make([]byte, 66)), "y": b64u(make([]byte, 66))}
	if _, err := parseJWKS(jwks(oct, okp, map[string]any{"kty": "XYZ"})); err == nil {
		t.Error("a JWKS without RSA or EC keys was accepted")
	}
	keys, err := parseJWKS(jwks(oct, k.rsaJWK(), okp, p521, k.ecJWK()))
	if err != nil || len(keys) != 2 || keys[0].KeyID != "r1" || keys[1].KeyID != "e1" {
		t.Fatalf("kept %v, %v", keys, err)
	}
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	offCurve := k.ecJWK()
	offCurve["y"] = b64u(make([]byte, 32))
	for name, bad := range map[string]map[string]any{
		"1024-bit RSA": {"kty": "RSA", "n": b64u(small.N.Bytes()), "e": b64u(big.NewInt(int64(small.E)).Bytes())},
		"off curve":    offCurve,
		"RSA e=1":      {"kty": "RSA", "n": b64u(k.rsa.N.Bytes()), "e": b64u([]byte{1})},
	} {
		if _, err := parseJWKS(jwks(k.rsaJWK(), bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	// Rotation: the first load has r1 only; a token of kid r2 reloads.
	next := newTestKeys(t)
	r2 := next.rsaJWK()
	r2["kid"] = "r2"
	loads := 0
	ks, err := NewKeySet(func() ([]byte, error) {
		loads++
		if loads == 1 {
			return jwks(k.rsaJWK()), nil
		}
		return jwks(k.rsaJWK(), r2), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Parse(sign(t, "RS256", "r2", next.rsa, `{"sub":"a","exp":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if e := ks.Verify(tok); e == nil || loads != 1 {
		t.Fatalf("verified %v with %d loads before RefreshMin", e, loads)
	}
	ks.RefreshMin = 0
	if e := ks.Verify(tok); e != nil || loads != 2 {
		t.Fatalf("after a reload: %v, %d loads", e, loads)
	}
}
