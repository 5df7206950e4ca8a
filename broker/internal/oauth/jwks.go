package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"hash"
	"math/big"
	"sync"
	"time"
)

// KeySet is a JWKS. Load fetches its bytes (a file or a URL); Verify calls
// it again, at most once a RefreshMin, when a token names an unknown kid
// (keys rotate, as Kafka's refreshing JWKS does).
type KeySet struct {
	Load       func() ([]byte, error)
	RefreshMin time.Duration

	mu     sync.Mutex
	keys   []jwk
	loaded time.Time
}

type jwk struct {
	kid, alg string
	rsa      *rsa.PublicKey
	ec       *ecdsa.PublicKey
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

// parseJWKS decodes a JWK Set ({"keys":[...]}) of RSA and EC (P-256,
// P-384) public keys; keys of other types are skipped, as jose4j does.
func parseJWKS(data []byte) ([]jwk, error) {
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("oauth: JWKS: %w", err)
	}
	var out []jwk
	for i, k := range set.Keys {
		str := func(n string) string { s, _ := k[n].(string); return s }
		key := jwk{kid: str("kid"), alg: str("alg")}
		switch str("kty") {
		case "RSA":
			n, err1 := b64(str("n"))
			e, err2 := b64(str("e"))
			if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 || len(e) > 8 {
				return nil, fmt.Errorf("oauth: JWKS key %d: bad RSA n or e", i)
			}
			ev := new(big.Int).SetBytes(e)
			key.rsa = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(ev.Int64())}
			if key.rsa.N.BitLen() < 2048 || key.rsa.E < 3 {
				return nil, fmt.Errorf("oauth: JWKS key %d: RSA key too small", i)
			}
		case "EC":
			var curve elliptic.Curve
			switch str("crv") {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			default:
				continue
			}
			x, err1 := b64(str("x"))
			y, err2 := b64(str("y"))
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("oauth: JWKS key %d: bad EC x or y", i)
			}
			pk := &ecdsa.PublicKey{Curve: curve, X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
			if !curve.IsOnCurve(pk.X, pk.Y) {
				return nil, fmt.Errorf("oauth: JWKS key %d: point not on %s", i, str("crv"))
			}
			key.ec = pk
		default:
			continue
		}
		out = append(out, key)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("oauth: JWKS holds no usable RSA or EC key")
	}
	return out, nil
}

func (ks *KeySet) find(kid string) []jwk {
	var out []jwk
	for _, k := range ks.keys {
		if kid == "" || k.kid == kid {
			out = append(out, k)
		}
	}
	return out
}

// Verify checks t's signature with the key its kid names.
func (ks *KeySet) Verify(t *Token) *Error {
	var h func() hash.Hash
	var ch crypto.Hash
	var ec bool
	size := 0
	switch t.Alg {
	case "RS256":
		h, ch = sha256.New, crypto.SHA256
	case "RS384":
		h, ch = sha512.New384, crypto.SHA384
	case "RS512":
		h, ch = sha512.New, crypto.SHA512
	case "ES256":
		h, ec, size = sha256.New, true, 32
	case "ES384":
		h, ec, size = sha512.New384, true, 48
	default:
		return invalid("signature algorithm %q is not allowed", t.Alg)
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
	d := h()
	d.Write(t.Signed)
	sum := d.Sum(nil)
	for _, k := range keys {
		if k.alg != "" && k.alg != t.Alg {
			continue
		}
		switch {
		case !ec && k.rsa != nil:
			if rsa.VerifyPKCS1v15(k.rsa, ch, sum, t.Signature) == nil {
				return nil
			}
		case ec && k.ec != nil && len(t.Signature) == 2*size && k.ec.Curve.Params().BitSize == size*8:
			r := new(big.Int).SetBytes(t.Signature[:size])
			s := new(big.Int).SetBytes(t.Signature[size:])
			if ecdsa.Verify(k.ec, sum, r, s) {
				return nil
			}
		}
	}
	return invalid("signature does not verify with the JWKS key %q", t.Kid)
}
