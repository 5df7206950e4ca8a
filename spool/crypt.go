package spool

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Cipher encrypts segment payloads at rest. The spool calls Seal once per
// segment with the segment header (everything but its CRCs) as additional
// data, so a header cannot be moved onto another payload or edited without
// Open failing. Implementations must be safe for concurrent use and must
// never reuse a nonce under one key; whatever they need to decrypt (nonce,
// tag) goes into their output.
type Cipher interface {
	// Overhead is the exact number of bytes Seal adds to a plaintext.
	Overhead() int
	// Seal appends the sealed form of plaintext to dst and returns it.
	Seal(dst, plaintext, additionalData []byte) ([]byte, error)
	// Open appends the plaintext of sealed to dst and returns it, or an
	// error when sealed or additionalData do not authenticate.
	Open(dst, sealed, additionalData []byte) ([]byte, error)
}

// AESGCM is AES-256-GCM with a random 96-bit nonce per segment, laid out
// as [12-byte nonce][ciphertext][16-byte tag].
//
// Random nonces are safe up to about 2^32 segments under one key (the
// birthday bound NIST SP 800-38D sets for random GCM nonces); at one segment
// per second that is over a century. Rotate keys long before.
type AESGCM struct {
	aead cipher.AEAD
}

// NewAESGCM returns the AES-256-GCM cipher for a 32-byte key.
func NewAESGCM(key []byte) (*AESGCM, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("spool: AES-256-GCM needs a 32-byte key, got %d bytes", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &AESGCM{aead: aead}, nil
}

const gcmNonceLen = 12

// Overhead implements Cipher.
func (c *AESGCM) Overhead() int { return gcmNonceLen + c.aead.Overhead() }

// Seal implements Cipher.
func (c *AESGCM) Seal(dst, plaintext, ad []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, gcmNonceLen)...)
	nonce := dst[start:]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("spool: nonce: %w", err)
	}
	return c.aead.Seal(dst, nonce, plaintext, ad), nil
}

// Open implements Cipher.
func (c *AESGCM) Open(dst, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < c.Overhead() {
		return nil, errors.New("sealed payload shorter than nonce and tag")
	}
	return c.aead.Open(dst, sealed[:gcmNonceLen], sealed[gcmNonceLen:], ad)
}

// KeyRing seals with its first cipher and opens with whichever of its
// ciphers authenticates: key rotation, where segments sealed under the
// previous key stay readable until they are shipped and deleted. Every
// cipher must have the same Overhead (AESGCM's always is).
type KeyRing struct {
	ciphers []Cipher
}

// NewKeyRing returns a ring that seals with current and also opens
// segments sealed by any of previous.
func NewKeyRing(current Cipher, previous ...Cipher) (*KeyRing, error) {
	r := &KeyRing{ciphers: append([]Cipher{current}, previous...)}
	for _, c := range previous {
		if c.Overhead() != current.Overhead() {
			return nil, errors.New("spool: ciphers of a key ring differ in overhead")
		}
	}
	return r, nil
}

// Overhead implements Cipher.
func (r *KeyRing) Overhead() int { return r.ciphers[0].Overhead() }

// Seal implements Cipher with the current key.
func (r *KeyRing) Seal(dst, plaintext, ad []byte) ([]byte, error) {
	return r.ciphers[0].Seal(dst, plaintext, ad)
}

// Open implements Cipher: the first key that authenticates wins (GCM
// authentication tells a wrong key with certainty).
func (r *KeyRing) Open(dst, sealed, ad []byte) ([]byte, error) {
	var first error
	for _, c := range r.ciphers {
		out, err := c.Open(dst, sealed, ad)
		if err == nil {
			return out, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// ParseKey reads a 256-bit key as an operator writes it to a file: 32 raw
// bytes, or 64 hex digits, or standard or URL-safe base64 (with or
// without padding); surrounding white space is ignored for the textual
// forms.
func ParseKey(data []byte) ([]byte, error) {
	if len(data) == 32 {
		// 32 hex digits are a 128-bit key written as text, not 32 random
		// bytes (which are all hex digits with odds of about 1e-34).
		if _, err := hex.DecodeString(string(data)); err == nil {
			return nil, errors.New("spool: the key file holds 32 hex digits, a 128-bit key; AES-256 needs 64 hex digits (or 32 raw bytes, or base64)")
		}
		return append([]byte(nil), data...), nil
	}
	text := strings.TrimSpace(string(data))
	if len(text) == 64 {
		if key, err := hex.DecodeString(text); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(text); err == nil && len(key) == 32 {
			return key, nil
		}
	}
	return nil, fmt.Errorf("spool: an encryption key is 32 bytes: raw, 64 hex digits or base64 (got %d bytes that are none of these)", len(data))
}

// KeyID names a key without revealing it: the first 8 bytes of the
// SHA-256 of "minikafka spool key" and the key, in hex. Shown in
// forward-status and the log so an operator can tell which key a broker
// runs with.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("minikafka spool key\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
