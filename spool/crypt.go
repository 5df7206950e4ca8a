package spool

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
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
