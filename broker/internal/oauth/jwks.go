package oauth

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// allowedAlgs are the signature algorithms a signed token may use: RSA
// PKCS#1 v1.5 and ECDSA on P-256/P-384, as Kafka's default validator. Never
// "none" (that is the unsecured validator's, without a JWKS) and never
// HMAC: a JWKS is public, so an HS256 token "signed" with a public key
// would prove nothing; keys that are not RSA or EC public keys are dropped
// when the JWKS loads, too.
var allowedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384}

// KeySet is a JWKS. Load fetches its bytes (a file or a URL); Verify calls
// it again, at most once a RefreshMin, when a token names an unknown kid
// (keys rotate, as Kafka's refreshing JWKS does).
type KeySet struct {
	Load       func() ([]byte, error)
	RefreshMin time.Duration

	mu     sync.Mutex
	keys   []jose.JSONWebKey // RSA (≥ 2048 bits) and EC P-256/P-384 public keys only
	loaded time.Time
}

// NewKeySet loads the keys once; an error stops the broker's start.
func NewKeySet(load func() ([]byte, error)) (*KeySet, error) {
	ks := &KeySet{Load: load, RefreshMin: 10 * time.Second}
	data, err := load()
	if err != nil {
		return nil, err
	}
	if ks.keys, err = parseJWKS(data); err != nil {
		return nil, err
	}
	ks.loaded = time.Now()
	return ks, nil
}

// parseJWKS decodes a JWK Set ({"keys":[...]}) with go-jose, keeping the
// RSA and EC (P-256, P-384) public keys; keys of other types or curves are
// skipped before go-jose decodes them, as jose4j does, and so are those
// go-jose does not support (RSA over 4096 bits). A private key's public
// half is kept. A key of a kept type that does not decode (bad n or e, a
// point not on its curve) fails the whole set.
func parseJWKS(data []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("oauth: JWKS: %w", err)
	}
	var out []jose.JSONWebKey
	for i, raw := range set.Keys {
		var kind struct{ Kty, Crv string }
		if err := json.Unmarshal(raw, &kind); err != nil {
			return nil, fmt.Errorf("oauth: JWKS key %d: %w", i, err)
		}
		switch {
		case kind.Kty == "RSA", kind.Kty == "EC" && (kind.Crv == "P-256" || kind.Crv == "P-384"):
		default:
			continue
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			if errors.Is(err, jose.ErrUnsupportedKeyType) {
				continue
			}
			return nil, fmt.Errorf("oauth: JWKS key %d: %w", i, err)
		}
		k = k.Public()
		switch pk := k.Key.(type) {
		case *rsa.PublicKey:
			if pk.N.BitLen() < 2048 || pk.E < 3 {
				return nil, fmt.Errorf("oauth: JWKS key %d: RSA key too small", i)
			}
		case *ecdsa.PublicKey:
		default:
			continue // symmetric (oct), Ed25519, ...: not a key for allowedAlgs
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("oauth: JWKS holds no usable RSA or EC key")
	}
	return out, nil
}

func (ks *KeySet) find(kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range ks.keys {
		if kid == "" || k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// Verify checks t's signature with the key its kid names (every key
// without a kid).
func (ks *KeySet) Verify(t *Token) *Error {
	if !slices.Contains(allowedAlgs, jose.SignatureAlgorithm(t.Alg)) {
		return invalid("signature algorithm %q is not allowed", t.Alg)
	}
	jws, err := jose.ParseSignedCompact(t.compact, allowedAlgs)
	if err != nil {
		return invalid("JWS: %v", err)
	}
	ks.mu.Lock()
	keys := ks.find(t.Kid)
	if len(keys) == 0 && time.Since(ks.loaded) >= ks.RefreshMin {
		if data, err := ks.Load(); err == nil {
			if nk, err := parseJWKS(data); err == nil {
				ks.keys = nk
			}
		}
		ks.loaded = time.Now()
		keys = ks.find(t.Kid)
	}
	ks.mu.Unlock()
	if len(keys) == 0 {
		return invalid("no JWKS key with kid %q", t.Kid)
	}
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != t.Alg {
			continue
		}
		// go-jose checks the key fits the algorithm (an RSA key for RS*,
		// the curve of ES256/ES384) and the signature's size.
		if _, err := jws.Verify(k.Key); err == nil {
			return nil
		}
	}
	return invalid("signature does not verify with the JWKS key %q", t.Kid)
}
